"""What a wrong answer is, beyond the catalogue: diagnoses that hold for any mistake of a kind.

The catalogue knows slips one by one; a fresh class makes others. Each diagnosis is said with what was seen:
- relations (`describe`, `property_line`): the right numbers with the axes in another order or in
  another layout; a part of the right answer, or it summed or averaged over an axis; the right answer
  plus a constant; weights normalised over the wrong axis; the wrong part of a causal map masked; which
  head's block is wrong, or every head the same; where NaN or inf appear. The last resort says which
  property failed ("row 3 of your weights sums to 1.7; every row must sum to 1"), never only "numbers differ";
- fitted constants (an Exercise's `explain`: `scale_or_factor`, `factor`): rows that are a softmax of
  Q·Kᵀ/c for another c, or every number the same multiple of the right one, said with the value;
- a library error the student's code raised, in one line they can act on (`translate_error`);
- a notebook variable the function reads instead of its argument (`told`): only tensors' shapes, ints and
  list lengths are read (sandbox.reads), nothing of the student's is called;
- "fixed to the first input" (`fixed_to_first`), said only with evidence: a function right on the first
  input and wrong on a later one may hold a number of the first input (T = 5 typed in, layers = 32), or
  make a slip harmless on the first input (Mistral 7B has as many layers as heads). Evidence is the same
  answer as on the first input; a number of the later answer (a size of its shape, a number in its error,
  the answer itself, a fitted factor or divisor) that is a size of the first input and of no later one;
  or the reference giving exactly the later answer with one of its numbers set to the first input's.
"""

from __future__ import annotations

import dis
import itertools
import math
import re
import sys
import traceback
import types
from fractions import Fraction

import numpy as np
import torch

from .sandbox import data_of, functions, reads
from .verdict import close

_TOL = 1e-4
_MAX_LIST = 200  # numbers read out of one list argument (the steps of a curve)


def _shape(shape) -> str:
    return "[" + " × ".join(str(s) for s in shape) + "]"


def _spans(indices) -> str:
    """[0, 1, 2, 5] -> '0–2 and 5'."""
    indices, parts, start = list(indices), [], None
    for i, x in enumerate(indices):
        if start is None:
            start = x
        if i + 1 == len(indices) or indices[i + 1] != x + 1:
            parts.append(str(start) if start == x else f"{start}–{x}")
            start = None
    return ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1] if parts else ""


def _runs(indices: list[int]) -> int:
    """How many unbroken runs the sorted indices form ([0, 1, 2, 5] is two)."""
    return 1 + sum(b != a + 1 for a, b in zip(indices, indices[1:]))


def _some(name: str, indices) -> str:
    """'row 2 is' / 'rows 0–1 and 3 are'."""
    indices = list(indices)
    return f"{name} {_spans(indices)} is" if len(indices) == 1 else f"{name}s {_spans(indices)} are"


def _is_weights(expected: np.ndarray) -> bool:
    """Rows of probabilities: every number ≥ 0 and each row (last axis) sums to 1."""
    return expected.ndim >= 2 and bool((expected >= -_TOL).all()) and bool(np.allclose(expected.sum(-1), 1, atol=1e-3))


# --- the relations ----------------------------------------------------------------------------------------
def _nan_places(value, expected, args):
    bad = ~np.isfinite(value)
    if not bad.any() or not np.isfinite(expected).all() or bad.all():
        return None
    first = tuple(int(i) for i in np.argwhere(bad)[0])
    what = "NaN" if np.isnan(value).any() else "inf"
    line = f"your answer holds {what} at {int(bad.sum())} of {bad.size} places, the first at {list(first)}"
    if value.ndim >= 2:
        rows = bad.reshape(-1, value.shape[-2], value.shape[-1]).all(-1).any(0)
        if rows.any():
            line += (f"; row {_spans(np.flatnonzero(rows))} is {what} throughout: every score of such a row was -inf "
                     f"before the softmax (a mask that hides a word's own position too?)")
    return line + ". Follow one step at a time on a small input and print where it first appears.", "nan_or_inf"


