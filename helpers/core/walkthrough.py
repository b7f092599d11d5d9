"""The data notebooks 01–03 walk through: one attention layer reading one sentence.

`walkthrough_layer()` returns the sentence's tokens, its embeddings, the layer's
normalised input X and the layer's per-head weights, from

- "classroom": the trained attention-only one-layer models of width 768 in data/
  ("walkthrough-1": one head of 768; "walkthrough-12": 12 heads of 64). When the
  file is missing it falls back to *seeded* weights with a SeededWeightsWarning
  (source="seeded"); a damaged file is an error that names the fix.
- "gpt2": layer 0 of GPT-2 small. GPT-2 has no single 768-wide head, so n_heads=1
  fuses its 12 heads into one 768-wide head: a thought experiment, labelled as one.
- any `LanguageModel`: layer 0 of that model.

bos=None (the default) reads the sentence the way the model was trained. The two walkthrough
models were trained on stories that start with their first word, no start token (their recipes
say bos=False, and so does the record in data/models.json), so "I like to draw" is read as the
four words of the article, [4 × 768]. Prepending <bos> would feed them a token they never read
(their held-out loss rises from 1.81 to 2.00 and from 1.67 to 1.81). The models of notebooks
04–06 were trained with <bos>, and a LanguageModel passed in follows its own `bos`.
"""

from __future__ import annotations

import math
import warnings
import zlib
from dataclasses import dataclass, field

import torch
from torch.nn import functional as F

from .arguments import whole_number
from .attention import (
    HeadSteps,
    MultiHeadSteps,
    check_heads,
    multi_head_from,
    single_head,
)
from .catalog import load_model
from .gpt2 import GPT2Unavailable, load_gpt2
from .model import LanguageModel, head_weights
from .run import run_sentence
from .tokenizer import BOS, split_words

D_MODEL = 768
SEED = 2024


