"""Notebooks 02 and 03's small exercises (one head, split heads; merge heads, recombine): mistakes and checks.

Built like attention_checks.py (notebook 01): each exercise's catalogue of mistakes, then its inputs and
its check. The capstone of 03 (the whole layer as a class) is in capstone.py.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from ..core import attention as A
from . import diagnosis
from .attention_checks import future_mask, random_input, size
from .grading import check
from .verdict import Exercise, Mistake as M, Verdict


# --- 02, exercise 1: one_head(X, W_Q, W_K, W_V) ------------------------------------------------------
def _head(X, Wq, Wk, Wv, divide=None, axis=-1, scores=None):
    Q, K, V = X @ Wq, X @ Wk, X @ Wv
    s = Q @ K.T if scores is None else scores(Q, K)
    return (s / (math.sqrt(Q.shape[-1]) if divide is None else divide)).softmax(axis) @ V


ONE_HEAD_MISTAKES = [
    M("forgot the 1/√d scaling: divide Q @ K.T by √d_head (d_head = W_Q.shape[1]) before the softmax.",
      lambda X, a, b, c: _head(X, a, b, c, divide=1.0), code="no_scale"),
    M("softmax over the wrong axis: use dim=-1 (over the keys of each query).", lambda X, a, b, c: _head(X, a, b, c, axis=0),
      code="softmax_axis"),
    M("queries and keys swapped: the scores are Q @ K.T.", lambda X, a, b, c: _head(X, b, a, c),
      code="queries_keys_swapped"),
    M("made the keys with W_Q: keys come from X @ W_K.", lambda X, a, b, c: _head(X, a, a, c), code="keys_from_wq"),
    M("made the values with W_K: values come from X @ W_V.", lambda X, a, b, c: _head(X, a, b, b),
      code="values_from_wk"),
    M("W_K and W_V swapped: keys come from X @ W_K and values from X @ W_V.", lambda X, a, b, c: _head(X, a, c, b),
      code="keys_values_swapped"),
    M("used W_Q for the queries, the keys and the values: keys come from X @ W_K, values from X @ W_V.",
      lambda X, a, b, c: _head(X, a, a, a), code="all_from_wq"),
    M("two slips at once: no 1/√d scaling (divide Q @ K.T by √d_head), and W_K and W_V swapped (keys from X @ W_K, "
      "values from X @ W_V).", lambda X, a, b, c: _head(X, a, c, b, divide=1.0), code="two_slips.no_scale+keys_values_swapped"),
    M("two slips at once: divided by √D (the width) instead of √d_head (W_Q.shape[1]), and the softmax is over the "
      "wrong axis (use dim=-1).", lambda X, a, b, c: _head(X, a, b, c, divide=math.sqrt(X.shape[1]), axis=0),
      code="two_slips.sqrt_of_width+softmax_axis"),
    M("returned the attention weights; the head's update is weights @ V.",
      lambda X, a, b, c: ((X @ a) @ (X @ b).T / math.sqrt(a.shape[1])).softmax(-1), code="returned_weights"),
    M("made the values with W_Q: values come from X @ W_V.", lambda X, a, b, c: _head(X, a, b, a),
      code="values_from_wq"),
    M("returned the raw scores Q @ K.T: scale them, take the softmax, then weights @ V.", lambda X, a, b, c: (X @ a) @ (X @ b).T,
      code="raw_scores"),
    M("used the embeddings X as the values: project them with W_V first.",
      lambda X, a, b, c: ((X @ a) @ (X @ b).T / math.sqrt(a.shape[1])).softmax(-1) @ X, code="values_are_x"),
    M("returned the values V unmixed: weight them with the attention, weights @ V.", lambda X, a, b, c: X @ c,
      code="values_unmixed"),
    M("divided by √D (the model width, X.shape[1]) instead of √d_head (the head size, W_Q.shape[1]).",
      lambda X, a, b, c: _head(X, a, b, c, divide=math.sqrt(X.shape[1])), code="sqrt_of_width"),
    M("divided by d_head instead of √d_head (or by √d_head twice).", lambda X, a, b, c: _head(X, a, b, c, divide=a.shape[1]),
      code="divided_by_d"),
    M("multiplied by √d_head: divide the scores by it instead.", lambda X, a, b, c: _head(X, a, b, c, divide=a.shape[1] ** -0.5),
      code="times_sqrt_d"),
    M("divided by √T (the number of words): the scale is √d_head, d_head = W_Q.shape[1].",
      lambda X, a, b, c: _head(X, a, b, c, divide=math.sqrt(X.shape[0])), code="sqrt_of_T"),
    M("scaled after the softmax: divide the scores by √d first, then take the softmax.",
      lambda X, a, b, c: ((X @ a) @ (X @ b).T).softmax(-1) / math.sqrt(a.shape[1]) @ (X @ c),
      code="scaled_after_softmax"),
    M("used a sigmoid: the softmax over the keys is what makes each row of weights sum to 1.",
      lambda X, a, b, c: ((X @ a) @ (X @ b).T / math.sqrt(a.shape[1])).sigmoid() @ (X @ c), code="sigmoid"),
    M("no softmax: turn the scaled scores into weights with .softmax(dim=-1) before they mix the values.",
      lambda X, a, b, c: (X @ a) @ (X @ b).T / math.sqrt(a.shape[1]) @ (X @ c), code="no_softmax"),
    M("masked the future: this exercise has no mask.",
      lambda X, a, b, c: _head(X, a, b, c, scores=lambda Q, K: (Q @ K.T).masked_fill(future_mask(X.shape[0]), -math.inf)),
      code="masked_future"),
    M("used the weights transposed: weights @ V, rows are queries.",
      lambda X, a, b, c: ((X @ a) @ (X @ b).T / math.sqrt(a.shape[1])).softmax(-1).T @ (X @ c),
      code="weights_transposed"),
    M("W_Q @ X (the maths-book order): rows of X are words, so project with X @ W_Q.", lambda X, a, b, c: a @ X,
      code="weights_first"),
    M("X @ W_Q.T (the nn.Linear habit): W_Q here is [D × d] already, so use X @ W_Q.", lambda X, a, b, c: X @ a.T,
      code="linear_transpose"),
    M("Q @ K without the transpose: the scores are Q @ K.T ([T × d] @ [d × T]).", lambda X, a, b, c: (X @ a) @ (X @ b),
      code="no_transpose"),
    M("multiplied element-wise (*): project with the matrix product X @ W_Q.", lambda X, a, b, c: X * a,
      code="elementwise"),
    *[M(f"divided by a fixed {name}, the notebook's size, not this input's: compute √d_head from the input, "
        f"d_head = W_Q.shape[1].", lambda X, a, b, c, v=value: _head(X, a, b, c, divide=v),
        code=f"fixed_divisor_{tag}")
      for value, name, tag in ((8.0, "8 (√64)", "8"), (math.sqrt(768), "√768", "sqrt768"), (64.0, "64", "64"))],
]


# --- 02, exercise 2: split_heads(x, n_heads) ---------------------------------------------------------
def _blocks(x, n):
    return x.shape[0], x.shape[1] // n


SPLIT_HEADS_MISTAKES = [
    M("heads split in the wrong order: x.reshape(n_heads, T, d) mixes words; reshape to (T, n_heads, d) and then "
      "swap the first two axes (.transpose(0, 1)).", lambda x, n: x.reshape(n, *_blocks(x, n)),
      code="reshape_without_transpose"),
    M("heads interleaved: each head must take a *contiguous* block of d features, not every n_heads-th feature; "
      "reshape to (T, n_heads, d).", lambda x, n: x.reshape(x.shape[0], -1, n).permute(2, 0, 1), code="interleaved"),
    M("swapped the head count and the head size: reshape to (T, n_heads, d_head), then .transpose(0, 1).",
      lambda x, n: x.reshape(x.shape[0], -1, n).transpose(0, 1), code="count_and_size_swapped"),
    M("forgot to move the head axis first: the result should be (n_heads, T, d), not (T, n_heads, d).",
      lambda x, n: x.reshape(x.shape[0], n, -1), code="head_axis_not_first"),
    M("each head's block came out transposed (d, T): use .transpose(0, 1) on (T, n_heads, d), not a full "
      "reversal of the axes.", lambda x, n: x.reshape(x.shape[0], n, -1).permute(1, 2, 0), code="blocks_transposed"),
    M("gave every head all D features: a head reads a block of d = D / n_heads features.",
      lambda x, n: x.expand(n, *x.shape), code="all_features_per_head"),
    M("split the words (dim 0) instead of the features: chunk along the last axis, x.chunk(n_heads, dim=-1).",
      lambda x, n: torch.stack(x.chunk(n, dim=0)), code="split_words"),
    M("the heads came out in reverse order: head 0 takes the first d features, head 1 the next …",
      lambda x, n: x.reshape(x.shape[0], n, -1).flip(1).transpose(0, 1), code="reverse_order"),
    M("swapped axes 0 and 2, giving (d, n_heads, T): swap the first two, .transpose(0, 1).",
      lambda x, n: x.reshape(x.shape[0], n, -1).transpose(0, 2), code="axes_0_2_swapped"),
    M("returned x unchanged: cut its features into n_heads blocks, (n_heads, T, d).", lambda x, n: x, code="unchanged"),
    M("each head got d − 1 features: in Python a slice's end is left out, so head h is x[:, h*d:(h+1)*d] (features "
      "h·d … (h+1)·d − 1 *included*).", lambda x, n: torch.stack([x[:, h * _blocks(x, n)[1]:(h + 1) * _blocks(x, n)[1] - 1]
                                                                 for h in range(n)]), code="slice_one_short"),
    M("swapped axes 1 and 2 after the reshape, giving (T, d, n_heads): swap the first two, .transpose(0, 1).",
      lambda x, n: x.reshape(x.shape[0], n, -1).transpose(1, 2), code="axes_1_2_swapped"),
    M("x.T.reshape(...) cuts the transposed x, mixing words and features: reshape x to (T, n_heads, d) and then "
      ".transpose(0, 1).", lambda x, n: x.T.reshape(n, *_blocks(x, n)), code="transposed_then_reshaped"),
    M("heads counted from 1: range(1, n_heads + 1) skips head 0's block and asks for one past the end; heads count "
      "from 0, range(n_heads).", lambda x, n: torch.stack([x[:, h * _blocks(x, n)[1]:(h + 1) * _blocks(x, n)[1]]
                                                         for h in range(1, n + 1)]), code="heads_from_1"),
    M("torch.cat joins the heads into one [n_heads·T × d] block: torch.stack them, (n_heads, T, d).",
      lambda x, n: torch.cat(x.chunk(n, dim=-1), dim=0), code="cat_not_stack"),
    M("the head size came from x.shape[0], the number of words: d = x.shape[1] // n_heads (the width).",
      lambda x, n: x.reshape(x.shape[0], n, x.shape[0] // n).transpose(0, 1), code="size_from_words"),
]


# --- notebook 02's checks -----------------------------------------------------------------------------
def _one_head_case(T: int, D: int, d: int, seed: int) -> tuple[str, tuple]:
    X = random_input(T, D, seed=seed)
    W_Q, W_K, W_V = (random_input(D, d, seed=seed + s) * 0.5 for s in (1, 2, 3))
    return f"X {size(X)} into a head of {d}", (X, W_Q, W_K, W_V)


ONE_HEAD = Exercise(
    "one head", [_one_head_case(5, 36, 9, 5), _one_head_case(7, 40, 4, 25)],
    lambda X, W_Q, W_K, W_V: A.single_head(X, W_Q, W_K, W_V).z, ONE_HEAD_MISTAKES,
    shape_hint="The update is [T × d_head]: one row per word, one column per feature of the head.", sizes="T, D = X.shape and d = W_Q.shape[1]")


def check_one_head(student_fn: Callable) -> Verdict:
    """student_fn(X (T, D), W_Q, W_K, W_V (D, d)) -> z (T, d): one head's update for every word."""
    return check(ONE_HEAD, student_fn)