def _permuted(value, expected, args):
    if value.ndim != expected.ndim or value.ndim < 2 or sorted(value.shape) != sorted(expected.shape):
        return None
    for perm in itertools.permutations(range(value.ndim)):
        if perm == tuple(range(value.ndim)):
            continue
        moved = expected.transpose(perm)
        if moved.shape == value.shape and close(value, moved):
            if value.ndim == 2:
                return (f"your answer is the right one transposed ({_shape(value.shape)}, rows and columns swapped): "
                        f"rows are {'queries' if _is_weights(expected) else 'words'}; drop the extra .T or add the "
                        f"missing one."), "axes_permuted"
            return (f"your answer holds the right numbers with its axes in another order: {_shape(value.shape)}, "
                    f"where {_shape(expected.shape)} is right (axis i of yours is axis {list(perm)}[i] of the right "
                    f"one): a transpose missing, one too many, or .T on a tensor of more than 2 axes."), "axes_permuted"
    return None


def _wrong_layout(value, expected, args):
    if value.size != expected.size or value.size < 2 or sorted(value.shape) != sorted(expected.shape):
        return None  # another shape: a size is wrong (a head count of 12, not 3), which no layout explains
    if not close(np.sort(value.ravel()), np.sort(expected.ravel())):
        return None
    for perm in itertools.permutations(range(expected.ndim)):
        if close(value.ravel(), expected.transpose(perm).ravel()) and perm != tuple(range(expected.ndim)):
            return (f"your answer holds exactly the right numbers in the wrong layout: they are in the order of the "
                    f"right answer with its axes moved to {list(perm)}, then reshaped; a reshape (or .view) cannot move "
                    f"an axis: transpose first, then reshape (or the other way round)."), "wrong_layout"
    return (f"your answer holds exactly the right numbers but in another order ({_shape(value.shape)}): check which "
            f"axis each reshape, transpose and concatenation works on."), "wrong_layout"


def _part(value, expected, args):
    if value.size >= expected.size or expected.ndim < 2:
        return None
    for axis in range(expected.ndim):
        for i in range(expected.shape[axis]):
            if close(value, np.take(expected, i, axis=axis)):
                return (f"that is one slice of the answer (index {i} of axis {axis}, {_shape(value.shape)}): return the "
                        f"whole answer, {_shape(expected.shape)}."), "part_of_answer"
    return None


def _reduced(value, expected, args):
    if expected.ndim < 2:
        return None
    for axis in range(expected.ndim):
        if expected.shape[axis] == 1 and close(value, np.squeeze(expected, axis)):  # nothing summed: an axis of 1 left out
            return (f"that is the right answer without its axis {axis} (of length 1, such as the batch): keep it, "
                    f"{_shape(expected.shape)}."), "reduced"
        for name, fn in (("summed", np.sum), ("averaged", np.mean)):
            reduced = fn(expected, axis=axis)
            if close(value, reduced) or (value.shape == expected.shape and close(value, np.broadcast_to(
                    fn(expected, axis=axis, keepdims=True), expected.shape))):
                return (f"that is the right answer {name} over axis {axis}: keep that axis, "
                        f"{_shape(expected.shape)}."), "reduced"
    return None


def _offset(value, expected, args):
    if value.shape != expected.shape or value.size < 2:
        return None
    diff = value - expected
    c = float(np.median(diff))
    if abs(c) > 1e-3 and close(value, expected + c):
        return (f"every number of your answer is the right one {'+' if c > 0 else '−'} {abs(c):.4g}: a constant is "
                f"added (or subtracted) that does not belong."), "constant_offset"
    return None


def _wrong_axis(value, expected, args):
    if value.shape != expected.shape or not _is_weights(expected) or (value < -_TOL).any():
        return None
    rows = value.sum(-1)
    if np.allclose(rows, 1, atol=1e-3):
        return None
    for axis in range(value.ndim - 1):
        if np.allclose(value.sum(axis), 1, atol=1e-3):
            worst = np.unravel_index(int(np.argmax(np.abs(rows - 1))), rows.shape)
            more = (" That alone does not make it right: the scores before the softmax differ too."
                    if _scores_differ(value, expected) else "")
            return (f"your weights are normalised over the wrong axis: they sum to 1 over axis {axis - value.ndim} "
                    f"(the columns), and a row does not (row {list(int(i) for i in worst)} sums to "
                    f"{float(rows[worst]):.3g}); take the softmax over the keys, dim=-1.{more}"), "normalised_wrong_axis"
    return None


