"""A GPT-2-style decoder small enough to read in one sitting.

Pre-LayerNorm blocks, learned positions, GELU MLP, tied embeddings: the
architecture of GPT-2 small, with the same parameter names as the Hugging Face
checkpoint (``wte``, ``h.0.attn.c_attn`` ...), so one loader serves both our
classroom models and the real GPT-2. Attention is written out explicitly
because the whole point is to read the maps.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import torch
from torch import nn
from torch.nn import functional as F

from .arguments import whole_number
from .attention import mask_future


@dataclass(frozen=True)
class GPTConfig:
    """Sizes of a model. GPT-2 small is vocab_size=50257, n_ctx=1024, 12 × 12 × 768.
    Sizes are not checked here: weights.checked_config does that where they come from a file or a recipe."""

    vocab_size: int
    n_ctx: int = 64  # longest input, in tokens (GPT-2 calls this n_positions)
    n_layer: int = 12
    n_head: int = 12
    n_embd: int = 768
    mlp: bool = True  # False gives an attention-only model (the walkthrough layers)
    ln_eps: float = 1e-5
    n_kv_head: int | None = None  # key/value heads; None = n_head (GPT-2). Fewer: grouped-query attention

    def __post_init__(self):  # None: one key/value head per query head, as in GPT-2
        if self.n_kv_head is None:
            object.__setattr__(self, "n_kv_head", self.n_head)

    @property
    def d_head(self) -> int:
        return self.n_embd // self.n_head

    @property
    def group_size(self) -> int:
        """Query heads that share one key/value head (1 for GPT-2's multi-head attention)."""
        return self.n_head // self.n_kv_head

    def to_dict(self) -> dict:
        config = asdict(self)
        if config["n_kv_head"] == config["n_head"]:  # the default: models saved before the setting read the same
            del config["n_kv_head"]
        return config


@dataclass
class GPTOutput:
    logits: torch.Tensor  # (B, T, vocab)
    attentions: torch.Tensor  # (B, n_layer, n_head, T, T): rows are queries, columns keys
    # Kept only when forward(..., keep=True): what the analyses read, so none reruns the blocks.
    residuals: torch.Tensor | None = None  # (B, n_layer + 1, T, D): what enters each block, then the last output
    attention_inputs: torch.Tensor | None = None  # (B, n_layer, T, D): each block's input after ln_1
    head_outputs: torch.Tensor | None = None  # (B, n_layer, n_head, T, d_head): weights @ v, before c_proj


class SelfAttention(nn.Module):
    """Causal multi-head self-attention with a fused Q/K/V projection, as in GPT-2."""

    def __init__(self, config: GPTConfig):
        super().__init__()
        self.n_head, self.d_head, self.n_kv_head = config.n_head, config.d_head, config.n_kv_head
        kv_width = config.n_kv_head * config.d_head  # = n_embd for GPT-2; narrower when heads share keys
        self.c_attn = nn.Linear(config.n_embd, config.n_embd + 2 * kv_width)  # Q, K, V in one matrix
        self.c_proj = nn.Linear(config.n_embd, config.n_embd)  # the multihead recombination

    def forward(self, x):
        """x (B, T, D) -> (update (B, T, D), weights (B, H, T, T), per-head outputs (B, H, T, d))."""
        B, T, D = x.shape
        kv_width = self.n_kv_head * self.d_head
        q, k, v = self.c_attn(x).split([D, kv_width, kv_width], dim=-1)
        q = q.view(B, T, self.n_head, self.d_head).transpose(1, 2)  # (B, H, T, d)
        k, v = (t.view(B, T, self.n_kv_head, self.d_head).transpose(1, 2) for t in (k, v))  # (B, H_kv, T, d)
        if self.n_kv_head != self.n_head:  # grouped-query: query heads 0..g-1 read key/value head 0, and so on
            group = self.n_head // self.n_kv_head
            k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)  # (B, H, T, d)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)  # (B, H, T, T)
        weights = mask_future(scores).softmax(dim=-1)  # (B, H, T, T)
        heads = weights @ v  # (B, H, T, d)
        merged = heads.transpose(1, 2).reshape(B, T, D)  # concatenate the heads: (B, T, D)
        return self.c_proj(merged), weights, heads


class MLP(nn.Module):
    def __init__(self, config: GPTConfig):
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd)
        self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd)

    def forward(self, x):
        return self.c_proj(F.gelu(self.c_fc(x), approximate="tanh"))  # GPT-2's "gelu_new"


class Block(nn.Module):
    def __init__(self, config: GPTConfig):
        super().__init__()
        self.ln_1 = nn.LayerNorm(config.n_embd, eps=config.ln_eps)
        self.attn = SelfAttention(config)
        if config.mlp:
            self.ln_2 = nn.LayerNorm(config.n_embd, eps=config.ln_eps)
            self.mlp = MLP(config)

    def forward(self, x):
        """x (B, T, D) -> (output, weights, attention input after ln_1, per-head outputs)."""
        normed = self.ln_1(x)
        update, weights, heads = self.attn(normed)
        x = x + update  # the residual add: each word's embedding plus its update
        if hasattr(self, "mlp"):
            x = x + self.mlp(self.ln_2(x))
        return x, weights, normed, heads


