"""Checks of notebook 04: the head size and parameter count, and the shape of the concatenation.

Both answers are tuples of whole numbers, read with core.arguments (Python, numpy and 0-d torch
integers alike); each slip below is a wrong formula, run on the same (width, heads) as the student.
"""

from __future__ import annotations

import numpy as np
import torch

from ..analysis.headcount import head_shapes
from ..core.arguments import is_whole_number
from ..core.attention import attention_param_count as _params
from .grading import check
from .verdict import Exercise, Mistake as M, Verdict


def _as_tuple(got):
    """torch.tensor([5, 96]) or np.array([5, 96]): whole numbers in another box, read as the tuple they hold."""
    integer = isinstance(got, torch.Tensor) and not (got.dtype.is_floating_point or got.dtype.is_complex
                                                     or got.dtype == torch.bool) or \
        isinstance(got, np.ndarray) and got.dtype.kind in "iu"
    return tuple(got.tolist()) if integer and got.ndim == 1 else got


def whole_numbers(reference):
    """A reader: the answer as a tuple of plain ints, or one line saying what to return instead (for a float
    of the right value, that the numbers are right and only their type is not: with its code, float_size)."""
    def read(got, args):
        got = _as_tuple(got)
        shown = str(tuple(reference(*args)))  # this input's own answer, as the example
        if is_whole_number(got):
            return None, f"expected a tuple of whole numbers such as {shown}, got the single number {int(got)}."
        if isinstance(got, torch.Tensor) or not isinstance(got, (tuple, list, torch.Size)):
            return None, f"expected a tuple of whole numbers such as {shown}, got {type(got).__name__} {got!r:.40}."
        if any(isinstance(x, float) and x.is_integer() for x in got):
            if all(isinstance(x, (int, float)) for x in got) and \
                    tuple(int(x) for x in got) == tuple(reference(*args)):
                width, n_heads = args[-2:]  # (width, n_heads) or (n_tokens, width, n_heads)
                return None, (f"the numbers are right, only their type is not: {tuple(got)} holds a float (width / "
                              f"n_heads gives {width / n_heads}, not {width // n_heads}); use whole-number "
                              f"division, width // n_heads.", "float_size")
            return None, (f"{tuple(got)} holds a float: width / n_heads gives a float (e.g. 8.0); use whole-number "
                          f"division, width // n_heads.", "float_size")
        if not all(is_whole_number(x) for x in got):
            return None, f"expected a tuple of whole numbers such as {shown}, got {tuple(got)!r:.60}."
        return tuple(int(x) for x in got), None
    return read


def _same(a, b, args) -> bool:
    return a == b


def _one_head(w: int, n: int) -> int:
    d = w // n
    return 3 * (w * d + d) + d * w


def _per_head(w: int, n: int, qkv: int = 3, out=None, bias: int | None = None) -> int:
    """A per-head count with one part changed: qkv matrices, W_O's share (out) or the per-head bias."""
    d = w // n
    return n * (qkv * (w * d + (d if bias is None else bias)) + (d * w if out is None else out))