@dataclass
class Walkthrough:
    """One layer and one sentence: everything the walkthrough notebooks print and plot."""

    tokens: list[str]
    residual: torch.Tensor  # (T, D) token + position embeddings: what the update is added to
    X: torch.Tensor  # (T, D) the layer's input: LayerNorm(residual)
    W_Q: torch.Tensor  # (H, D, d)
    W_K: torch.Tensor  # (H, D, d)
    W_V: torch.Tensor  # (H, D, d)
    W_O: torch.Tensor  # (H, d, D): each head's block of the recombination
    b_Q: torch.Tensor  # (H, d)
    b_K: torch.Tensor  # (H, d)
    b_V: torch.Tensor  # (H, d)
    b_O: torch.Tensor  # (D,)
    source: str  # "trained", "seeded", "gpt2" or "gpt2 (12 heads fused: a thought experiment)"
    model_name: str = ""
    notes: list[str] = field(default_factory=list)
    model: LanguageModel | None = field(default=None, repr=False, compare=False)  # None for seeded weights
    bos: bool = False  # whether a start token was put in front of the sentence

    @property
    def n_heads(self) -> int:
        return self.W_Q.shape[0]

    @property
    def d_model(self) -> int:
        return self.W_Q.shape[1]

    @property
    def d_head(self) -> int:
        return self.W_Q.shape[2]

    def weights(self) -> dict[str, torch.Tensor]:
        return {k: getattr(self, k) for k in ("W_Q", "W_K", "W_V", "W_O", "b_Q", "b_K", "b_V", "b_O")}

    def index(self, word: str) -> int:
        """Position of the last occurrence of `word` in the tokens."""
        if word not in self.tokens:
            raise ValueError(f"{word!r} is not in the sentence {self.tokens}; pick one of its tokens.")
        return len(self.tokens) - 1 - self.tokens[::-1].index(word)

    def head(self, h: int = 0, causal: bool = True) -> HeadSteps:
        """Every step of head h (the models read left to right, hence causal by default)."""
        h = whole_number(h, "head", 0, self.n_heads - 1, valid=f"this layer has heads 0..{self.n_heads - 1}")
        return single_head(self.X, self.W_Q[h], self.W_K[h], self.W_V[h],
                           self.b_Q[h], self.b_K[h], self.b_V[h], causal=causal)

    def steps(self, causal: bool = True) -> MultiHeadSteps:
        """Every step of the whole layer, ending with residual + update."""
        return multi_head_from(self.X, self.weights(), causal=causal, residual=self.residual)

    def pick_head(self, query: int, key: int) -> int:
        """A head whose `query` row peaks at `key`, the one with the most spread-out weights
        (so a weighted sum shows several words); else the head with the largest weight on `key`."""
        rows = self.steps().weights[:, query]  # (H, T)
        entropy = -(rows * rows.clamp_min(1e-12).log()).sum(-1)  # (H,)
        peaks = rows.argmax(-1) == key
        if peaks.any():
            return int(torch.where(peaks, entropy, torch.tensor(-1.0)).argmax())
        return int(rows[:, key].argmax())

    def describe(self) -> str:
        """Where the numbers come from, and whether the sentence is read as the model was trained."""
        lines = [f"{self.model_name or 'layer'}: {self.n_heads} head(s) of {self.d_head}, width {self.d_model}, "
                 f"weights: {self.source}; tokens: {self.tokens}"]
        if self.model is not None:
            trained = "with a start token" if self.model.bos else "without a start token (each story began with its first word)"
            read = "read as trained" if self.bos == self.model.bos else "NOT read as trained"
            lines.append(f"trained {trained}: {read}")
        return "\n".join(lines + self.notes)

    def next_norm(self, rows: torch.Tensor) -> torch.Tensor:
        """The LayerNorm that reads this layer's output next: the next layer's, or the final one (T, D)."""
        if self.model is None:  # seeded: a plain LayerNorm, no learned scale
            return F.layer_norm(rows, (self.d_model,))
        blocks = self.model.model.h
        with torch.no_grad():
            return blocks[1].ln_1(rows) if len(blocks) > 1 else self.model.model.ln_f(rows)

    def next_words(self, row: torch.Tensor, k: int = 3) -> str:
        """The model's top k next words when `row` (D,) is all the final LayerNorm reads."""
        if self.model is None or len(self.model.model.h) > 1:
            return "no prediction here: " + ("seeded weights have no vocabulary" if self.model is None
                                             else f"{self.model.name} has more layers before it predicts")
        with torch.no_grad():
            probs = self.model.model.unembed(row).softmax(-1)  # the final LayerNorm, then the tied unembedding
        top = probs.topk(k)
        words = self.model.tokenizer.decode(top.indices.tolist())
        return ", ".join(f"{w} {p:.2f}" for w, p in zip(words, top.values.tolist()))


def walkthrough_layer(model: str | LanguageModel = "classroom", n_heads: int = 12,
                      sentence: str = "I like to draw", bos: bool | None = None) -> Walkthrough:
    """Tokens, embeddings, normalised input and per-head weights of one layer reading `sentence`."""
    n_heads = whole_number(n_heads, "n_heads", low=1, example="1 or 12")  # 12.0 names no model file
    if isinstance(model, LanguageModel):
        return _from_model(model, n_heads, sentence, bos, source="trained")
    if model == "gpt2":
        try:
            return _from_model(load_gpt2(), n_heads, sentence, bos, source="gpt2")
        except GPT2Unavailable as err:  # offline: say what is missing, then teach with the classroom layer
            print(f"{err} Using the classroom walkthrough model instead.")
            model = "classroom"
    if model != "classroom":
        raise ValueError(f"model={model!r} is not known here; use 'classroom', 'gpt2' or a loaded LanguageModel.")
    if n_heads not in (1, 12):
        raise ValueError(f"n_heads={n_heads}: the walkthrough models have 1 head of 768 or 12 heads of 64; "
                         f"use n_heads=1 or n_heads=12.")
    split_words(sentence)  # empty sentence -> one-line error before anything loads
    name = f"walkthrough-{n_heads}"
    try:
        lm = load_model(name)
    except FileNotFoundError as err:  # not shipped or not trained yet: teach on, but never in silence
        reason = f"{name} is not available ({str(err).splitlines()[0]})"
        warnings.warn(f"SEEDED (untrained) weights in use: {reason}", SeededWeightsWarning, stacklevel=2)
        return seeded_layer(n_heads, sentence, bool(bos), reason=reason)
    # a damaged file is not caught: read_model's one-line error names the file and the fix
    return _from_model(lm, n_heads, sentence, bos, source="trained")