def _split_case(T: int, D: int, n: int, seed: int) -> tuple[str, tuple]:
    x = random_input(T, D, seed=seed)
    return f"x {size(x)} into {n} heads", (x, n)


SPLIT_HEADS = Exercise(
    "split heads", [_split_case(5, 12, 3, 9), _split_case(6, 20, 4, 19)], A.split_heads, SPLIT_HEADS_MISTAKES,
    shape_hint="Expected (n_heads, T, d_head).", sizes="T, D = x.shape")


def check_split_heads(student_fn: Callable) -> Verdict:
    """student_fn(x (T, D), n_heads) -> (n_heads, T, D // n_heads): head h gets features h·d … (h+1)·d − 1."""
    return check(SPLIT_HEADS, student_fn)


# --- 03, exercise 1: merge_heads(z) ------------------------------------------------------------------
MERGE_HEADS_MISTAKES = [
    M("permute(2, 1, 0) reverses all three axes, (d, T, H): the words must come first and each head's d features "
      "stay together, so use z.permute(1, 0, 2) (= z.transpose(0, 1)), then reshape(T, H·d).",
      lambda z: z.permute(2, 1, 0).reshape(z.shape[1], -1), code="permute_210"),
    M("permute(2, 0, 1) puts the features first, (d, H, T): use z.permute(1, 0, 2) (= z.transpose(0, 1)), then "
      "reshape(T, H·d).", lambda z: z.permute(2, 0, 1).reshape(z.shape[1], -1), code="permute_201"),
    M("heads merged in the wrong order: z.reshape(T, H·d) mixes words; move the head axis next to the features "
      "first (z.transpose(0, 1)) and then reshape.", lambda z: z.reshape(z.shape[1], -1),
      code="reshape_without_transpose"),
    M("heads interleaved: head h's features must sit together at positions h·d … (h+1)·d − 1; use "
      "z.transpose(0, 1).reshape(T, H·d).", lambda z: z.permute(1, 2, 0).reshape(z.shape[1], -1), code="interleaved"),
    M("added the heads instead of putting them side by side: concatenate, the result has H·d features.", lambda z: z.sum(0),
      code="summed_heads"),
    M("averaged the heads instead of putting them side by side: concatenate, the result has H·d features.",
      lambda z: z.mean(0), code="averaged_heads"),
    M("moved the head axis but kept it: flatten the last two axes too, (T, H, d) -> (T, H·d).", lambda z: z.transpose(0, 1),
      code="not_flattened"),
    M("returned z unchanged: the heads' updates must end up side by side, (T, H·d).", lambda z: z, code="unchanged"),
    M("stacked the heads as rows: put them side by side along the features, torch.cat(list(z), dim=-1).",
      lambda z: z.reshape(-1, z.shape[-1]), code="stacked_as_rows"),
    M("swapped the wrong axes: z.transpose(0, 1) puts the words first; z.transpose(1, 2) does not.",
      lambda z: z.transpose(1, 2).reshape(z.shape[1], -1), code="transpose_1_2"),
    M("z.reshape(H·d, T) gives each word a column of mixed features: move the head axis next to the features, "
      "z.transpose(0, 1), then reshape(T, H·d).", lambda z: z.reshape(-1, z.shape[1]).T, code="columns_per_word"),
    M("the heads came out in reverse order: head 0 first, then head 1 …", lambda z: z.flip(0).transpose(0, 1).reshape(z.shape[1], -1),
      code="reverse_order"),
    M("the loop starts at 1: range(1, n) leaves out head 0; use range(n) (heads count from 0).",
      lambda z: torch.cat(list(z[1:]), dim=-1), code="head_0_left_out"),
    M("two slips at once: head 0 left out (range(1, n): heads count from 0), and the heads joined along dim 0 (put "
      "them side by side, dim=-1).", lambda z: torch.cat(list(z[1:]), dim=0), code="two_slips.head_0_left_out+stacked_as_rows"),
]


