"""Last-resort diagnoses fitted from the answer itself, for slips no catalogue can list one by one.

An Exercise's `explain` runs when no catalogued mistake matched, the answer is finite and its shape
is right. Two fits:
- `scale_or_factor` (attention weights): rows that are a softmax of Q·Kᵀ/c for some other c (÷√(d+1),
  ÷ 4.5, …) say which number the scores were divided by, and which one they should be;
- `factor` (any tensor answer): every number is the same multiple of the right one (a mean where a
  sum belongs, a factor applied twice, …).
Otherwise the usual "numbers differ" line. Each returns (line, named?, code): the codes fitted_divisor
and fitted_factor; an answer right on the first input gets the engine's "It was right on the first
input …: something is fixed" too.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

ONE_WAY = "the numbers are off in one clear way:"
FIT_TOL = 1e-6  # relative: a fit explains the answer only when it reproduces it to about float32 rounding


def differ(value: np.ndarray, expected: np.ndarray) -> tuple[str, bool]:
    diff = float(np.abs(value - expected).max())
    return f"right shape but the numbers differ from the reference (largest difference {diff:.3g}).", False


def _ratio(c: float) -> str:
    """' (= 2/3)' when c is a simple fraction, else ''."""
    f = Fraction(c).limit_denominator(24)
    return f" (= {f.numerator}/{f.denominator})" if f.denominator > 1 and abs(float(f) - c) < 1e-6 * max(1, abs(c)) else ""


def fitted_factor(value: np.ndarray, expected: np.ndarray) -> float | None:
    """c when value = c · expected to float32 rounding (c ≠ 1, c ≠ 0), else None."""
    ee = float((expected * expected).sum())
    if ee == 0.0 or value.shape != expected.shape:
        return None
    c = float((value * expected).sum()) / ee
    scale = float(np.abs(expected).max()) * max(abs(c), 1.0)
    if c == 0.0 or abs(c - 1.0) < 1e-3 or float(np.abs(value - c * expected).max()) > FIT_TOL * 10 * scale:
        return None
    return c


def factor(hint: str = "a mean where a sum belongs, or a factor applied twice?"):
    """An explain for exercises whose usual slips include a constant factor."""
    def explain(value, expected, args) -> tuple:
        c = fitted_factor(value, expected)
        if c is None:
            return differ(value, expected)
        line = (f"{ONE_WAY} every number of your answer is {c:.4g}{_ratio(c)} × the right one, so a constant "
                f"factor is off ({hint}).")
        return line, False, "fitted_factor"
    return explain


def fitted_divisor(weights: np.ndarray, Q: np.ndarray, K: np.ndarray) -> float | None:
    """c when each row of `weights` is softmax(Q·Kᵀ / c) over the keys, to float32 rounding; else None."""
    if weights.ndim != 2 or not (weights > 0).all() or np.abs(weights.sum(-1) - 1).max() > 1e-5:
        return None
    scores = Q @ K.T
    if scores.shape != weights.shape:
        return None
    logs = np.log(weights)
    s, lw = scores - scores.mean(-1, keepdims=True), logs - logs.mean(-1, keepdims=True)
    ss = float((s * s).sum())
    if ss == 0.0:
        return None
    a = float((s * lw).sum()) / ss  # lw ≈ a · s, a = 1 / c
    if a == 0.0 or float(np.abs(lw - a * s).max()) > 1e-4 * max(1.0, float(np.abs(lw).max())):
        return None
    return 1.0 / a


def scale_or_factor(value, expected, args) -> tuple:
    """attention_weights: the number the scores were divided by, if one number explains the rows."""
    Q, K = (np.asarray(a, dtype=np.float64) for a in args)
    c = fitted_divisor(value, Q, K)
    d = Q.shape[-1]
    if c is None:
        return factor()(value, expected, args)
    if c < 0:
        return (f"{ONE_WAY} your weights are a softmax of the scores divided by {c:.4g}, "
                f"a negative number, which turns the ranking upside down: divide by √d = {math.sqrt(d):.4g} "
                f"(d = Q.shape[-1] = {d})."), False, "fitted_divisor"
    return (f"{ONE_WAY} your weights are a softmax of the scores divided by {c:.4g}, not "
            f"by √d = {math.sqrt(d):.4g} (d = Q.shape[-1] = {d}): divide Q @ K.T by math.sqrt(d) exactly, nothing "
            f"added or rounded."), False, "fitted_divisor"