HEAD_SIZE_AND_PARAMS = Exercise(
    "head_size_and_params", [(f"width {w}, {n} head{'s' * (n > 1)}", (w, n)) for w, n in
                             ((96, 4), (96, 12), (768, 12), (64, 8), (96, 1))],
    lambda w, n: (w // n, _params(w, n)), [
        M("the two numbers are in the wrong order: return (head size, parameters).", lambda w, n: (_params(w, n), w // n),
          code="wrong_order"),
        M("that is the number of heads; the head size is width // heads.", lambda w, n: (n, _params(w, n)),
          code="head_count_as_size"),
        M("width × heads is not the head size: each head gets width // heads features.", lambda w, n: (w * n, _params(w, n)),
          code="width_times_heads"),
        M("you left out the output bias: add width (one bias per output feature).", lambda w, n: (w // n, _params(w, n) - w),
          code="no_output_bias"),
        M("that is one head's share: multiply by the number of heads and add the output bias (width).",
          lambda w, n: (w // n, _one_head(w, n)), code="one_head_share"),
        M("that is one head's share plus the output bias: multiply the head's share by the number of heads.",
          lambda w, n: (w // n, _one_head(w, n) + w), code="one_head_share_plus_bias"),
        M("you left out the biases: 3·width for Q, K, V together and width for the output.", lambda w, n: (w // n, 4 * w * w),
          code="no_biases"),
        M("you counted only the output bias: Q, K and V have biases too (3·width more).",
          lambda w, n: (w // n, 4 * w * w + w), code="only_output_bias"),
        M("you left out the output projection W_O (width·width weights and width biases).",
          lambda w, n: (w // n, 3 * w * w + 3 * w), code="no_output_projection"),
        M("you multiplied a full-width layer by the heads: heads split the width, they add no parameters.",
          lambda w, n: (w // n, n * _params(w, n)), code="heads_times_layer"),
        M("you added the output bias once per head: it is added once, after the recombination.",
          lambda w, n: (w // n, _params(w, n) + (n - 1) * w), code="output_bias_per_head"),
        M("you counted a head's W_Q, W_K, W_V as [d × d]: each reads all width features, [width × d].",
          lambda w, n: (w // n, n * (3 * ((w // n) ** 2 + w // n) + (w // n) * w) + w), code="qkv_as_d_by_d"),
        M("you counted the Q, K, V biases of one head only (3·d): every head has its own, 3·width in all.",
          lambda w, n: (w // n, 4 * w * w + 3 * (w // n) + w), code="qkv_bias_one_head"),
        M("you counted every matrix of a head as [d × d]: W_Q, W_K, W_V are [width × d] and its rows of W_O "
          "[d × width].", lambda w, n: (w // n, n * (4 * (w // n) ** 2 + 3 * (w // n)) + w), code="all_as_d_by_d"),
        M("you counted W_O as [width × width] for every head: each head has only its d rows of W_O, [d × width] "
          "(width × width for all heads together).", lambda w, n: (w // n, _per_head(w, n, out=w * w) + w),
          code="w_o_full_per_head"),
        M("two slips at once: W_O counted as [width × width] per head (each head has d rows, [d × width]), and no "
          "output bias (add width).", lambda w, n: (w // n, _per_head(w, n, out=w * w)),
          code="two_slips.w_o_full_per_head+no_output_bias"),
        M("you left out W_O's weights: each head has d rows of W_O, [d × width], besides the output bias.",
          lambda w, n: (w // n, _per_head(w, n, out=0) + w), code="no_w_o_weights"),
        M("you gave each head a bias of width numbers for each of Q, K, V: a head's biases are d long (3·d per head).",
          lambda w, n: (w // n, _per_head(w, n, bias=w) + w), code="qkv_bias_width_per_head"),
        M("you counted every head's W_Q, W_K, W_V as [width × width]: a head's are [width × d] (all heads together "
          "make one width × width each).", lambda w, n: (w // n, n * 3 * (w * w + w // n) + w * w + w),
          code="qkv_full_per_head"),
        M("you left out the 3: each head has three matrices and biases, for Q, K and V.",
          lambda w, n: (w // n, _per_head(w, n, qkv=1) + w), code="forgot_three"),
        M("you counted W_O as [d × d] per head: a head's rows of W_O are [d × width].",
          lambda w, n: (w // n, _per_head(w, n, out=(w // n) ** 2) + w), code="w_o_as_d_by_d"),
        M("two slips at once: W_O as [d × d] per head (its rows are [d × width]), and no output bias (add width).",
          lambda w, n: (w // n, _per_head(w, n, out=(w // n) ** 2)), code="two_slips.w_o_as_d_by_d+no_output_bias"),
        M("that is the number of heads, used as the head size d in the count too: d = width // heads.",
          lambda w, n: (n, n * (3 * (w * n + n) + n * w) + w), code="head_count_as_size_in_count"),
        M("the biases are 3·width + width numbers, not 4: 4·width² weights and 4·width biases.",
          lambda w, n: (w // n, 4 * w * w + 4), code="four_biases"),
    ], read=whole_numbers(lambda w, n: (w // n, _params(w, n))), same=_same, tensor=False,
    explain=lambda value, expected, args: ("per head 3·(width·d + d) for Q, K, V and d·width for its rows of W_O; "
                                           "then add width (the output bias).", False),
    show_case=True, sizes="d = width // n_heads")


def check_head_size_and_params(fn) -> Verdict:
    """Exercise: fn(width, n_heads) -> (head size, attention parameters of the layer, biases included)."""
    return check(HEAD_SIZE_AND_PARAMS, fn)


CONCAT_SHAPE = Exercise(
    "concat_shape", [(f"{T} tokens, width {w}, {n} head{'s' * (n > 1)}", (T, w, n)) for T, w, n in
                     ((5, 96, 12), (9, 96, 1), (4, 768, 12), (7, 96, 3))],
    lambda T, w, n: head_shapes(w, n, T)["concatenation"], [
        M("that is one head's output; concatenation puts all heads side by side (heads × head size columns).",
          lambda T, w, n: (T, w // n), code="one_head"),
        M("that keeps a heads axis (stacking, heads first); concatenating joins the heads' columns: (tokens, width).",
          lambda T, w, n: (n, T, w // n), code="stacked_heads_first"),
        M("that keeps a heads axis (stacking); concatenating joins the heads' columns: (tokens, width).",
          lambda T, w, n: (T, n, w // n), code="stacked"),
        M("rows and columns swapped: one row per token, (tokens, width).", lambda T, w, n: (w, T),
          code="rows_columns_swapped"),
        M("each head's output is width // heads long, so the heads together give width columns, not width × heads.",
          lambda T, w, n: (T, w * n), code="width_times_heads"),
        M("one column per head: each head contributes width // heads columns, so width in all.", lambda T, w, n: (T, n),
          code="column_per_head"),
        M("heads stacked as rows: concatenation puts them side by side, one row per token.",
          lambda T, w, n: (T * n, w // n), code="heads_as_rows"),
        M("one row per token and head: the heads sit side by side in the same row, (tokens, width).",
          lambda T, w, n: (T * n, w), code="row_per_token_and_head"),
        M("that is the shape of one head's attention map (tokens × tokens); the concatenation has width columns.",
          lambda T, w, n: (T, T), code="attention_map"),
        M("(heads, head size) leaves out the tokens: one row per token, the heads side by side, (tokens, width).",
          lambda T, w, n: (n, w // n), code="no_tokens"),
        M("counted one token too many (<bos>?): n_tokens already counts every token, one row each.",
          lambda T, w, n: (T + 1, w), code="token_too_many"),
        M("counted one token too few: one row for each of the n_tokens tokens.", lambda T, w, n: (T - 1, w),
          code="token_too_few"),
        M("two slips at once: one token too many (<bos>? n_tokens counts every token), and one head's width: the heads "
          "side by side give width columns.", lambda T, w, n: (T + 1, w // n), code="two_slips.token_too_many+one_head"),
        M("two slips at once: rows and columns swapped (one row per token), and one head's width (the heads side by "
          "side give width columns).", lambda T, w, n: (w // n, T), code="two_slips.rows_columns_swapped+one_head"),
    ], read=whole_numbers(lambda T, w, n: head_shapes(w, n, T)["concatenation"]), same=_same,
    explain=lambda value, expected, args: ("rows are tokens, columns are heads × head size.", False), tensor=False,
    show_case=True, sizes="d = width // n_heads")


def check_concat_shape(fn) -> Verdict:
    """Exercise: fn(n_tokens, width, n_heads) -> shape of the concatenated head outputs."""
    return check(CONCAT_SHAPE, fn)
