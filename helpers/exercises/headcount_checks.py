"""Checks of notebook 04: the head size and parameter count, and the shape of the concatenation."""

from __future__ import annotations

import numbers

import torch

from ..analysis.headcount import head_shapes
from ..core.attention import attention_param_count
from .grading import call_student


# --- exercise checks -------------------------------------------------------------------------
def _whole_numbers(got) -> tuple[int, ...] | None:
    """The answer as a tuple of whole numbers, or None when it is not one (5, "96", a tensor …)."""
    if isinstance(got, torch.Tensor) or not isinstance(got, (tuple, list, torch.Size)):
        return None
    if not all(isinstance(x, numbers.Integral) and not isinstance(x, bool) for x in got):
        return None
    return tuple(int(x) for x in got)


def _verdict(name: str, fn, cases, want, hints) -> None:
    """Run fn on every case; print one line: pass, not attempted, raised, or the likely mistake."""
    for case in cases:
        got, problem = call_student(name, fn, *case)
        if problem:
            print(problem)
            return
        numbers = _whole_numbers(got)
        if numbers is None:
            print(f"✗ {name}{case}: expected a tuple of whole numbers such as {want(*case)}, "
                  f"got {type(got).__name__} {got!r:.40}.")
            return
        expected = want(*case)
        if numbers != expected:
            print(f"✗ {name}{case}: expected {expected}, got {numbers}; {hints(case, numbers, expected)}.")
            return
    print(f"✓ {name}: right for all {len(cases)} cases.")


def check_head_size_and_params(fn) -> None:
    """Exercise: fn(width, n_heads) -> (head size, attention parameters of the layer, biases included)."""
    def hints(case, got, want):
        (width, n), (size, params) = case, (list(got) + [None, None])[:2]
        d = width // n
        one_head = 3 * (width * d + d) + d * width
        if size == n and n != d:
            return "that is the number of heads; the head size is width / heads"
        if size != d:
            return "the head size is width / heads"
        if params == attention_param_count(width, n) - width:
            return "you left out the output bias: add width (one bias per output feature)"
        if params in (one_head, one_head + width) and n > 1:
            return "that is one head's share: multiply by the number of heads (and add the output bias)"
        if params == 4 * width ** 2:
            return "you left out the biases: 3·width for Q, K, V together and width for the output"
        return "per head 3·(width·d + d) for Q, K, V and d·width for its rows of W_O; then add width"
    return _verdict("head_size_and_params", fn, [(96, 1), (96, 4), (96, 12), (768, 12), (64, 8)],
                    lambda w, n: (w // n, attention_param_count(w, n)), hints)


def check_concat_shape(fn) -> None:
    """Exercise: fn(n_tokens, width, n_heads) -> shape of the concatenated head outputs."""
    def hints(case, got, want):
        T, width, n = case
        if got == (T, width // n):
            return "that is one head's output; concatenation puts all heads side by side"
        if len(got) == 3:
            return "that keeps a heads axis (stacking); concatenating joins the heads' columns"
        if got == (width, T):
            return "rows and columns swapped: one row per token"
        if got == (T, width * n):
            return "each head's output is width / heads long, so the heads together give width columns"
        return "rows are tokens, columns are heads × head size"
    return _verdict("concat_shape", fn, [(5, 96, 12), (9, 96, 1), (4, 768, 12), (7, 96, 3)],
                    lambda T, w, n: head_shapes(w, n, T)["concatenation"], hints)
