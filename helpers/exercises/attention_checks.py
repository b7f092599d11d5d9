"""Notebook 01's exercises (attention weights, the mask, the weighted sum): their mistakes and their checks.

Each `check_*(student_fn)` prints one verdict line and returns the Verdict (grading.py). Each mistake is a
small wrong variant of the reference with the exercise's own arguments, returning the wrong answer or
raising the very error the slip raises; the first match names the answer, so order matters. The inputs
are chosen so the usual slips give different answers: T, d, D, √T, √d and the notebooks' 8, 64 and 768
all differ, and the second input has other sizes than the first.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from ..core import attention as A
from . import diagnosis
from .grading import check
from .verdict import Exercise, Mistake as M, Verdict


def random_input(*shape: int, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g)


def size(t: torch.Tensor) -> str:
    """A shape as the notebooks write it: [5 × 16]."""
    return "[" + " × ".join(str(s) for s in t.shape) + "]"


NOTEBOOK_T = 4  # "I like to draw": the size a student may copy from a notebook variable


def future_mask(T: int, offset: int = 1) -> torch.Tensor:
    return torch.ones(T, T, dtype=torch.bool).triu(offset)


def _scores(Q, K):
    return Q @ K.T / math.sqrt(Q.shape[-1])


# --- 01, exercise 1: attention_weights(Q, K) ---------------------------------------------------------
def _copied(divide):
    return [M(f"divided by a fixed {name}, the notebook's size, not this input's: compute √d from the input, "
              f"d = Q.shape[-1].", lambda Q, K, v=value: divide(Q, K, v), code=f"fixed_divisor_{tag}")
            for value, name, tag in ((8.0, "8 (√64)", "8"), (math.sqrt(768), "√768", "sqrt768"),
                                     (64.0, "64", "64"), (768.0, "768", "768"))]


ATTENTION_WEIGHTS_MISTAKES = [
    M("forgot the 1/√d scaling: divide the scores by √d (d = Q.shape[-1]) before the softmax.",
      lambda Q, K: (Q @ K.T).softmax(-1), code="no_scale"),
    M("softmax over the wrong axis: use dim=-1 so each query's row (over the keys) sums to 1.",
      lambda Q, K: _scores(Q, K).softmax(0), code="softmax_axis"),
    M("softmax over the whole matrix: take it per row, .softmax(dim=-1), so each query's weights sum to 1.",
      lambda Q, K: _scores(Q, K).flatten().softmax(0).reshape(Q.shape[0], K.shape[0]), code="softmax_whole_matrix"),
    M("used log_softmax: the weights are .softmax(dim=-1) (positive, each row sums to 1).",
      lambda Q, K: _scores(Q, K).log_softmax(-1), code="log_softmax"),
    M("these are the scaled scores before the softmax: apply .softmax(dim=-1).", _scores, code="no_softmax"),
    M("these are the raw scores: divide by √d and apply the softmax.", lambda Q, K: Q @ K.T, code="raw_scores"),
    M("queries and keys swapped (K @ Q.T, or a softmax of the transposed scores): compute Q @ K.T (rows are "
      "queries) and take the softmax of it as it is.",
      lambda Q, K: _scores(K, Q).softmax(-1), code="queries_keys_swapped"),
    M("divided by d instead of √d (or by √d twice): divide the scores once by √d.",
      lambda Q, K: (Q @ K.T / Q.shape[-1]).softmax(-1), code="divided_by_d"),
    M("multiplied by √d: divide the scores by √d instead.", lambda Q, K: (Q @ K.T * math.sqrt(Q.shape[-1])).softmax(-1),
      code="times_sqrt_d"),
    M("divided by √T (the number of words): the scale is √d, d = Q.shape[-1], the length of a query.",
      lambda Q, K: (Q @ K.T / math.sqrt(Q.shape[0])).softmax(-1), code="sqrt_of_T"),
    M("divided by T (the number of words): the scale is √d, d = Q.shape[-1], the length of a query.",
      lambda Q, K: (Q @ K.T / Q.shape[0]).softmax(-1), code="divided_by_T"),
    M("scaled after the softmax: divide the scores by √d first, then take the softmax (rows must sum to 1).",
      lambda Q, K: (Q @ K.T).softmax(-1) / math.sqrt(Q.shape[-1]), code="scaled_after_softmax"),
    M("used a sigmoid: the softmax over the keys is what makes each row sum to 1.", lambda Q, K: _scores(Q, K).sigmoid(),
      code="sigmoid"),
    M("took e^score without dividing by the row's total: use .softmax(dim=-1), which does both.",
      lambda Q, K: _scores(Q, K).exp(), code="exp_not_normalised"),
    M("divided by the row's total without e^: the softmax takes e^score first (use .softmax(dim=-1)).",
      lambda Q, K: _scores(Q, K) / _scores(Q, K).sum(-1, keepdim=True), code="normalised_without_exp"),
    M("masked the future: this exercise has no mask yet (section 5 adds it).",
      lambda Q, K: _scores(Q, K).masked_fill(future_mask(Q.shape[0]), -math.inf).softmax(-1), code="masked_future"),
    M("Q @ K without the transpose: every query meets every key in Q @ K.T ([T × d] @ [d × T]).", lambda Q, K: Q @ K,
      code="no_transpose"),
    M("K.T @ Q gives [d × d]: the scores are Q @ K.T, [T × T] (rows are queries).",
      lambda Q, K: (K.T @ Q / math.sqrt(Q.shape[-1])).softmax(-1), code="kt_times_q"),
    M("Q.T @ K gives [d × d]: the scores are Q @ K.T, [T × T] (rows are queries).",
      lambda Q, K: (Q.T @ K / math.sqrt(Q.shape[-1])).softmax(-1), code="qt_times_k"),
    M("multiplied element-wise (Q * K): use the matrix product Q @ K.T, every query with every key.",
      lambda Q, K: (Q * K / math.sqrt(Q.shape[-1])).softmax(-1), code="elementwise"),
    M("d ** 1/2 is (d ** 1) / 2 = d/2, not √d: write d ** 0.5 or math.sqrt(d).",
      lambda Q, K: (Q @ K.T / (Q.shape[-1] / 2)).softmax(-1), code="d_over_2"),
    *_copied(lambda Q, K, v: (Q @ K.T / v).softmax(-1)),
    M("(Q * K).sum(-1) gives one score per word (each query with its own key only): every query meets every key "
      "in Q @ K.T, a [T × T] table.", lambda Q, K: ((Q * K).sum(-1) / math.sqrt(Q.shape[-1])).softmax(-1),
      code="one_score_per_word"),
    M("two slips at once: queries and keys swapped (compute Q @ K.T, rows are queries), and divided by d instead of "
      "√d.", lambda Q, K: (K @ Q.T / Q.shape[-1]).softmax(-1), code="two_slips.queries_keys_swapped+divided_by_d"),
    M("took the square root of the scores (NaN wherever a score is negative): the √ belongs to d; divide the "
      "scores by math.sqrt(d), d = Q.shape[-1].", lambda Q, K: torch.sqrt(Q @ K.T).softmax(-1), code="sqrt_of_scores"),
    M("took the square root of the scaled scores (NaN wherever a score is negative): divide the scores by "
      "math.sqrt(d) and take the softmax, no other √.", lambda Q, K: torch.sqrt(_scores(Q, K)).softmax(-1),
      code="sqrt_of_scaled_scores"),
    *[M(f"two slips at once: {says} And the softmax is over the "
        f"wrong axis: use dim=-1, so each query's row sums to 1.",
        lambda Q, K, div=div: (Q @ K.T / div(Q)).softmax(0), code=f"two_slips.{first}+softmax_axis")
      for first, div, says in (("no_scale", lambda Q: 1.0, "no 1/√d scaling (divide the scores by √d, d = Q.shape[-1])."),
                               ("divided_by_d", lambda Q: Q.shape[-1], "divided by d instead of √d."),
                               ("times_sqrt_d", lambda Q: Q.shape[-1] ** -0.5, "multiplied by √d instead of dividing."),
                               ("sqrt_of_T", lambda Q: math.sqrt(Q.shape[0]), "divided by √T instead of √d (d = Q.shape[-1])."))],
]


# --- 01, exercise 2: masked_weights(scores) ----------------------------------------------------------
def _fill(s, where, value=-math.inf):
    return s.masked_fill(where, value)


MASKED_WEIGHTS_MISTAKES = [
    M("no mask: every word still looks at later words; set the scores above the diagonal to -inf first.",
      lambda s: s.softmax(-1), code="no_mask"),
    M("filled the future with 0 instead of -inf: e⁰ = 1, so later words still get weight; use float('-inf').",
      lambda s: _fill(s, future_mask(s.shape[-1]), 0.0).softmax(-1), code="fill_zero"),
    M("filled the future with -1, not -inf: e⁻¹ > 0, so later words still get weight; use float('-inf').",
      lambda s: _fill(s, future_mask(s.shape[-1]), -1.0).softmax(-1), code="fill_minus_one"),
    *[M(f"filled the future with {v:g}, not -inf: e^{v:g} is small but not 0, so a masked score still gets some "
        f"weight (the later words are not hidden); use float('-inf').",
        lambda s, v=v: _fill(s, future_mask(s.shape[-1]), v).softmax(-1), code=f"fill_minus_{-v:g}") for v in (-10.0,)],
    M("wrote -inf after the softmax: the weights then hold -inf (and each row still sums over the later words); put "
      "-inf in the scores first, then take the softmax.",
      lambda s: _fill(s.softmax(-1), future_mask(s.shape[-1])), code="minus_inf_after_softmax"),
    M("filled the future with +inf (float('inf') without the minus): e^inf gives NaN; use float('-inf').",
      lambda s: _fill(s, future_mask(s.shape[-1]), math.inf).softmax(-1), code="plus_inf"),
    M("divided the scores by √T: they are scaled already; mask them and take the softmax as they are.",
      lambda s: _fill(s / math.sqrt(s.shape[-1]), future_mask(s.shape[-1])).softmax(-1), code="scaled_again"),
    M("two slips at once: filled the future with 0 instead of -inf (e⁰ = 1, use float('-inf')), and the softmax is "
      "over the wrong axis (use dim=-1).", lambda s: _fill(s, future_mask(s.shape[-1]), 0.0).softmax(0),
      code="two_slips.fill_zero+softmax_axis"),
    M("two slips at once: masked the wrong triangle (hide the later words, .triu(1)), and filled with 0 instead of "
      "-inf (e⁰ = 1, use float('-inf')).", lambda s: _fill(s, future_mask(s.shape[-1]).T, 0.0).softmax(-1),
      code="two_slips.wrong_triangle+fill_zero"),
    M("added a 0/1 mask to the scores: +1 barely changes a score; put -inf at the later words (masked_fill).",
      lambda s: (s + future_mask(s.shape[-1]).to(s.dtype)).softmax(-1), code="added_mask"),
    M("masked after the softmax: the rows no longer sum to 1; put -inf in the scores, then take the softmax.",
      lambda s: _fill(s.softmax(-1), future_mask(s.shape[-1]), 0.0), code="masked_after_softmax"),
    M("masked the wrong triangle: a word may look at itself and earlier words (below the diagonal), not at "
      "later ones; use torch.ones(T, T, dtype=torch.bool).triu(1).", lambda s: _fill(s, future_mask(s.shape[-1]).T).softmax(-1),
      code="wrong_triangle"),
    M("masked the diagonal too: a word may look at itself (the first word has nothing else); use .triu(1), not "
      ".triu(0).", lambda s: _fill(s, future_mask(s.shape[-1], 0)).softmax(-1), code="masked_diagonal"),
    M("masked only from two words ahead: .triu(2) leaves the next word visible; use .triu(1).",
      lambda s: _fill(s, future_mask(s.shape[-1], 2)).softmax(-1), code="triu_2"),
    M("returned the masked scores: apply the softmax after the mask.", lambda s: _fill(s, future_mask(s.shape[-1])),
      code="no_softmax"),
    M("returned the scores it was given, unchanged: return the weights, the softmax of the masked scores (a "
      "`return scores` where the weights' name belongs?).", lambda s: s.clone(), code="returned_scores"),
    M("softmax over the wrong axis: use dim=-1 so each query's row sums to 1.",
      lambda s: _fill(s, future_mask(s.shape[-1])).softmax(0), code="softmax_axis"),
    M("hid the diagonal and the earlier words and kept the later ones, as a .tril() mask, an inverted (~) mask or "
      "torch.where(mask, scores, -inf) does (the last row is all -inf, NaN): hide the later words only, with "
      ".triu(1) or torch.where(mask, float('-inf'), scores).",
      lambda s: torch.where(future_mask(s.shape[-1]), s, -math.inf).softmax(-1), code="where_swapped"),
    M("used log_softmax: the weights are .softmax(dim=-1) (positive, each row sums to 1).",
      lambda s: _fill(s, future_mask(s.shape[-1])).log_softmax(-1), code="log_softmax"),
    M(f"your mask is {NOTEBOOK_T} × {NOTEBOOK_T}, the size of the notebook's sentence, not of these scores: take "
      f"the size from the input, T = scores.shape[-1].", lambda s: _fill(s, future_mask(NOTEBOOK_T)).softmax(-1),
      code="fixed_mask_size"),
]


# --- 01, exercise 3: weighted_sum(weights, V) --------------------------------------------------------
WEIGHTED_SUM_MISTAKES = [
    M("used the weights transposed (columns instead of rows): a query's weights are its row, use weights @ V.",
      lambda w, V: w.T @ V, code="weights_transposed"),
    M("summed the value vectors without weighting them: multiply each by its weight first.",
      lambda w, V: V.sum(0, keepdim=True).expand_as(V), code="unweighted_sum"),
    M("averaged the value vectors equally: the point is the *attention-weighted* sum, weights @ V.",
      lambda w, V: V.mean(0, keepdim=True).expand_as(V), code="plain_mean"),
    M("returned the result transposed: one row per word, [T × d].", lambda w, V: (w @ V).T, code="result_transposed"),
    M("returned the weights: multiply them by the value vectors, weights @ V.", lambda w, V: w,
      code="returned_weights"),
    M("returned the value vectors unchanged: mix them with the weights, weights @ V.", lambda w, V: V,
      code="returned_values"),
    M("V @ weights: the weights come first, weights @ V ([T × T] @ [T × d]).", lambda w, V: V @ w, code="values_first"),
    M("V.T: V is [T × d] already; use weights @ V.", lambda w, V: w @ V.T, code="values_transposed"),
    M("multiplied element-wise (*): use the matrix product weights @ V.", lambda w, V: w * V, code="elementwise"),
    M("summed over the words: keep one update per word, weights @ V is [T × d].", lambda w, V: (w @ V).sum(0),
      code="summed_over_words"),
    M("divided by T: the weights already sum to 1, so weights @ V is the weighted average as it is.",
      lambda w, V: w @ V / w.shape[0], code="divided_by_T"),
    M("the loop stops one word early: range(T - 1) leaves out the last value vector; use range(T).",
      lambda w, V: w[:, :-1] @ V[:-1], code="loop_stops_early"),
    M("the loop starts at 1: range(1, T) leaves out the first value vector; use range(T).", lambda w, V: w[:, 1:] @ V[1:],
      code="loop_starts_at_1"),
    M("applied the softmax again: the weights already sum to 1; use weights @ V as they are.", lambda w, V: w.softmax(-1) @ V,
      code="softmax_again"),
    M("summed over the queries (axis 0) instead of the keys: row i is Σ_j weights[i, j] · V[j], i.e. weights @ V.",
      lambda w, V: (w[:, :, None] * V[None]).sum(0), code="summed_over_queries"),
    M("V.T @ weights gives [d × T]: the weights come first, weights @ V ([T × T] @ [T × d]).", lambda w, V: V.T @ w,
      code="values_transposed_first"),
    M("that is one word's update (one row of weights @ V, like the draw example): return every word's, weights @ V "
      "[T × d].", lambda w, V: w[-1] @ V, code="one_word_only"),
    M("the loop runs from 1 to T: row T does not exist (rows count from 0); use range(T).",
      lambda w, V: torch.stack([w[i] @ V for i in range(1, w.shape[0] + 1)]), code="loop_1_to_T"),
    M("two slips at once: the weights transposed (a query's weights are its row, use weights @ V), and divided by "
      "T (the weights already sum to 1).", lambda w, V: w.T @ V / w.shape[0], code="two_slips.weights_transposed+divided_by_T"),
    M("a loop that overwrites instead of adds: only the last value vector is left; use out = out + w[:, j:j+1] * V[j].",
      lambda w, V: w[:, -1:] * V[-1], code="loop_overwrites"),
    M("the inner loop stops before the word itself: range(i) sums only the earlier words, and word 0 gets nothing; "
      "sum over every key, range(T) (the weights already hold any mask).", lambda w, V: torch.tril(w, -1) @ V,
      code="loop_skips_own_word"),
    M("the inner loop runs only up to the word itself, range(i + 1): sum over every key, range(T); a mask, when "
      "there is one, is already in the weights.", lambda w, V: torch.tril(w) @ V, code="loop_to_own_word"),
]


# --- the checks ---------------------------------------------------------------------------------------
def _weights_case(T: int, d: int, seed: int) -> tuple[str, tuple]:
    Q, K = random_input(T, d, seed=seed) * 0.7, random_input(T, d, seed=seed + 1) * 0.7
    return f"Q, K {size(Q)}", (Q, K)


ATTENTION_WEIGHTS = Exercise(
    "attention weights", [_weights_case(5, 16, 1), _weights_case(7, 9, 3)],
    lambda Q, K: A.softmax_over_keys(A.scale(A.raw_scores(Q, K), Q.shape[-1])), ATTENTION_WEIGHTS_MISTAKES,
    shape_hint="Rows are queries, columns are keys: [T × T].", sizes="T, d = Q.shape", explain=diagnosis.scale_or_factor)


def check_attention_weights(student_fn: Callable) -> Verdict:
    """student_fn(Q (T, d), K (T, d)) -> weights (T, T): softmax over keys of Q·Kᵀ/√d."""
    return check(ATTENTION_WEIGHTS, student_fn)


def _mask_case(T: int, seed: int) -> tuple[str, tuple]:
    scores = random_input(T, T, seed=seed) * 2
    return f"scores {size(scores)}", (scores,)


MASKED_WEIGHTS = Exercise(
    "masked weights", [_mask_case(5, 21), _mask_case(8, 22)], lambda s: A.mask_future(s).softmax(-1),
    MASKED_WEIGHTS_MISTAKES, shape_hint="One row per query, one column per key: [T × T].", sizes="T = scores.shape[-1]",
    explain=diagnosis.masked_scale)


def check_masked_weights(student_fn: Callable) -> Verdict:
    """student_fn(scores (T, T)) -> weights (T, T): -inf above the diagonal, then softmax over keys."""
    return check(MASKED_WEIGHTS, student_fn)


def _sum_case(T: int, d: int, seed: int) -> tuple[str, tuple]:
    weights, V = random_input(T, T, seed=seed).softmax(-1), random_input(T, d, seed=seed + 1)
    return f"weights {size(weights)}, V {size(V)}", (weights, V)


WEIGHTED_SUM = Exercise(
    "weighted sum", [_sum_case(5, 8, 3), _sum_case(6, 3, 13)], A.weighted_sum, WEIGHTED_SUM_MISTAKES,
    shape_hint="One update per word, as long as a value vector: weights [T × T] @ V [T × d].", sizes="T, d = V.shape",
    explain=diagnosis.factor("the weights already sum to 1: weights @ V needs no extra factor"))


def check_weighted_sum(student_fn: Callable) -> Verdict:
    """student_fn(weights (T, T), V (T, d)) -> updates (T, d): row i = Σ_j weights[i, j] · V[j]."""
    return check(WEIGHTED_SUM, student_fn)