def _scores_differ(value, expected) -> bool:
    """Are these weights a softmax of other scores, not only over another axis? softmax(S) over columns and over
    rows differ in log by a row term plus a column term, so anything else in log(value / expected) is the scores
    (three slips at once were named as the axis alone, sweep 30). Not told where a right weight is 0 (masked)."""
    if (expected <= _TOL).any():
        return False
    if (value <= 0).any():  # underflowed: scores far larger than the right ones, whose weights are all above 0
        return True
    d = np.log(value.astype(np.float64)) - np.log(expected.astype(np.float64))
    rest = d - d[..., :, :1] - d[..., :1, :] + d[..., :1, :1]
    return bool(np.abs(rest).max() > 1e-3)


def _causal(expected) -> bool:
    T = expected.shape[-1]
    if expected.ndim < 2 or expected.shape[-2] != T or T < 3:
        return False
    above = np.triu(np.ones((T, T), dtype=bool), 1)
    return bool(np.abs(expected[..., above]).max() < _TOL and np.abs(expected[..., ~above]).min() > _TOL)


def _mask(value, expected, args):
    if value.shape != expected.shape or not _causal(expected) or not np.isfinite(value).all():
        return None
    T = value.shape[-1]
    above, below = np.triu(np.ones((T, T), dtype=bool), 1), np.tril(np.ones((T, T), dtype=bool), -1)
    diagonal = np.eye(T, dtype=bool)
    zero = np.abs(value) < _TOL
    if zero[..., below].all() and not zero[..., above].all():
        return ("your weights are 0 below the diagonal and not above it: the wrong triangle is masked; hide the later "
                "words, above the diagonal (torch.ones(T, T, dtype=torch.bool).triu(1))."), "mask_pattern"
    if zero[..., above].all() and zero[..., diagonal].all():
        return ("your weights are 0 on the diagonal too: a word may look at itself; mask with .triu(1), not "
                ".triu(0)."), "mask_pattern"
    if not zero[..., above].all():
        q, k = next((int(i), int(j)) for i, j in np.argwhere(above) if not zero[..., i, j].all())
        return (f"your weights are not 0 above the diagonal: word {q} gives weight to word {k}, a later word. Put -inf "
                f"in the scores above the diagonal before the softmax (0 or -1 there is not enough)."), "mask_pattern"
    return None


def _head_blocks(value, expected, args, batch_first: bool = False):
    """(value, expected) as (heads, …) blocks, when the answer has a head axis or side-by-side head columns
    (`batch_first`: a 3-D answer's first axis is a batch's sentences, which are no heads)."""
    if value.shape != expected.shape:
        return None
    if value.ndim == 3 and value.shape[0] > 1 and not batch_first:
        return value, expected, "head"
    first = args[0] if args else None
    if value.ndim == 2 and getattr(first, "ndim", 0) == 3 and value.shape[1] == first.shape[0] * first.shape[2]:
        H = first.shape[0]
        split = lambda a: a.reshape(a.shape[0], H, -1).transpose(1, 0, 2)  # noqa: E731 (T, H·d) -> (H, T, d)
        return split(value), split(expected), "head block"
    return None


def _heads(value, expected, args, batch_first: bool = False):
    blocks = _head_blocks(value, expected, args, batch_first)
    if blocks is None:
        return None
    mine, right, what = blocks
    H = mine.shape[0]
    if all(close(mine[h], mine[0]) for h in range(H)) and not all(close(right[h], right[0]) for h in range(H)):
        return (f"every {what} of your answer is the same: each of the {H} heads must use its own part (head h reads "
                f"its own slice or its group's key/value head)."), "heads_equal"
    good = [h for h in range(H) if close(mine[h], right[h])]
    if good:
        bad = [h for h in range(H) if h not in good]
        return (f"{_some(what, good)} right, {_some(what, bad)} not: look at what differs for those heads (which slice, which "
                f"key/value head, which block of columns)."), "head_blocks"
    return None


CODES = {"nan_or_inf", "axes_permuted", "wrong_layout", "part_of_answer", "reduced", "constant_offset",
         "normalised_wrong_axis", "mask_pattern", "heads_equal", "head_blocks"}
PROBES = (_nan_places, _permuted, _wrong_layout, _part, _reduced, _offset, _wrong_axis, _mask, _heads)


