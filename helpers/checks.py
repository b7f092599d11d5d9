"""Exercise checks: run the student's function on fixed inputs and compare with the reference.

Each `check_*(student_fn)` prints one line, "✓ …" when the answer matches the reference
in helpers.attention, otherwise "✗ …" naming the likely mistake (no 1/√d scaling,
softmax over the wrong axis, queries and keys swapped, heads split or merged in the
wrong order, wrong shape). It returns True or False and never raises for a wrong
answer, so a notebook always runs on. A function that still returns None (its body
is `...`) is reported as not attempted yet.
"""

from __future__ import annotations

import math
from typing import Callable

import torch

from . import attention as A

ATOL = 1e-4


def _inputs(*shape: int, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g)


def call_student(name: str, fn, *args, plain_answer_ok: bool = False):
    """Call the student's function; return (answer, None) or (None, one-line message).

    Their exceptions become the message, so a bug never stops the notebook. With
    plain_answer_ok, a value (e.g. (layer, head)) is taken as the answer itself."""
    if not callable(fn):
        if not plain_answer_ok:
            return None, f"✗ {name}: expected a function, got {type(fn).__name__}; pass the function itself, not its result."
        got = fn
    else:
        try:
            got = fn(*args)
        except Exception as err:  # the student's bug, reported instead of stopping the notebook
            return None, f"✗ {name}: your function raised {type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"
    if got is None or got is Ellipsis:
        return None, f"… {name}: not attempted yet (the function returned None). The notebook goes on with the reference."
    return got, None


def run_student(name: str, fn: Callable, *args):
    """call_student for functions of tensors: inputs cloned, no gradients, the answer as a tensor."""
    with torch.no_grad():
        got, problem = call_student(name, fn, *[a.clone() for a in args])
    if problem:
        return None, problem
    try:
        return torch.as_tensor(got, dtype=torch.float32), None
    except (TypeError, ValueError, RuntimeError):
        return None, f"✗ {name}: expected a tensor, got {type(got).__name__}."


def judge(name: str, got: torch.Tensor | None, problem: str | None, expected: torch.Tensor,
           mistakes: dict[str, torch.Tensor], shape_hint: str = "") -> bool:
    """Print the verdict: pass, a named mistake, a wrong shape, or the largest difference."""
    if problem:
        print(problem)
        return False
    if got.shape == expected.shape and torch.allclose(got, expected, atol=ATOL, rtol=1e-4):
        print(f"✓ {name}: correct, shape {list(got.shape)}.")
        return True
    for message, wrong in mistakes.items():
        if got.shape == wrong.shape and torch.allclose(got, wrong, atol=ATOL, rtol=1e-4):
            print(f"✗ {name}: {message}")
            return False
    if got.shape != expected.shape:
        print(f"✗ {name}: wrong shape {list(got.shape)}, expected {list(expected.shape)}. {shape_hint}".rstrip())
        return False
    diff = (got - expected).abs().max().item()
    print(f"✗ {name}: right shape but the numbers differ from the reference (largest difference {diff:.3g}).")
    return False


# --- notebook 01 -------------------------------------------------------------------------------------
def check_attention_weights(student_fn: Callable) -> bool:
    """student_fn(Q (T, d), K (T, d)) -> weights (T, T): softmax over keys of Q·Kᵀ/√d."""
    Q, K = _inputs(5, 16, seed=1) * 1.5, _inputs(5, 16, seed=2) * 1.5
    got, problem = run_student("attention weights", student_fn, Q, K)
    d = Q.shape[-1]
    mistakes = {
        "forgot the 1/√d scaling: divide the scores by √d_head (here √16 = 4) before the softmax.":
            (Q @ K.T).softmax(-1),
        "softmax over the wrong axis: use dim=-1 so each query's row (over the keys) sums to 1.":
            (Q @ K.T / math.sqrt(d)).softmax(0),
        "queries and keys swapped: compute Q @ K.T (rows are queries), not K @ Q.T.":
            (K @ Q.T / math.sqrt(d)).softmax(-1),
        "these are the scaled scores before the softmax: apply .softmax(dim=-1).": Q @ K.T / math.sqrt(d),
        "these are the raw scores: divide by √d_head and apply the softmax.": Q @ K.T,
        "divided by d_head instead of √d_head.": (Q @ K.T / d).softmax(-1),
    }
    expected = A.softmax_over_keys(A.scale(A.raw_scores(Q, K), d))
    return judge("attention weights", got, problem, expected, mistakes, "Rows are queries, columns are keys: [T × T].")


