"""Attention written out step by step, for one head and for many.

Every function is plain tensor math, and the two drivers return every
intermediate tensor, so a notebook can print and plot each step:

    X (T, D) ─ W_Q, W_K, W_V ─▶ Q, K, V (T, d) ─▶ scores Q·Kᵀ (T, T) ─▶ ÷ √d ─▶ causal mask
      ─▶ softmax over keys ─▶ weights (T, T) ─▶ weights·V = the head's update z (T, d)
    z_h · W_O[h] (d → D) = head h's decompressed update; Σ_h of those = concat(z) · W_O (D × D)
    residual + update = the finished embedding

Per-head weights use the layout of `helpers.model.head_weights`:
W_Q, W_K, W_V (n_heads, d_model, d_head); W_O (n_heads, d_head, d_model), i.e. the
recombination matrix cut into its d_head-row blocks, one per head.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from .arguments import whole_number

Tensor = torch.Tensor


# --- checks -----------------------------------------------------------------------------
def check_heads(d_model: int, n_heads: int, names: tuple[str, str] = ("d_model", "n_heads")) -> int:
    """Return d_head = d_model // n_heads, or a one-line ValueError saying what to change.
    `names` are the caller's names for the two numbers, so the message uses the words the student typed."""
    width, heads = names
    n_heads = whole_number(n_heads, heads, low=1, example="1, 8 or 12")  # np.int64(4) is 4
    d_model = whole_number(d_model, width, low=1, example="64 or 768")
    if d_model % n_heads:
        divisors = [h for h in range(1, min(d_model, 16) + 1) if d_model % h == 0]
        raise ValueError(f"{heads}={n_heads} does not divide {width}={d_model}; "
                         f"pick a head count that divides it, e.g. one of {divisors}.")
    return d_model // n_heads


def _check_matmul(a: Tensor, b: Tensor, a_name: str, b_name: str) -> None:
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(f"{a_name} {list(a.shape)} cannot be multiplied by {b_name} {list(b.shape)}: "
                         f"{a.shape[-1]} ≠ {b.shape[-2]}; give {b_name} {a.shape[-1]} rows.")


# --- the steps of one head ---------------------------------------------------------------
def project(X: Tensor, W: Tensor, b: Tensor | None = None, name: str = "W") -> Tensor:
    """X (…, T, D) · W (D, d) (+ b (d,)) -> (…, T, d): queries, keys or values."""
    _check_matmul(X, W, "X", name)
    out = X @ W
    return out if b is None else out + b


def raw_scores(Q: Tensor, K: Tensor) -> Tensor:
    """Q (…, T_q, d) · Kᵀ (…, d, T_k) -> (…, T_q, T_k): how well each query matches each key."""
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Queries {list(Q.shape)} and keys {list(K.shape)} differ in size "
                         f"({Q.shape[-1]} ≠ {K.shape[-1]}); both must come from the same head.")
    return Q @ K.transpose(-2, -1)


def scale(scores: Tensor, d_head: int) -> Tensor:
    """Divide by √d_head so the softmax does not saturate as the head gets wider."""
    return scores / math.sqrt(d_head)


def mask_future(scores: Tensor) -> Tensor:
    """Set the scores of future keys to -inf so the softmax gives them weight 0."""
    T_q, T_k = scores.shape[-2:]
    future = torch.ones(T_q, T_k, dtype=torch.bool, device=scores.device).triu(1 + T_k - T_q)
    return scores.masked_fill(future, float("-inf"))


def softmax_over_keys(scores: Tensor) -> Tensor:
    """Softmax along the last axis (the keys): each query's weights sum to 1."""
    return scores.softmax(dim=-1)


def weighted_sum(weights: Tensor, V: Tensor) -> Tensor:
    """weights (…, T_q, T_k) · V (…, T_k, d) -> (…, T_q, d): each word's update."""
    _check_matmul(weights, V, "weights", "V")
    return weights @ V