def describe(value, expected, args: tuple, batch_first: bool = False) -> tuple[str, str] | None:
    """(line, engine code) for the first relation to the right answer that the wrong answer shows, else None."""
    if not (isinstance(value, np.ndarray) and isinstance(expected, np.ndarray)) or not value.size:
        return None
    with np.errstate(all="ignore"):
        for probe in PROBES:
            found = probe(value, expected, args, batch_first) if probe is _heads else probe(value, expected, args)
            if found:
                return found
    return None


# --- the last resort ---------------------------------------------------------------------------------------
def property_line(value: np.ndarray, expected: np.ndarray, batch_first: bool = False) -> str:
    """Which property a same-shape wrong answer fails, or where it is right and where not (`batch_first`: the
    first axis is a batch's sentences)."""
    with np.errstate(all="ignore"):
        if _is_weights(expected):
            if (value < -_TOL).any():
                at = [int(i) for i in np.unravel_index(int(np.argmin(value)), value.shape)]
                return (f"your weights hold negative numbers ({float(value[tuple(at)]):.3g} at {at}): weights come from "
                        f"a softmax, every one ≥ 0.")
            rows = value.sum(-1)
            if not np.allclose(rows, 1, atol=1e-3):
                at = [int(i) for i in np.unravel_index(int(np.argmax(np.abs(rows - 1))), rows.shape)]
                return (f"row {at[-1] if len(at) == 1 else at} of your weights sums to {float(rows[tuple(at)]):.3g}; "
                        f"every row must sum to 1 (a softmax over dim=-1 as the last step).")
        if close(value, expected, 2e-2, 2e-2):  # every number right to 2-3 digits: nothing is computed wrong
            return ("your numbers are right to about three digits everywhere, but no further: a step in half "
                    "precision (.half(), float16, bfloat16) or a rounding inside your function; keep float32 "
                    "throughout.")
        for axis, name in ((0, "row"), (value.ndim - 1, "column")) if value.ndim >= 2 else ((0, "number"),):
            good = [i for i in range(value.shape[axis])
                    if close(np.take(value, i, axis=axis), np.take(expected, i, axis=axis))]
            bad = [i for i in range(value.shape[axis]) if i not in good]
            if good and bad and min(_runs(good), _runs(bad)) <= 3:  # a pattern, not right by chance here and there
                if axis == 0 and batch_first:  # x[1] answered with x[0]'s output, or a loop over the batch cut short
                    return (f"of the batch's sentences, {_some('sentence', good)} right and {_some('sentence', bad)} "
                            f"not: each sentence's output must come from its own x[b], and the layer must work on "
                            f"the whole batch at once (B, T, D = x.shape).")
                return (f"in your answer {_some(name, good)} right, {_some(name, bad)} not: follow how "
                        f"those are computed (a loop's range, a mask, an index).")
        diff = np.abs(value - expected)
        at = [int(i) for i in np.unravel_index(int(np.nanargmax(diff)), diff.shape)]
        return (f"right shape, but the numbers differ everywhere: the largest difference is at {at}, "
                f"{float(value[tuple(at)]):.4g} where {float(expected[tuple(at)]):.4g} is right.")


# --- fitted constants: the explain of an Exercise whose usual slips include one -------------------------
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