def check_weighted_sum(student_fn: Callable) -> bool:
    """student_fn(weights (T, T), V (T, d)) -> updates (T, d): row i = Σ_j weights[i, j] · V[j]."""
    weights = _inputs(5, 5, seed=3).softmax(-1)
    V = _inputs(5, 8, seed=4)
    got, problem = run_student("weighted sum", student_fn, weights, V)
    mistakes = {
        "used the weights transposed (columns instead of rows): a query's weights are its row, use weights @ V.":
            weights.T @ V,
        "summed the value vectors without weighting them: multiply each by its weight first.":
            V.sum(0, keepdim=True).expand(5, 8),
        "averaged the value vectors equally: the point is the *attention-weighted* sum, weights @ V.":
            V.mean(0, keepdim=True).expand(5, 8),
    }
    return judge("weighted sum", got, problem, A.weighted_sum(weights, V), mistakes,
                  "One update per word, as long as a value vector: weights [T × T] @ V [T × d].")


# --- notebook 02 -------------------------------------------------------------------------------------
def check_one_head(student_fn: Callable) -> bool:
    """student_fn(X (T, D), W_Q, W_K, W_V (D, d)) -> z (T, d): one head's update for every word."""
    X = _inputs(4, 48, seed=5)
    W_Q, W_K, W_V = (_inputs(48, 8, seed=s) * 0.5 for s in (6, 7, 8))
    got, problem = run_student("one head", student_fn, X, W_Q, W_K, W_V)
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    d = W_Q.shape[-1]
    mistakes = {
        "forgot the 1/√d scaling: divide Q·Kᵀ by √d_head (here √8) before the softmax.": (Q @ K.T).softmax(-1) @ V,
        "softmax over the wrong axis: use dim=-1 (over the keys of each query).": (Q @ K.T / math.sqrt(d)).softmax(0) @ V,
        "queries and keys swapped: the scores are Q @ K.T.": (K @ Q.T / math.sqrt(d)).softmax(-1) @ V,
        "returned the attention weights; the head's update is weights @ V.": (Q @ K.T / math.sqrt(d)).softmax(-1),
        "used the embeddings X as the values: project them with W_V first.": (Q @ K.T / math.sqrt(d)).softmax(-1) @ X,
    }
    expected = A.single_head(X, W_Q, W_K, W_V).z
    return judge("one head", got, problem, expected, mistakes, "The update is [T × d_head], here [4 × 8].")


def check_split_heads(student_fn: Callable) -> bool:
    """student_fn(x (T, D), n_heads) -> (n_heads, T, D // n_heads): head h gets features h·d … (h+1)·d − 1."""
    x = _inputs(5, 12, seed=9)
    got, problem = run_student("split heads", (lambda t: student_fn(t, 3)) if callable(student_fn) else student_fn, x)
    mistakes = {
        "heads split in the wrong order: x.reshape(n_heads, T, d) mixes words; reshape to (T, n_heads, d) "
        "and then swap the first two axes (.transpose(0, 1)).": x.reshape(3, 5, 4),
        "heads split in the wrong order: each head must take a *contiguous* block of d features, "
        "not every n_heads-th feature.": x.reshape(5, 4, 3).permute(2, 0, 1),
        "forgot to move the head axis first: the result should be (n_heads, T, d), not (T, n_heads, d).":
            x.reshape(5, 3, 4),
    }
    return judge("split heads", got, problem, A.split_heads(x, 3), mistakes, "Expected (n_heads, T, d_head).")


# --- notebook 03 -------------------------------------------------------------------------------------
def check_merge_heads(student_fn: Callable) -> bool:
    """student_fn(z (H, T, d)) -> (T, H·d): each word's head updates side by side, head 0 first."""
    z = _inputs(3, 5, 4, seed=10)
    got, problem = run_student("merge heads", student_fn, z)
    mistakes = {
        "heads merged in the wrong order: z.reshape(T, H·d) mixes words; move the head axis next to the "
        "features first (z.transpose(0, 1)) and then reshape.": z.reshape(5, 12),
        "heads merged in the wrong order: features are interleaved; head h's features must sit together "
        "at positions h·d … (h+1)·d − 1.": z.permute(1, 2, 0).reshape(5, 12),
        "added the heads instead of putting them side by side: concatenate, the result has H·d features.": z.sum(0),
    }
    return judge("merge heads", got, problem, A.merge_heads(z), mistakes, "Expected (T, n_heads · d_head).")


def check_recombine(student_fn: Callable) -> bool:
    """student_fn(z (H, T, d), W_O (H, d, D)) -> (T, D): Σ_h z[h] @ W_O[h] = concat(z) @ W_O stacked."""
    z, W_O = _inputs(3, 5, 4, seed=11), _inputs(3, 4, 6, seed=12)
    got, problem = run_student("recombine", student_fn, z, W_O)
    per_head = z @ W_O  # (H, T, D)
    mistakes = {
        "returned each head's decompressed update separately: add them up over the heads (.sum(0)).": per_head,
        "used only head 0: every head's update goes through its own block and all are added.": per_head[0],
        "heads matched to the wrong blocks of W_O: head h must use W_O[h].": (z @ W_O.flip(0)).sum(0),
        "averaged the heads instead of adding them: the recombination is a sum.": per_head.mean(0),
    }
    return judge("recombine", got, problem, A.merge_heads(z) @ A.recombination_matrix(W_O), mistakes,
                  "One update of d_model features per word: (T, D).")