# --- 03, exercise 2: recombine(z, W_O) ---------------------------------------------------------------
RECOMBINE_MISTAKES = [
    M("returned each head's decompressed update separately: add them up over the heads (.sum(0)).", lambda z, W: z @ W,
      code="not_summed"),
    M("used only head 0: every head's update goes through its own block and all are added.", lambda z, W: z[0] @ W[0],
      code="head_0_only"),
    M("a loop that overwrites instead of adds: only the last head is left; use total = total + z[h] @ W_O[h].",
      lambda z, W: z[-1] @ W[-1], code="loop_overwrites"),
    M("heads matched to the wrong blocks of W_O: head h must use W_O[h].", lambda z, W: (z @ W.flip(0)).sum(0),
      code="wrong_blocks"),
    M("averaged the heads instead of adding them: the recombination is a sum.", lambda z, W: (z @ W).mean(0),
      code="averaged_heads"),
    M("added the heads' updates before decompressing: each head's update meets only its own block.",
      lambda z, W: z.sum(0) @ W.sum(0), code="summed_before_projection"),
    M("summed over the words (axis 1): add over the heads, axis 0, and keep one row per word.",
      lambda z, W: (z @ W).sum(1), code="summed_over_words"),
    M("concatenated the heads in the wrong order: merge with z.transpose(0, 1), then reshape to (T, H·d).",
      lambda z, W: z.reshape(z.shape[1], -1) @ W.reshape(-1, W.shape[-1]), code="merge_without_transpose"),
    M("stacked W_O's blocks interleaved: W_O.reshape(H·d, D) keeps head h's rows together.",
      lambda z, W: z.transpose(0, 1).reshape(z.shape[1], -1) @ W.transpose(0, 1).reshape(-1, W.shape[-1]),
      code="blocks_interleaved"),
    M("the loop leaves out the last head: range(H), not range(H - 1).", lambda z, W: (z[:-1] @ W[:-1]).sum(0),
      code="loop_skips_last"),
    M("the loop leaves out head 0: range(H), not range(1, H).", lambda z, W: (z[1:] @ W[1:]).sum(0),
      code="loop_skips_first"),
    M("every head went through W_O[0]: head h uses its own block, W_O[h].", lambda z, W: (z @ W[0]).sum(0),
      code="every_head_block_0"),
    M("merged the heads interleaved (feature by feature): keep head h's d features together, "
      "z.transpose(0, 1).reshape(T, H·d), before the stacked W_O.",
      lambda z, W: z.permute(1, 2, 0).reshape(z.shape[1], -1) @ W.reshape(-1, W.shape[-1]), code="merged_interleaved"),
    M("W_O[h] is [d × D] already: no transpose, use z[h] @ W_O[h].", lambda z, W: (z @ W.transpose(-1, -2)).sum(0),
      code="blocks_transposed"),
    M("W_O @ z: words are rows, so z[h] @ W_O[h] ([T × d] @ [d × D]).", lambda z, W: (W @ z).sum(0), code="w_o_first"),
    M("multiplied element-wise (*): use the matrix product z[h] @ W_O[h].", lambda z, W: (z * W).sum(0),
      code="elementwise"),
    M("concatenated the heads along dim 0 (the words): put them side by side, z.transpose(0, 1).reshape(T, H·d), "
      "before the stacked W_O.", lambda z, W: torch.cat(list(z), dim=0) @ W.reshape(-1, W.shape[-1]),
      code="cat_along_words"),
    M("left out W_O: the heads' updates were added as they are ([T × d]); each goes through its own block first, "
      "z[h] @ W_O[h], to come back to D features.", lambda z, W: z.sum(0), code="no_w_o"),
    M("merged the heads without W_O: concatenated they are [T × H·d]; multiply by the stacked W_O to come back to "
      "D features.", lambda z, W: z.transpose(0, 1).reshape(z.shape[1], -1), code="merged_no_w_o"),
    M("two slips at once: the loop starts at 1 (range(1, n) leaves out head 0), and divided by n at the end (the "
      "recombination is a plain sum).", lambda z, W: (z[1:] @ W[1:]).sum(0) / z.shape[0],
      code="two_slips.loop_from_1+averaged"),
]