def masked_scale(value, expected, args) -> tuple:
    """masked_weights: the number the scores, which come in scaled, were divided by again, if one number explains
    every row (an extra ÷ 8 read "row 0 is right … a loop's range, a mask, an index", sweep 31)."""
    scores = np.asarray(args[0], dtype=np.float64)
    T = scores.shape[-1]
    keep = np.tril(np.ones((T, T), dtype=bool))
    if value.shape != scores.shape or value.ndim != 2 or T < 3 or np.abs(value[~keep]).max() > 1e-6 or \
            (value[keep] <= 0).any():
        return differ(value, expected)
    pairs = [(scores[i, :i + 1] - scores[i, :i + 1].mean(), np.log(value[i, :i + 1]) - np.log(value[i, :i + 1]).mean())
             for i in range(1, T)]  # each row's kept scores and log weights, centred: log w ≈ a · s, a = 1 / c
    ss = sum(float((s * s).sum()) for s, _ in pairs)
    a = sum(float((s * lw).sum()) for s, lw in pairs) / ss if ss else 0.0
    if a == 0.0 or abs(a - 1) < 1e-3 or max(float(np.abs(lw - a * s).max()) for s, lw in pairs) > 1e-4:
        return differ(value, expected)
    scaled = f"divided by {1 / a:.4g}" if a < 1 else f"multiplied by {a:.4g}"
    return (f"{ONE_WAY} your weights are a softmax of the masked scores {scaled}: the scores come in scaled "
            f"already (÷ √d was done before this step), so mask them and take the softmax as they are."), \
        False, "fitted_divisor"


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
    if abs(c - 2 * d) < 1e-3 * d:  # `/ d ** 1/2` reads as / (d ** 1) / 2: ** binds tighter than /
        return (f"{ONE_WAY} your weights are a softmax of the scores divided by {c:.4g} = 2·d, not by √d = "
                f"{math.sqrt(d):.4g} (d = Q.shape[-1] = {d}). If you wrote `/ d ** 1/2`: ** goes before /, so it "
                f"divides by d and then by 2; write / d ** 0.5 or / math.sqrt(d)."), False, "fitted_divisor"
    times = Fraction(c / math.sqrt(d)).limit_denominator(4)  # 2·√d: a softmax temperature, or √d taken twice
    of_root = f" = {times}·√d" if abs(float(times) - c / math.sqrt(d)) < 1e-4 and 0 < times <= 4 else ""
    return (f"{ONE_WAY} your weights are a softmax of the scores divided by {c:.4g}{of_root}, not "
            f"by √d = {math.sqrt(d):.4g} (d = Q.shape[-1] = {d}): divide Q @ K.T by math.sqrt(d) exactly, nothing "
            f"added or rounded."), False, "fitted_divisor"