class SeededWeightsWarning(UserWarning):
    """The walkthrough model's file is missing, so the numbers come from seeded stand-in weights."""


@torch.no_grad()
def _from_model(lm: LanguageModel, n_heads: int, sentence: str, bos: bool | None, source: str) -> Walkthrough:
    """Layer 0 of any LanguageModel; n_heads=1 on a many-head model fuses the heads.
    bos=None reads the sentence as the model was trained (with a start token or without)."""
    bos = lm.bos if bos is None else bool(bos)
    run = run_sentence(lm, sentence, bos=bos)  # one pass; a sentence too long for the model is refused
    tokens, residual, X = run.tokens, run.residuals[0], run.attention_inputs[0]  # (T, D): embedding, after ln_1
    w = head_weights(lm.model, 0)
    notes = []
    if n_heads != lm.config.n_head:
        if n_heads != 1:
            raise ValueError(f"n_heads={n_heads} but {lm.name} has {lm.config.n_head} heads per layer; "
                             f"use n_heads={lm.config.n_head}, or 1 to fuse them into one wide head.")
        w = fuse_heads(w)
        source = f"{source} ({lm.config.n_head} heads fused into one: a thought experiment)"
        notes.append(f"{lm.name} has no single {lm.config.n_embd}-wide head: its {lm.config.n_head} heads' "
                     f"Q/K/V are used side by side as one head with one softmax. The maps are not GPT-2's own.")
    return Walkthrough(tokens, residual.clone(), X.clone(), **w, source=source, model_name=lm.name, notes=notes,
                       model=lm, bos=bos)


def fuse_heads(w: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Treat all heads as one head as wide as the model: (H, D, d) -> (1, D, H·d)."""
    H, D, d = w["W_Q"].shape
    fused = {k: w[k].permute(1, 0, 2).reshape(1, D, H * d) for k in ("W_Q", "W_K", "W_V")}
    fused.update({k: w[k].reshape(1, H * d) for k in ("b_Q", "b_K", "b_V")})
    fused["W_O"] = w["W_O"].reshape(1, H * d, D)
    fused["b_O"] = w["b_O"]
    return fused


def word_vector(word: str, dim: int = D_MODEL) -> torch.Tensor:
    """A fixed pseudo-random embedding per word: the same word always gets the same vector."""
    g = torch.Generator().manual_seed(SEED + zlib.crc32(word.encode()))
    return torch.randn(dim, generator=g)


def seeded_layer(n_heads: int = 12, sentence: str = "I like to draw", bos: bool = False,
                 reason: str = "seeded weights were asked for", d_model: int = D_MODEL) -> Walkthrough:
    """Deterministic stand-in weights (not trained): non-uniform attention for any sentence."""
    d_head = check_heads(d_model, n_heads)
    n_heads, d_model = whole_number(n_heads, "n_heads"), whole_number(d_model, "d_model")  # checked: plain ints now
    tokens = ([BOS] if bos else []) + split_words(sentence)
    g = torch.Generator().manual_seed(SEED + n_heads)
    positions = torch.randn(len(tokens), d_model, generator=g) * 0.3
    residual = torch.stack([word_vector(t, d_model) for t in tokens]) + positions  # (T, D)
    X = F.layer_norm(residual, (d_model,))
    std = math.sqrt(1.5 / d_model)  # scaled scores then spread over about ±1.5: clearly non-uniform
    W = {k: torch.randn(n_heads, d_model, d_head, generator=g) * std for k in ("W_Q", "W_K", "W_V")}
    W["W_O"] = torch.randn(n_heads, d_head, d_model, generator=g) / math.sqrt(d_model)
    W.update({k: torch.zeros(n_heads, d_head) for k in ("b_Q", "b_K", "b_V")})
    W["b_O"] = torch.zeros(d_model)
    note = (f"SEEDED weights, not trained: {reason}. The attention is deterministic and non-uniform "
            f"but means nothing yet.")
    return Walkthrough(tokens, residual, X, **W, source="seeded", model_name=f"seeded-{n_heads}", notes=[note], bos=bos)
