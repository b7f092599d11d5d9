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
        self.head_size = check_heads(dim, heads)  # one-line ValueError if heads does not divide dim
        self.dim, self.heads, self.causal = dim, heads, causal
        self.qkv = nn.Linear(dim, 3 * dim, bias=qkv_bias)  # [W_Q | W_K | W_V] for all heads in one matrix
        self.out = nn.Linear(dim, dim)  # the recombination

    def split(self, t: torch.Tensor) -> torch.Tensor:
        """(B, T, D) -> (B, heads, T, head_size): each head gets its own slice of features."""
        B, T, _ = t.shape
        return t.view(B, T, self.heads, self.head_size).transpose(1, 2)

    def merge(self, t: torch.Tensor) -> torch.Tensor:
        """(B, heads, T, head_size) -> (B, T, D): the heads' outputs side by side."""
        B, _, T, _ = t.shape
        return t.transpose(1, 2).reshape(B, T, self.dim)

    def attention(self, x: torch.Tensor) -> torch.Tensor:
        """The attention weights (B, heads, T, T) for input x (B, T, D); rows are queries."""
        q, k, _ = self._qkv(x)
        return self._weights(q, k)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self._qkv(x)  # 3 × (B, heads, T, head_size)
        w = self._weights(q, k)  # (B, heads, T, T)
        return self.out(self.merge(w @ v))  # (B, T, D)

    def _qkv(self, x: torch.Tensor):
        if x.dim() != 3 or x.shape[-1] != self.dim:
            raise ValueError(f"MultiHead(dim={self.dim}) expects input [batch, tokens, {self.dim}], "
                             f"got {list(x.shape)}; reshape it or build the module with dim={x.shape[-1]}.")
        return tuple(self.split(t) for t in self.qkv(x).chunk(3, dim=-1))

    def _weights(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_size)  # (B, heads, T, T)
        if self.causal:
            scores = mask_future(scores)
        return scores.softmax(dim=-1)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, heads={self.heads}, head_size={self.head_size}, causal={self.causal}"