@dataclass
class HeadSteps:
    """Every intermediate tensor of one attention head (shapes for a sentence of T words)."""

    X: Tensor  # (T, D) the input embeddings
    Q: Tensor  # (T, d)
    K: Tensor  # (T, d)
    V: Tensor  # (T, d)
    scores: Tensor  # (T, T) raw Q·Kᵀ
    scaled: Tensor  # (T, T) scores / √d
    masked: Tensor  # (T, T) scaled, future keys at -inf when causal (else equal to scaled)
    weights: Tensor  # (T, T) softmax over keys: rows are queries, columns keys
    z: Tensor  # (T, d) weights · V: the head's update for every word


def single_head(X: Tensor, W_Q: Tensor, W_K: Tensor, W_V: Tensor, b_Q: Tensor | None = None,
                b_K: Tensor | None = None, b_V: Tensor | None = None, causal: bool = False) -> HeadSteps:
    """One head on X (T, D) with W_Q, W_K, W_V (D, d); returns every step."""
    for name, W in (("W_Q", W_Q), ("W_K", W_K), ("W_V", W_V)):
        if W.dim() != 2:
            raise ValueError(f"{name} has shape {list(W.shape)}; one head needs a (d_model, d_head) matrix, "
                             f"e.g. weights['{name}'][h].")
    Q, K, V = project(X, W_Q, b_Q, "W_Q"), project(X, W_K, b_K, "W_K"), project(X, W_V, b_V, "W_V")
    scores = raw_scores(Q, K)
    scaled = scale(scores, Q.shape[-1])
    masked = mask_future(scaled) if causal else scaled
    weights = softmax_over_keys(masked)
    return HeadSteps(X, Q, K, V, scores, scaled, masked, weights, weighted_sum(weights, V))


# --- many heads ----------------------------------------------------------------------------
def split_heads(x: Tensor, n_heads: int) -> Tensor:
    """(…, T, D) -> (…, H, T, D/H): head h gets features h·d … (h+1)·d - 1."""
    d_head = check_heads(x.shape[-1], n_heads)
    return x.unflatten(-1, (n_heads, d_head)).transpose(-3, -2)


def merge_heads(x: Tensor) -> Tensor:
    """(…, H, T, d) -> (…, T, H·d): concatenate the heads' features, head 0 first."""
    if x.dim() < 3:
        raise ValueError(f"merge_heads needs (…, n_heads, T, d_head), got shape {list(x.shape)}; "
                         f"stack the heads first.")
    return x.transpose(-3, -2).flatten(-2)


def recombination_matrix(W_O: Tensor) -> Tensor:
    """Stack the per-head blocks W_O (H, d, D) into the (H·d, D) recombination matrix."""
    return W_O.reshape(-1, W_O.shape[-1])


@dataclass
class MultiHeadSteps:
    """Every intermediate tensor of multi-head attention on one sentence."""

    X: Tensor  # (T, D) the (normalised) input the heads read
    Q: Tensor  # (H, T, d)
    K: Tensor  # (H, T, d)
    V: Tensor  # (H, T, d)
    scores: Tensor  # (H, T, T) raw
    scaled: Tensor  # (H, T, T)
    weights: Tensor  # (H, T, T) attention maps
    z: Tensor  # (H, T, d) each head's update
    concat: Tensor  # (T, H·d) the updates side by side
    recombination: Tensor  # (H·d, D) W_O stacked
    update: Tensor  # (T, D) concat · recombination + b_O
    per_head: Tensor  # (H, T, D) z_h · W_O[h]: head h's decompressed share of the update
    residual: Tensor  # (T, D) what the update is added to
    out: Tensor  # (T, D) residual + update


