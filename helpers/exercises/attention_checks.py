"""Exercise checks: run the student's function on two or more inputs and compare with the reference.

Each `check_*(student_fn)` prints exactly one line and returns None (so a check cell shows no
stray True/False):
- "✓ …" when the answer matches helpers.attention on every input;
- "✗ …" naming the likely mistake (no 1/√d scaling, softmax over the wrong axis, a number
  hard-coded for the first input, NaN, the wrong type, a call to exit() …);
- "… not attempted yet" when the function still returns None (its body is `...`).
A check never raises and never lets the student's code stop the kernel, so a notebook runs on
(helpers.grading runs the student's code and compares the answers).
"""

from __future__ import annotations

import math
from typing import Callable

import torch

from ..core import attention as A
from .grading import NOT_ATTEMPTED, Case, as_tensor, call_student, check_cases, diagnose, run_student  # noqa: F401


def _inputs(*shape: int, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g)


def _size(t: torch.Tensor) -> str:
    return "[" + " × ".join(str(s) for s in t.shape) + "]"


def _fixed_divisors(scores: torch.Tensor, d: int, where: str, finish: Callable) -> dict:
    """The slips of typing the notebooks' √64 = 8 or √768 instead of √d of the input at hand.
    (The check's head sizes are chosen so that neither is right, nor equal to another named slip.)"""
    return {f"divided by a fixed {name}: compute √d from the input ({where}; here d = {d}).": finish(scores / value)
            for value, name in ((8.0, "8 (√64, the notebooks' head size)"), (math.sqrt(768), "√768 ≈ 27.7"))}


# --- notebook 01 -------------------------------------------------------------------------------------
def _weights_case(T: int, d: int, seed: int) -> Case:
    Q, K = _inputs(T, d, seed=seed) * 1.5, _inputs(T, d, seed=seed + 1) * 1.5
    s, r = Q @ K.T, math.sqrt(d)
    return Case((Q, K), A.softmax_over_keys(A.scale(A.raw_scores(Q, K), d)), {
        f"forgot the 1/√d scaling: divide the scores by √d_head (here √{d}) before the softmax.": s.softmax(-1),
        "softmax over the wrong axis: use dim=-1 so each query's row (over the keys) sums to 1.": (s / r).softmax(0),
        "queries and keys swapped: compute Q @ K.T (rows are queries), not K @ Q.T.": (K @ Q.T / r).softmax(-1),
        "these are the scaled scores before the softmax: apply .softmax(dim=-1).": s / r,
        "these are the raw scores: divide by √d_head and apply the softmax.": s,
        "divided by d_head instead of √d_head.": (s / d).softmax(-1),
        "scaled after the softmax: divide the scores by √d first, then take the softmax (rows must sum to 1).":
            s.softmax(-1) / r,
        "used a sigmoid: the softmax over the keys is what makes each row sum to 1.": (s / r).sigmoid(),
        "masked the future: this exercise has no mask yet (section 5 adds it).": A.mask_future(s / r).softmax(-1),
        **_fixed_divisors(s, d, "d = Q.shape[-1]", lambda scaled: scaled.softmax(-1)),
    }, label=f"Q, K {_size(Q)}")


def check_attention_weights(student_fn: Callable) -> None:
    """student_fn(Q (T, d), K (T, d)) -> weights (T, T): softmax over keys of Q·Kᵀ/√d."""
    check_cases("attention weights", student_fn, [_weights_case(5, 16, 1), _weights_case(7, 9, 3)],
                "Rows are queries, columns are keys: [T × T].")


def _mask_case(T: int, seed: int) -> Case:
    scores = _inputs(T, T, seed=seed) * 2
    future = torch.ones(T, T, dtype=torch.bool).triu(1)
    return Case((scores,), A.mask_future(scores).softmax(-1), {
        "no mask: every word still looks at later words; set the scores above the diagonal to -inf first.":
            scores.softmax(-1),
        "filled the future with 0 instead of -inf: e⁰ = 1, so later words still get weight; use float('-inf').":
            scores.masked_fill(future, 0.0).softmax(-1),
        "masked after the softmax: the rows no longer sum to 1; put -inf in the scores, then take the softmax.":
            scores.softmax(-1).masked_fill(future, 0.0),
        "masked the wrong triangle: a word may look at itself and earlier words (below the diagonal), "
        "not at later ones; use .triu(1).": scores.masked_fill(future.T, float("-inf")).softmax(-1),
        "masked the diagonal too: a word may look at itself (the first word has nothing else); use .triu(1), "
        "not .triu(0).": scores.masked_fill(future | torch.eye(T, dtype=torch.bool), float("-inf")).softmax(-1),
        "returned the masked scores: apply the softmax after the mask.": scores.masked_fill(future, float("-inf")),
    }, label=f"scores {_size(scores)}")