# --- an error the student's code raised ------------------------------------------------------------
NOT_IMPORTED = "your function uses {0}, which is not imported where it runs: add `{import_line}` to the exercise's cell."
_ERRORS = [  # (pattern, the engine's code, the line)
    (r"mat1 and mat2 shapes cannot be multiplied \((\d+)x(\d+) and (\d+)x(\d+)\)", "matmul_shapes",
     "a matrix product of [{0} × {1}] and [{2} × {3}] does not fit (the inner sizes must be equal): a transpose "
     "(.T) missing, or one too many?"),
    (r"shapes \((\d+),(\d+)\) and \((\d+),(\d+)\) not aligned", "matmul_shapes",  # numpy's words for it
     "a matrix product of [{0} × {1}] and [{2} × {3}] does not fit (the inner sizes must be equal): a transpose "
     "(.T) missing, or one too many?"),
    (r"matmul: Input operand 1 has a mismatch in its core dimension 0.*\(size (\d+) is different from (\d+)\)",
     "matmul_shapes", "a matrix product whose inner sizes differ ({1} and {0}): a transpose (.T) missing, or one too "
     "many?"),
    (r"not linked with support for (\w+) devices|Torch not compiled with (\w+) enabled|no (\w+) GPUs? (?:are )?"
     r"available|Found no NVIDIA driver", "device_missing",
     "your function moves tensors to a device this machine does not have (.to('mps'), .cuda()): keep them where "
     "the inputs are (no .to(...) or .cuda() in the function), or use x.device."),
    (r"index (-?\d+) is out of bounds for dimension (\d+) with size (\d+)", "index_past_end",
     "index {0} is past the end of axis {1}, which has {2} entries here: a count written in (range(12)) or one too "
     "many? Take it from this input's shape ({sizes})."),
    (r"size of tensor a \((\d+)\) must match the size of tensor b \((\d+)\)", "size_mismatch",
     "two tensors of sizes {0} and {1} met on one axis: check which axes you transposed, split or repeated (.T "
     "reverses every axis of a 3-D or 4-D tensor: use .transpose(-2, -1)), and take each size from this input's "
     "shape ({sizes})."),
    (r"can't start new thread", "threads_left_running",
     "your function starts threads that are still running when it returns, and no more could be started (a grader "
     "allows at most 256 processes and threads): join each one (t.join()) before returning, or compute without "
     "threads."),
    (r"view size is not compatible with input tensor's size and stride", "view_after_transpose",
     ".view() cannot read this tensor as it lies in memory (after a transpose, or a slice such as .split() or "
     ".chunk() made): use .reshape(...) (or .contiguous().view(...))."),
    (r"shape '\[(.*)\]' is invalid for input of size (\d+)", "reshape_size",
     "reshape to [{0}] cannot hold the input's {1} numbers: compute each size from the input's shape."),
    (r"Dimension out of range \(expected to be in range of \[(-?\d+), (-?\d+)\], but got (-?\d+)\)",
     "axis_out_of_range", "axis {2} does not exist here (valid: {0} .. {1}): check how many axes this tensor has."),
    (r"expected (?:m1 and m2 to have the same dtype|scalar type \w+ but found \w+)", "dtype_mixed",
     "float32 and float64 mixed in one product: keep the inputs' dtype (no .double())."),
    (r"masked_fill_? only supports boolean masks", "mask_not_bool",
     "the mask must be boolean: e.g. torch.ones(T, T, dtype=torch.bool).triu(1)."),
    (r"tuple of ints,\s*but got float|must be tuple of ints, but found element of type float", "float_size",
     "a size is a float (D / n_heads gives 4.0): use whole-number division, D // n_heads."),
    (r'"bitwise_xor\w*" not implemented for|unsupported operand type\(s\) for \^: \'(?:int|float)\' and \'float\'',
     "xor_not_power", "^ is XOR in Python, not a power: write d ** 0.5 or math.sqrt(d) (and divide by the whole "
     "root: Q @ K.T / d ** 0.5)."),
    (r"only integers, slices .* are valid indices \(got float\)|indices must be integers or slices, not float",
     "float_index", "an index is a float (h / group gives 1.0): use whole-number division, h // group, for an index."),
    (r"'Tensor' object is not callable", "tensor_called",
     "a tensor was called like a function: use @ or .softmax(dim=-1), not t(...)."),
    (r"unsupported operand type\(s\) for [^:]*: 'module' and|and 'module'", "helpers_module",
     "H is the helpers module (import helpers as H), not a number of heads: name the head count n_heads "
     "and read it from the input, e.g. n_heads = Q.shape[0]."),
    (r"unsupported operand type\(s\) for divmod\(\): 'Tensor'", "divmod_tensor",
     "divmod() does not take a tensor: turn the index into a number first, divmod(int(index), n_heads)."),
    (r"(\w+)\(\): argument '\w+' \(position 1\) must be Tensor, not (int|float)", "torch_fn_on_number",
     "torch.{0}() takes a tensor, not a plain {1}: use math.{0}(d) or d ** 0.5 for a number."),
    (r"'dict' object has no attribute '(\w+)'", "dict_attribute",
     "config is a dict: read config['{0}'], not config.{0}."),
    (r"missing (\d+) required positional argument", "extra_parameter",
     "your function asks for {0} argument(s) the check does not pass: keep the parameters the exercise's cell gives it."),
    (r"^the process running your function stopped answering", "runner_lost",  # runner.Lost, in the grader
     "your function's process stopped answering the grader as it ran (it forked, ended its process, or wrote "
     "to a pipe it does not own): compute the answer with tensor operations only."),
    (r"^EOF when reading a line", "input_called",
     "your function calls input(), which waits for someone to type: take every value from its arguments."),
    (r"name '(torch|np|numpy|math|F|nn)' is not defined", "module_not_imported", NOT_IMPORTED),
    (r"name '(\w+)' is not defined", "name_not_defined",
     "your function uses {0}, which is not defined in it: compute it from the inputs ({sizes})."),
]


IMPORTS = {"torch": "import torch", "np": "import numpy as np", "numpy": "import numpy", "math": "import math",
           "F": "import torch.nn.functional as F", "nn": "from torch import nn"}  # a module's usual import line


def _raised_in_multiprocessing(err: BaseException) -> bool:
    # A Pool started inside a check fails in ways that name nothing the student wrote (EBADF from
    # the resource tracker, a pickling error): the traceback's frames are the one reliable sign.
    frames = traceback.extract_tb(err.__traceback__) if err.__traceback__ else []
    return any(re.search(r"[/\\](multiprocessing|concurrent[/\\]futures)[/\\]", f.filename) for f in frames)