class GPT(nn.Module):
    """Token ids in, next-token logits and every attention map out."""

    def __init__(self, config: GPTConfig):
        super().__init__()
        self.config = config
        self.wte = nn.Embedding(config.vocab_size, config.n_embd)
        self.wpe = nn.Embedding(config.n_ctx, config.n_embd)
        self.h = nn.ModuleList(Block(config) for _ in range(config.n_layer))
        self.ln_f = nn.LayerNorm(config.n_embd, eps=config.ln_eps)
        self.apply(_init_weights)

    def embed(self, ids: torch.Tensor) -> torch.Tensor:
        """Token plus position embeddings, (B, T) -> (B, T, D)."""
        _, T = ids.shape
        if T > self.config.n_ctx:
            raise ValueError(f"The input has {T} tokens but this model reads at most {self.config.n_ctx}; shorten it.")
        return self.wte(ids) + self.wpe(torch.arange(T, device=ids.device))

    def forward(self, ids: torch.Tensor, keep: bool = False) -> GPTOutput:
        """ids (B, T). keep=True also returns each block's input and each head's output (see GPTOutput)."""
        return self.run_blocks(self.embed(ids), 0, keep)

    def run_blocks(self, x: torch.Tensor, first: int = 0, keep: bool = False) -> GPTOutput:
        """The one loop over the blocks: x (B, T, D) enters block `first` and goes on to the logits.
        A knock-out restarts here from a kept residual: the blocks below its first removed head
        cannot tell. Maps and kept tensors cover blocks first..n_layer-1."""
        maps, residuals, normed, heads = [], [x], [], []
        for i in range(first, self.config.n_layer):
            x, weights, block_input, z = self.h[i](x)
            maps.append(weights)
            if keep:
                residuals.append(x)
                normed.append(block_input)
                heads.append(z)
        out = GPTOutput(logits=self.unembed(x), attentions=torch.stack(maps, dim=1))
        if keep:
            out.residuals, out.attention_inputs = torch.stack(residuals, 1), torch.stack(normed, 1)
            out.head_outputs = torch.stack(heads, 1)
        return out

    def unembed(self, x: torch.Tensor) -> torch.Tensor:
        """The last residual (B, T, D) -> next-token logits (B, T, vocab), with the tied embedding."""
        return self.ln_f(x) @ self.wte.weight.T

    def num_params(self) -> int:
        return sum(p.numel() for p in self.parameters())


def _init_weights(module: nn.Module) -> None:
    # GPT-2's initialisation: small normal weights, zero biases.
    if isinstance(module, (nn.Linear, nn.Embedding)):
        nn.init.normal_(module.weight, mean=0.0, std=0.02)
    if isinstance(module, nn.Linear) and module.bias is not None:
        nn.init.zeros_(module.bias)


def head_weights(model: GPT, layer: int) -> dict[str, torch.Tensor]:
    """One layer's attention weights split per head, in the layout the attention helpers use.

    W_Q, W_K, W_V: (n_head, d_model, d_head); b_Q, b_K, b_V: (n_head, d_head);
    W_O: (n_head, d_head, d_model), i.e. the 64-row blocks of the recombination; b_O: (d_model,).
    When query heads share keys and values (n_kv_head < n_head), each query head gets a copy of its
    group's W_K, W_V, b_K, b_V, exactly as the model repeats them, so every head reads alike.
    """
    cfg = model.config
    layer = whole_number(layer, "layer", 0, cfg.n_layer - 1, valid=f"this model has layers 0..{cfg.n_layer - 1}")
    attn = model.h[layer].attn
    H, d, D = cfg.n_head, cfg.d_head, cfg.n_embd
    W = attn.c_attn.weight.detach().T  # (D, D + 2·H_kv·d): x @ W gives [q | k | v]
    b = attn.c_attn.bias.detach()
    out, start = {}, 0
    for name, heads in (("Q", H), ("K", cfg.n_kv_head), ("V", cfg.n_kv_head)):
        width = heads * d
        weight = W[:, start:start + width].reshape(D, heads, d).permute(1, 0, 2)  # (heads, D, d)
        bias = b[start:start + width].reshape(heads, d)
        repeat = H // heads  # 1, except for shared keys and values
        out[f"W_{name}"] = weight.repeat_interleave(repeat, dim=0).contiguous()
        out[f"b_{name}"] = bias.repeat_interleave(repeat, dim=0).clone()
        start += width
    out["W_O"] = attn.c_proj.weight.detach().T.reshape(H, d, D).contiguous()
    out["b_O"] = attn.c_proj.bias.detach().clone()
    return out


@dataclass
class LanguageModel:
    """A model together with the tokenizer that feeds it (a classroom model or GPT-2 small)."""

    name: str
    model: GPT
    tokenizer: object  # WordTokenizer, or the GPT-2 BPE tokenizer: both have .tokens() and .encode()
    info: dict = field(default_factory=dict)
    bos: bool = True  # whether the model was trained with a start token in front of every text

    @property
    def config(self) -> GPTConfig:
        return self.model.config