def check_masked_weights(student_fn: Callable) -> None:
    """student_fn(scores (T, T)) -> weights (T, T): -inf above the diagonal, then softmax over keys."""
    check_cases("masked weights", student_fn, [_mask_case(5, 21), _mask_case(8, 22)],
                "One row per query, one column per key: [T × T].")


def _sum_case(T: int, d: int, seed: int) -> Case:
    weights, V = _inputs(T, T, seed=seed).softmax(-1), _inputs(T, d, seed=seed + 1)
    return Case((weights, V), A.weighted_sum(weights, V), {
        "used the weights transposed (columns instead of rows): a query's weights are its row, use weights @ V.":
            weights.T @ V,
        "summed the value vectors without weighting them: multiply each by its weight first.":
            V.sum(0, keepdim=True).expand(T, d),
        "averaged the value vectors equally: the point is the *attention-weighted* sum, weights @ V.":
            V.mean(0, keepdim=True).expand(T, d),
        "returned the result transposed: one row per word, [T × d].": (weights @ V).T,
        "returned the weights: multiply them by the value vectors, weights @ V.": weights,
        "returned the value vectors unchanged: mix them with the weights, weights @ V.": V,
    }, label=f"weights {_size(weights)}, V {_size(V)}")


def check_weighted_sum(student_fn: Callable) -> None:
    """student_fn(weights (T, T), V (T, d)) -> updates (T, d): row i = Σ_j weights[i, j] · V[j]."""
    check_cases("weighted sum", student_fn, [_sum_case(5, 8, 3), _sum_case(6, 3, 13)],
                "One update per word, as long as a value vector: weights [T × T] @ V [T × d].")


# --- notebook 02 -------------------------------------------------------------------------------------
def _one_head_case(T: int, D: int, d: int, seed: int) -> Case:
    X = _inputs(T, D, seed=seed)
    W_Q, W_K, W_V = (_inputs(D, d, seed=seed + s) * 0.5 for s in (1, 2, 3))
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    s = Q @ K.T
    return Case((X, W_Q, W_K, W_V), A.single_head(X, W_Q, W_K, W_V).z, {
        f"forgot the 1/√d scaling: divide Q·Kᵀ by √d_head (here √{d}) before the softmax.": s.softmax(-1) @ V,
        "softmax over the wrong axis: use dim=-1 (over the keys of each query).": (s / math.sqrt(d)).softmax(0) @ V,
        "queries and keys swapped: the scores are Q @ K.T.": (K @ Q.T / math.sqrt(d)).softmax(-1) @ V,
        "returned the attention weights; the head's update is weights @ V.": (s / math.sqrt(d)).softmax(-1),
        "used the embeddings X as the values: project them with W_V first.": (s / math.sqrt(d)).softmax(-1) @ X,
        f"divided by √D (the model width, √{D}) instead of √d_head (the head size, √{d}).":
            (s / math.sqrt(D)).softmax(-1) @ V,
        "divided by d_head instead of √d_head.": (s / d).softmax(-1) @ V,
        "scaled after the softmax: divide the scores by √d first, then take the softmax.":
            (s.softmax(-1) / math.sqrt(d)) @ V,
        "used a sigmoid: the softmax over the keys is what makes each row of weights sum to 1.":
            (s / math.sqrt(d)).sigmoid() @ V,
        "masked the future: this exercise has no mask.": A.mask_future(s / math.sqrt(d)).softmax(-1) @ V,
        **_fixed_divisors(s, d, "d = W_Q.shape[1]", lambda scaled: scaled.softmax(-1) @ V),
    }, label=f"X {_size(X)} into a head of {d}")


def check_one_head(student_fn: Callable) -> None:
    """student_fn(X (T, D), W_Q, W_K, W_V (D, d)) -> z (T, d): one head's update for every word."""
    check_cases("one head", student_fn, [_one_head_case(4, 48, 4, 5), _one_head_case(6, 40, 16, 25)],
                "The update is [T × d_head]: one row per word, one column per feature of the head.")