def translate_error(err: BaseException, label: str, sizes: str = "e.g. T = x.shape[0]") -> tuple[str, str]:
    """(one line, the engine's code) for an error no catalogued mistake raises: a known message
    explained ("error.<what>"), else the raw line ("raised")."""
    text = str(err).splitlines()[0] if str(err) else ""
    if _raised_in_multiprocessing(err):
        return (f"your function starts worker processes (multiprocessing), which the check does not run: compute "
                f"every row at once with tensor operations, as the lesson does. (inputs: {label}; raised "
                f"{type(err).__name__})"), "error.processes_started"
    for pattern, code, says in _ERRORS:
        found = re.search(pattern, text)
        if found:
            module = found.group(1) if found.groups() else ""
            if code == "name_not_defined" and module in sys.stdlib_module_names:  # `os` used, never imported
                code, says = "module_not_imported", NOT_IMPORTED
            said = says.format(*found.groups(), sizes=sizes, import_line=IMPORTS.get(module, f"import {module}"))
            line = f"{said} (inputs: {label}; raised {type(err).__name__})"
            return line, f"error.{code}"
    line = f"your function raised {type(err).__name__}: {text[:200]} (inputs: {label})".replace(":  (", " (")
    return line, "raised"


# --- a notebook variable the function reads -------------------------------------------------------
def _show(kind: str, size) -> str:
    if kind == "tensor":
        return "[" + " × ".join(str(s) for s in size) + "]"
    return f"(= {size})" if kind == "int" else f"({size} items)"


def _size_set(kind: str, size) -> set[int]:
    return set(size) if kind == "tensor" else {size}


# The names the lessons import modules as: a notebook variable with one of them hides the module.
MODULE_NAMES = {"torch": "import torch", "np": "import numpy as np", "numpy": "import numpy", "math": "import math",
                "F": "import torch.nn.functional as F", "nn": "from torch import nn"}


def say(source, case_args: tuple, broken: set[int], params: list[str], sizes: str) -> str | None:
    """The line naming the notebook variable behind a broken size (or, broken empty, the ones read)."""
    used = [(name, *data_of(value)) for name, value in reads(source)]
    if not used:
        return None
    for name, kind, size in used:
        if name in MODULE_NAMES:  # `torch = 1` in a cell: torch.softmax then fails in every function
            held = {"int": str(size), "tensor": f"a tensor {_show(kind, size)}", "list": f"a list of {size} items"}
            return (f"`{name}` is {held[kind]} in this notebook, not the module: a cell set "
                    f"`{name} = …`, which hides it; run `{MODULE_NAMES[name]}` again and give that variable "
                    f"another name.")
    own = set()
    for a in case_args:
        d = data_of(a)
        if d is not None:
            own |= _size_set(*d)
        elif isinstance(a, dict):
            own |= {v for v in a.values() if isinstance(v, int)}
    foreign = {s for s in broken if s not in own and s > 1}
    if broken:
        hits = [u for u in used if _size_set(u[1], u[2]) & foreign and _size_set(u[1], u[2]) - own]
        if not hits:
            return None
        used = hits
    name, kind, size = used[0]
    argument = dict(zip(params, case_args)).get(name.split(".")[-1])
    arg = data_of(argument) if argument is not None else None
    if arg is not None and arg[0] == kind:
        return (f"your function uses the notebook's `{name}` {_show(kind, size)}, not its argument "
                f"`{name.split('.')[-1]}` {_show(*arg)}: use the argument, and compute every size from the inputs "
                f"({sizes}).")
    what = ", ".join(f"`{n}` {_show(k, s)}" for n, k, s in used[:3])
    if isinstance(source, (type, torch.nn.Module)):
        return (f"your class uses the notebook's {what}: a layer must work from what it was built with (dim, heads: "
                f"keep them as self.heads …) and from x ({sizes}).")
    return (f"your function uses the notebook's {what}, not something of its own inputs: a function must work from "
            f"its arguments alone, so compute this from them ({sizes}).")


def _params(source) -> list[str]:
    fns = functions(source)
    code = next((f.__code__ for f in fns if f.__code__.co_name == "forward"), None)
    code = code or (fns[0].__code__ if len(fns) == 1 else None)
    names = list(code.co_varnames[:code.co_argcount]) if code else []
    return names[1:] if names[:1] == ["self"] else names


