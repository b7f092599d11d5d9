"""A multi-head attention module from scratch: [B, T, D] in, [B, T, D] out.

One linear layer makes queries, keys and values for every head at once; the
result is cut into heads, each head runs scaled dot-product attention on its own
slice, the heads are put side by side again, and one last linear layer (the
recombination) mixes them into a single update per word.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from .attention import check_heads, mask_future


class MultiHead(nn.Module):
    """Multi-head self-attention. dim = heads × head size; causal=True hides later words."""

    def __init__(self, dim: int, heads: int, causal: bool = False, qkv_bias: bool = False):
        super().__init__()
        self.head_size = check_heads(dim, heads, names=("dim", "heads"))  # one-line ValueError if it does not divide
        self.dim, self.heads, self.causal = dim, heads, causal
        self.qkv = nn.Linear(dim, 3 * dim, bias=qkv_bias)  # [W_Q | W_K | W_V] for all heads in one matrix
        self.out = nn.Linear(dim, dim)  # the recombination

    def split(self, t: torch.Tensor) -> torch.Tensor:
        """(B, T, D) -> (B, heads, T, head_size): each head gets its own block of the *projected* features."""
        B, T, _ = t.shape
        return t.view(B, T, self.heads, self.head_size).transpose(1, 2)

    def merge(self, t: torch.Tensor) -> torch.Tensor:
        """(B, heads, T, head_size) -> (B, T, D): the heads' outputs side by side."""
        B, _, T, _ = t.shape
        return t.transpose(1, 2).reshape(B, T, self.dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x (B, T, D) -> (B, T, D): every step of the layer, top to bottom."""
        self._check_input(x)
        B, T, D = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)  # one projection for all heads: 3 × (B, T, D)
        q, k, v = self.split(q), self.split(k), self.split(v)  # (B, heads, T, head_size) each
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_size)  # (B, heads, T, T), scaled
        if self.causal:
            scores = mask_future(scores)  # -inf above the diagonal: no word looks ahead
        weights = scores.softmax(dim=-1)  # over the keys: each row sums to 1
        heads = weights @ v  # (B, heads, T, head_size): each head's update for every word
        return self.out(self.merge(heads))  # side by side (B, T, D), then the recombination

    def attention(self, x: torch.Tensor) -> torch.Tensor:
        """The attention weights (B, heads, T, T) for input x (B, T, D); rows are queries."""
        self._check_input(x)
        q, k, _ = (self.split(t) for t in self.qkv(x).chunk(3, dim=-1))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_size)
        return (mask_future(scores) if self.causal else scores).softmax(dim=-1)

    def _check_input(self, x: torch.Tensor) -> None:
        if x.dim() != 3 or x.shape[-1] != self.dim:
            raise ValueError(f"MultiHead(dim={self.dim}) expects input [batch, tokens, {self.dim}], "
                             f"got {list(x.shape)}; reshape it or build the module with dim={x.shape[-1]}.")

    def extra_repr(self) -> str:
        return f"dim={self.dim}, heads={self.heads}, head_size={self.head_size}, causal={self.causal}"