# --- notebook 03's checks -----------------------------------------------------------------------------
def _merge_case(H: int, T: int, d: int, seed: int) -> tuple[str, tuple]:
    z = random_input(H, T, d, seed=seed)
    return f"z {size(z)}", (z,)


MERGE_HEADS = Exercise(
    "merge heads", [_merge_case(3, 5, 4, 10), _merge_case(4, 6, 2, 30)], A.merge_heads, MERGE_HEADS_MISTAKES,
    shape_hint="Expected (T, n_heads · d_head).", sizes="H, T, d = z.shape")


def check_merge_heads(student_fn: Callable) -> Verdict:
    """student_fn(z (H, T, d)) -> (T, H·d): each word's head updates side by side, head 0 first."""
    return check(MERGE_HEADS, student_fn)


def _recombine_case(H: int, T: int, d: int, D: int, seed: int) -> tuple[str, tuple]:
    z, W_O = random_input(H, T, d, seed=seed), random_input(H, d, D, seed=seed + 1)
    return f"z {size(z)}, W_O {size(W_O)}", (z, W_O)


RECOMBINE = Exercise(
    "recombine", [_recombine_case(3, 5, 4, 6, 11), _recombine_case(2, 4, 3, 5, 31)],
    lambda z, W_O: A.merge_heads(z) @ A.recombination_matrix(W_O), RECOMBINE_MISTAKES,
    shape_hint="One update of d_model features per word: (T, D).", sizes="H, T, d = z.shape",
    explain=diagnosis.factor("the heads' updates are added, a plain sum over the heads: no mean, no extra factor"))


def check_recombine(student_fn: Callable) -> Verdict:
    """student_fn(z (H, T, d), W_O (H, d, D)) -> (T, D): Σ_h z[h] @ W_O[h] = concat(z) @ W_O stacked."""
    return check(RECOMBINE, student_fn)