def told(source, args: tuple, err, value, expected, code: str, sizes: str,
         broken_only: bool = False) -> tuple[str, str] | None:
    """(line, code) naming the notebook variable the function reads, when its size is one that broke (or, for
    an answer no slip explains and unless broken_only, when it reads one at all); else naming a number written
    in the function that is a size of a wrong-shaped answer; None when neither."""
    if not callable(source):
        return None
    if err is not None:
        text = str(err).splitlines()[0] if str(err) else ""
        broken = {int(s) for s in re.findall(r"\d+", text)}
    elif isinstance(value, np.ndarray) and isinstance(expected, np.ndarray):
        broken = set(value.shape) - set(expected.shape) if value.shape != expected.shape else set()
    elif isinstance(value, tuple) and isinstance(expected, tuple):
        broken = {v for v, e in zip(value, expected) if isinstance(v, int) and v != e}
    else:
        broken = set()
    params = _params(source)
    told = say(source, args, broken, params, sizes) if broken else None
    if told is None and not broken_only and (err is None or code == "raised"):
        told = say(source, args, set(), params, sizes)
    if told is not None:
        return told, "notebook_global"
    written = sorted(broken & written_numbers(source)) if err is None and isinstance(expected, np.ndarray) else []
    if written:  # `x.view(T, 12, D // 12)`: the notebook's 12 heads, where this input has 3
        return (f"your answer is {list(value.shape)}, not {list(expected.shape)}, and its size {written[0]} is a "
                f"number written in your function: compute every size from the inputs ({sizes}); a number copied "
                f"from the notebook fits only the notebook's example."), "written_number"
    return None


def written_numbers(source) -> set[int]:
    """The whole numbers written in the function's code, 3 and up (0, 1, 2 and -1 are axes and steps). Read from
    its bytecode, nested functions and comprehensions too: the grader runs code that has no source file."""
    found, codes = set(), [f.__code__ for f in functions(source)]
    while codes:
        code = codes.pop()
        codes += [c for c in code.co_consts if isinstance(c, types.CodeType)]
        found |= {i.argval for i in dis.get_instructions(code)
                  if type(i.argval) is int and i.opname in ("LOAD_CONST", "LOAD_SMALL_INT") and i.argval >= 3}
    return found


# --- fixed to the first input ---------------------------------------------------------------------
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


_ORDINAL = ("first", "second", "third", "fourth")


def _small(value) -> bool:
    """0 or 1 (or a tuple or array of them): what a slip in a formula also gives on every input (n_heads // width
    is 0), or a placeholder (np.zeros((3, 3))), whose shape line says more."""
    if isinstance(value, np.ndarray):
        return bool(np.isin(value, (0, 1)).all())
    numbers = value if isinstance(value, tuple) else (value,)
    return all(isinstance(x, (int, float)) and x in (0, 1) for x in numbers)


def fixed_answer(answers: list, expected: list, sizes_hint: str | None) -> tuple[str, str] | None:
    """(sentence, code) when a wrong answer does not move with its inputs: the same answer (or the same number
    at one place of a tuple) on every input, where the right ones differ. A number written in (the notebook's
    4 tokens × 768, a head size of 64) gives that on inputs of other sizes, whatever else the slip is.
    Small answers (two inputs, a tuple of small ints, a 0 or 1) can stay put by chance: not said for them."""
    arrays = isinstance(answers[0], np.ndarray) if answers else False
    if len(answers) < (2 if arrays else 3) or len(answers) != len(expected) or arrays and answers[0].ndim == 0:
        return None  # (one number for a tensor answer has its own line: a .sum() or .item() too many)
    how = f" ({sizes_hint})" if sizes_hint else ""
    every = "both" if len(answers) == 2 else f"all {len(answers)}"
    if all(_same_answer(a, answers[0]) for a in answers) and not _small(answers[0]) and \
            not all(_same_answer(e, expected[0]) for e in expected):
        shown = f"the same {list(answers[0].shape)} numbers" if arrays else answers[0]
        return (f"your function gives {shown} on {every} inputs, whatever their sizes: compute the answer from "
                f"the arguments{how}, not from numbers written in.", "same_for_every_input")
    if not all(isinstance(a, tuple) and isinstance(e, tuple) and len(a) == len(e) == len(answers[0])
               and all(isinstance(x, (int, float)) for x in a + e) for a, e in zip(answers, expected)):
        return None
    for i in range(min(len(answers[0]), len(_ORDINAL))):
        if len({a[i] for a in answers}) == 1 and len({e[i] for e in expected}) > 1 and not _small(answers[0][i]):
            return (f"the {_ORDINAL[i]} number is {answers[0][i]} on {every} inputs, whatever their sizes: it is "
                    f"written in; compute it from the arguments{how}.", "number_written_in")
    return None
