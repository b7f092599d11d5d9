"""Exercise checks of notebooks 01-03: run the student's function on two inputs and judge it.

Each `check_*(student_fn)` prints exactly one verdict line (after anything the function printed)
and returns None, so a check cell shows no stray True/False:
- "✓ …" when the answer matches the reference on every input;
- "✗ …" naming the mistake it matches in mistakes_01_03.py (no 1/√d scaling, the wrong axis,
  the wrong triangle, a number copied from the notebook …) and what to do;
- "… not attempted yet" when the function still returns None (its body is `...`).
The inputs are chosen so the usual slips give different answers: T, d, D, √T, √d and the
notebooks' 8, 64 and 768 all differ, and the second input has other sizes than the first.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from ..core import attention as A
from . import fitted
from . import mistakes_01_03 as M
from . import mistakes_02 as M2
from . import mistakes_03 as M3
from .grading import Exercise, Verdict, check


def _inputs(*shape: int, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g)


def size(t: torch.Tensor) -> str:
    """A shape as the notebooks write it: [5 × 16]."""
    return "[" + " × ".join(str(s) for s in t.shape) + "]"


# --- notebook 01 -------------------------------------------------------------------------------------
def _weights_case(T: int, d: int, seed: int) -> tuple[str, tuple]:
    Q, K = _inputs(T, d, seed=seed) * 0.7, _inputs(T, d, seed=seed + 1) * 0.7
    return f"Q, K {size(Q)}", (Q, K)


ATTENTION_WEIGHTS = Exercise(
    "attention weights", [_weights_case(5, 16, 1), _weights_case(7, 9, 3)],
    lambda Q, K: A.softmax_over_keys(A.scale(A.raw_scores(Q, K), Q.shape[-1])), M.ATTENTION_WEIGHTS,
    shape_hint="Rows are queries, columns are keys: [T × T].", sizes="T, d = Q.shape", explain=fitted.scale_or_factor)


def check_attention_weights(student_fn: Callable) -> Verdict:
    """student_fn(Q (T, d), K (T, d)) -> weights (T, T): softmax over keys of Q·Kᵀ/√d."""
    return check(ATTENTION_WEIGHTS, student_fn)


def _mask_case(T: int, seed: int) -> tuple[str, tuple]:
    scores = _inputs(T, T, seed=seed) * 2
    return f"scores {size(scores)}", (scores,)


MASKED_WEIGHTS = Exercise(
    "masked weights", [_mask_case(5, 21), _mask_case(8, 22)], lambda s: A.mask_future(s).softmax(-1),
    M.MASKED_WEIGHTS, shape_hint="One row per query, one column per key: [T × T].", sizes="T = scores.shape[-1]")


def check_masked_weights(student_fn: Callable) -> Verdict:
    """student_fn(scores (T, T)) -> weights (T, T): -inf above the diagonal, then softmax over keys."""
    return check(MASKED_WEIGHTS, student_fn)


def _sum_case(T: int, d: int, seed: int) -> tuple[str, tuple]:
    weights, V = _inputs(T, T, seed=seed).softmax(-1), _inputs(T, d, seed=seed + 1)
    return f"weights {size(weights)}, V {size(V)}", (weights, V)


WEIGHTED_SUM = Exercise(
    "weighted sum", [_sum_case(5, 8, 3), _sum_case(6, 3, 13)], A.weighted_sum, M.WEIGHTED_SUM,
    shape_hint="One update per word, as long as a value vector: weights [T × T] @ V [T × d].", sizes="T, d = V.shape",
    explain=fitted.factor("the weights already sum to 1: weights @ V needs no extra factor"))


def check_weighted_sum(student_fn: Callable) -> Verdict:
    """student_fn(weights (T, T), V (T, d)) -> updates (T, d): row i = Σ_j weights[i, j] · V[j]."""
    return check(WEIGHTED_SUM, student_fn)


# --- notebook 02 -------------------------------------------------------------------------------------
def _one_head_case(T: int, D: int, d: int, seed: int) -> tuple[str, tuple]:
    X = _inputs(T, D, seed=seed)
    W_Q, W_K, W_V = (_inputs(D, d, seed=seed + s) * 0.5 for s in (1, 2, 3))
    return f"X {size(X)} into a head of {d}", (X, W_Q, W_K, W_V)


ONE_HEAD = Exercise(
    "one head", [_one_head_case(5, 36, 9, 5), _one_head_case(7, 40, 4, 25)],
    lambda X, W_Q, W_K, W_V: A.single_head(X, W_Q, W_K, W_V).z, M.ONE_HEAD,
    shape_hint="The update is [T × d_head]: one row per word, one column per feature of the head.", sizes="T, D = X.shape and d = W_Q.shape[1]")


def check_one_head(student_fn: Callable) -> Verdict:
    """student_fn(X (T, D), W_Q, W_K, W_V (D, d)) -> z (T, d): one head's update for every word."""
    return check(ONE_HEAD, student_fn)


def _split_case(T: int, D: int, n: int, seed: int) -> tuple[str, tuple]:
    x = _inputs(T, D, seed=seed)
    return f"x {size(x)} into {n} heads", (x, n)


SPLIT_HEADS = Exercise(
    "split heads", [_split_case(5, 12, 3, 9), _split_case(6, 20, 4, 19)], A.split_heads, M2.SPLIT_HEADS,
    shape_hint="Expected (n_heads, T, d_head).", sizes="T, D = x.shape")


def check_split_heads(student_fn: Callable) -> Verdict:
    """student_fn(x (T, D), n_heads) -> (n_heads, T, D // n_heads): head h gets features h·d … (h+1)·d − 1."""
    return check(SPLIT_HEADS, student_fn)


# --- notebook 03 -------------------------------------------------------------------------------------
def _merge_case(H: int, T: int, d: int, seed: int) -> tuple[str, tuple]:
    z = _inputs(H, T, d, seed=seed)
    return f"z {size(z)}", (z,)


MERGE_HEADS = Exercise(
    "merge heads", [_merge_case(3, 5, 4, 10), _merge_case(4, 6, 2, 30)], A.merge_heads, M3.MERGE_HEADS,
    shape_hint="Expected (T, n_heads · d_head).", sizes="H, T, d = z.shape")


def check_merge_heads(student_fn: Callable) -> Verdict:
    """student_fn(z (H, T, d)) -> (T, H·d): each word's head updates side by side, head 0 first."""
    return check(MERGE_HEADS, student_fn)


def _recombine_case(H: int, T: int, d: int, D: int, seed: int) -> tuple[str, tuple]:
    z, W_O = _inputs(H, T, d, seed=seed), _inputs(H, d, D, seed=seed + 1)
    return f"z {size(z)}, W_O {size(W_O)}", (z, W_O)


RECOMBINE = Exercise(
    "recombine", [_recombine_case(3, 5, 4, 6, 11), _recombine_case(2, 4, 3, 5, 31)],
    lambda z, W_O: A.merge_heads(z) @ A.recombination_matrix(W_O), M3.RECOMBINE,
    shape_hint="One update of d_model features per word: (T, D).", sizes="H, T, d = z.shape",
    explain=fitted.factor("the heads' updates are added, a plain sum over the heads: no mean, no extra factor"))


def check_recombine(student_fn: Callable) -> Verdict:
    """student_fn(z (H, T, d), W_O (H, d, D)) -> (T, D): Σ_h z[h] @ W_O[h] = concat(z) @ W_O stacked."""
    return check(RECOMBINE, student_fn)
