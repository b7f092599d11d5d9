"""Evidence that something is fixed to the first input, before a verdict says so.

A function right on the first input and wrong on a later one may hold a number of the first input
(T = 5 typed in, a mask of the first size, layers = 32), or may simply make a slip that happens to be
harmless on the first input (Mistral 7B has as many layers as heads). The verdict says "fixed to the
first input" only when one of these is seen:
- the answer on the later input is the one it gave on the first;
- a number of the later answer (a size of its shape, a number in its error message, the answer
  itself, a fitted factor or divisor) is a size of the first input and of no later one;
- the reference, given the later input with one of its numbers (a config entry, an int argument)
  set to the first input's, gives exactly the later answer.
"""

from __future__ import annotations

import math
import re

import numpy as np
import torch

from .diagnosis import fitted_divisor, fitted_factor
from .answers import close

_MAX_LIST = 200  # numbers read out of one list argument (the steps of a curve)


def sizes(args: tuple) -> set[int]:
    """The whole numbers an input is made of: tensor sizes, int arguments, a config's ints, list lengths and ints."""
    out: set[int] = set()
    for a in args:
        if isinstance(a, torch.Tensor):
            out |= set(a.shape)
        elif isinstance(a, bool):
            continue
        elif isinstance(a, int):
            out.add(a)
        elif isinstance(a, dict):
            out |= {v for v in a.values() if isinstance(v, int) and not isinstance(v, bool)}
        elif isinstance(a, (list, tuple)):
            out.add(len(a))
            out |= {v for v in a[:_MAX_LIST] if isinstance(v, int) and not isinstance(v, bool)}
    return out


def _near_size(c: float, foreign: set[int]) -> bool:
    """Is c one of the sizes, its square root or its inverse (a divisor or factor made of a size)?"""
    for s in foreign:
        for v in (s, math.sqrt(s), 1 / s, 1 / math.sqrt(s)):
            if abs(c - v) <= 1e-4 * max(1.0, abs(v)):
                return True
    return False


def _same_answer(a, b) -> bool:
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return close(a, b)
    try:
        return bool(a == b)
    except Exception:
        return False


def _numbers_in(value, expected, err, args: tuple) -> set[float]:
    """The numbers a wrong answer shows: its error's, its shape's, itself, a fitted factor or divisor."""
    if err is not None:
        return {float(s) for s in re.findall(r"\d+", str(err))}
    if isinstance(value, np.ndarray) and isinstance(expected, np.ndarray):
        if value.shape != expected.shape:
            return {float(s) for s in value.shape}
        found = {fitted_factor(value, expected)}
        if len(args) == 2 and all(isinstance(a, torch.Tensor) and a.ndim == 2 for a in args):  # weights of Q, K
            found.add(fitted_divisor(value, *(np.asarray(a, dtype=np.float64) for a in args)))
        return {c for c in found if c is not None}
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return {float(value)}
    return set()


def _substituted(reference, read, first: tuple, later: tuple, value, same) -> bool:
    """Does the reference give `value` on the later input with one of its numbers set to the first input's?"""
    for i, (a, b) in enumerate(zip(first, later)):
        tries = []
        if isinstance(a, dict) and isinstance(b, dict):
            tries = [{**b, k: a[k]} for k in b if k in a and a[k] != b[k] and isinstance(b[k], int)]
        elif isinstance(a, int) and isinstance(b, int) and not isinstance(a, bool) and a != b:
            tries = [a]
        for t in tries:
            args = later[:i] + (t,) + later[i + 1:]
            try:
                got, problem = read(reference(*args), args)
            except Exception:
                continue
            if not problem and same(got, value, args):
                return True
    return False


def fixed_to_first(ex, n: int, first_answer, value, expected, err) -> bool:
    """Is there evidence that the student's answer on input n holds something of the first input?"""
    first, later = ex.cases[0][1], ex.cases[n][1]
    if err is None and first_answer is not None and _same_answer(value, first_answer) \
            and not _same_answer(expected, first_answer):
        return True
    foreign = {s for s in sizes(first) - sizes(later) if s > 1}
    if any(_near_size(c, foreign) for c in _numbers_in(value, expected, err, later)):
        return True
    if err is None and not ex.tensor:
        return _substituted(ex.reference, ex.read, first, later, value, ex.same)
    return False