def _split_case(T: int, D: int, n: int, seed: int) -> Case:
    x, d = _inputs(T, D, seed=seed), D // n
    return Case((x, n), A.split_heads(x, n), {
        "heads split in the wrong order: x.reshape(n_heads, T, d) mixes words; reshape to (T, n_heads, d) "
        "and then swap the first two axes (.transpose(0, 1)).": x.reshape(n, T, d),
        "heads split in the wrong order: each head must take a *contiguous* block of d features, "
        "not every n_heads-th feature.": x.reshape(T, d, n).permute(2, 0, 1),
        "forgot to move the head axis first: the result should be (n_heads, T, d), not (T, n_heads, d).":
            x.reshape(T, n, d),
        "each head's block came out transposed (d, T): use .transpose(0, 1) on (T, n_heads, d), "
        "not a full reversal of the axes.": x.reshape(T, n, d).permute(1, 2, 0),
        "gave every head all D features: a head reads a projection cut into blocks of d = D / n_heads.":
            x.expand(n, T, D),
    }, label=f"x {_size(x)} into {n} heads")


def check_split_heads(student_fn: Callable) -> None:
    """student_fn(x (T, D), n_heads) -> (n_heads, T, D // n_heads): head h gets features h·d … (h+1)·d − 1."""
    check_cases("split heads", student_fn, [_split_case(5, 12, 3, 9), _split_case(4, 24, 4, 19)],
                "Expected (n_heads, T, d_head).")


# --- notebook 03 -------------------------------------------------------------------------------------
def _merge_case(H: int, T: int, d: int, seed: int) -> Case:
    z = _inputs(H, T, d, seed=seed)
    return Case((z,), A.merge_heads(z), {
        "heads merged in the wrong order: z.reshape(T, H·d) mixes words; move the head axis next to the "
        "features first (z.transpose(0, 1)) and then reshape.": z.reshape(T, H * d),
        "heads merged in the wrong order: features are interleaved; head h's features must sit together "
        "at positions h·d … (h+1)·d − 1.": z.permute(1, 2, 0).reshape(T, H * d),
        "added the heads instead of putting them side by side: concatenate, the result has H·d features.": z.sum(0),
        "averaged the heads instead of putting them side by side: concatenate, the result has H·d features.":
            z.mean(0),
        "moved the head axis but kept it: flatten the last two axes too, (T, H, d) -> (T, H·d).": z.transpose(0, 1),
        "returned z unchanged: the heads' updates must end up side by side, (T, H·d).": z,
    }, label=f"z {_size(z)}")


def check_merge_heads(student_fn: Callable) -> None:
    """student_fn(z (H, T, d)) -> (T, H·d): each word's head updates side by side, head 0 first."""
    check_cases("merge heads", student_fn, [_merge_case(3, 5, 4, 10), _merge_case(4, 6, 2, 30)],
                "Expected (T, n_heads · d_head).")


def _recombine_case(H: int, T: int, d: int, D: int, seed: int) -> Case:
    z, W_O = _inputs(H, T, d, seed=seed), _inputs(H, d, D, seed=seed + 1)
    per_head = z @ W_O  # (H, T, D)
    return Case((z, W_O), A.merge_heads(z) @ A.recombination_matrix(W_O), {
        "returned each head's decompressed update separately: add them up over the heads (.sum(0)).": per_head,
        "used only head 0: every head's update goes through its own block and all are added.": per_head[0],
        "heads matched to the wrong blocks of W_O: head h must use W_O[h].": (z @ W_O.flip(0)).sum(0),
        "averaged the heads instead of adding them: the recombination is a sum.": per_head.mean(0),
        "added the heads' updates before decompressing: each head's update meets only its own block.":
            z.sum(0) @ W_O.sum(0),
        "concatenated the heads in the wrong order: merge with z.transpose(0, 1), then reshape to (T, H·d).":
            z.reshape(T, H * d) @ A.recombination_matrix(W_O),
    }, label=f"z {_size(z)}, W_O {_size(W_O)}")


def check_recombine(student_fn: Callable) -> None:
    """student_fn(z (H, T, d), W_O (H, d, D)) -> (T, D): Σ_h z[h] @ W_O[h] = concat(z) @ W_O stacked."""
    check_cases("recombine", student_fn, [_recombine_case(3, 5, 4, 6, 11), _recombine_case(2, 4, 3, 5, 31)],
                "One update of d_model features per word: (T, D).")