def multi_head(X: Tensor, W_Q: Tensor, W_K: Tensor, W_V: Tensor, W_O: Tensor,
               b_Q: Tensor | None = None, b_K: Tensor | None = None, b_V: Tensor | None = None,
               b_O: Tensor | None = None, causal: bool = False, residual: Tensor | None = None) -> MultiHeadSteps:
    """All heads on X (T, D): W_Q/W_K/W_V (H, D, d), W_O (H, d, D); residual defaults to X."""
    _check_layout(X, W_Q, W_K, W_V, W_O)
    Q, K, V = _per_head(X, W_Q, b_Q), _per_head(X, W_K, b_K), _per_head(X, W_V, b_V)  # (H, T, d) each
    scores = raw_scores(Q, K)  # (H, T, T)
    scaled = scale(scores, Q.shape[-1])
    weights = softmax_over_keys(mask_future(scaled) if causal else scaled)
    z = weighted_sum(weights, V)  # (H, T, d)
    concat = merge_heads(z)  # (T, H·d)
    recombination = recombination_matrix(W_O)  # (H·d, D)
    update = concat @ recombination  # (T, D)
    if b_O is not None:
        update = update + b_O
    per_head = z @ W_O  # (H, T, d) · (H, d, D) -> (H, T, D)
    residual = X if residual is None else residual
    if residual.shape != update.shape:
        raise ValueError(f"residual has shape {list(residual.shape)} but the update has {list(update.shape)}; "
                         f"pass the embeddings the layer's input came from.")
    return MultiHeadSteps(X, Q, K, V, scores, scaled, weights, z, concat, recombination, update, per_head,
                          residual, residual + update)


def _per_head(X: Tensor, W: Tensor, b: Tensor | None) -> Tensor:
    """X (T, D) @ W (H, D, d) -> (H, T, d), plus the bias b (H, d) of each head."""
    out = X @ W  # X is broadcast over the heads
    return out if b is None else out + b.unsqueeze(-2)  # (H, 1, d) adds to every word


def _check_layout(X: Tensor, W_Q: Tensor, W_K: Tensor, W_V: Tensor, W_O: Tensor) -> None:
    if X.dim() != 2:
        raise ValueError(f"X has shape {list(X.shape)}; multi_head reads one sentence (T, d_model) at a time.")
    H, D, d = W_Q.shape if W_Q.dim() == 3 else (None, None, None)
    if H is None:
        raise ValueError(f"W_Q has shape {list(W_Q.shape)}; use the per-head layout (n_heads, d_model, d_head).")
    for name, W, want in (("W_K", W_K, (H, D, d)), ("W_V", W_V, (H, D, d)), ("W_O", W_O, (H, d, D))):
        if tuple(W.shape) != want:
            raise ValueError(f"{name} has shape {list(W.shape)} but W_Q {list(W_Q.shape)} needs {list(want)}; "
                             f"take all four from the same layer, e.g. head_weights(model, layer).")
    if X.shape[-1] != D:
        raise ValueError(f"X has {X.shape[-1]} features per word but the weights expect d_model={D}; "
                         f"use the embeddings of the model these weights came from.")


def multi_head_from(X: Tensor, weights: dict, causal: bool = True, residual: Tensor | None = None) -> MultiHeadSteps:
    """multi_head with a `head_weights(model, layer)` dict (a trained model is causal)."""
    return multi_head(X, weights["W_Q"], weights["W_K"], weights["W_V"], weights["W_O"], weights.get("b_Q"),
                      weights.get("b_K"), weights.get("b_V"), weights.get("b_O"), causal=causal, residual=residual)


# --- parameters ------------------------------------------------------------------------------
def attention_param_breakdown(d_model: int, n_heads: int, bias: bool = True) -> dict[str, int]:
    """Parameters of one attention layer by part: per-head Q/K/V, their biases, the recombination."""
    d_head = check_heads(d_model, n_heads)
    parts = {"W_Q, W_K, W_V": 3 * n_heads * d_model * d_head, "recombination W_O": n_heads * d_head * d_model}
    if bias:
        parts["b_Q, b_K, b_V"] = 3 * n_heads * d_head
        parts["b_O"] = d_model
    return parts


def attention_param_count(d_model: int, n_heads: int, bias: bool = True) -> int:
    """Total parameters of one attention layer; the same for every head count that divides d_model."""
    return sum(attention_param_breakdown(d_model, n_heads, bias).values())
