"""How long each layer's attention update is next to the residual stream it joins.

Notebook 01 says that in the 12-layer classroom model the attention updates from layer 1 on are
shorter than the stream they are added to. That is a claim about every position of every input it
names, so it is measured on each position, not on a mean: `update_ratios` gives one ratio per layer
and position, read from the one kept forward pass (the update is c_proj of the kept head outputs).
"""

from __future__ import annotations

import numpy as np
import torch

from ..core.evaluation import HELD_OUT_SEED, N_CTX, held_out_stories, one_thread, story_ids
from ..core.model import LanguageModel


@torch.no_grad()
def _ratios(lm: LanguageModel, ids: torch.Tensor) -> np.ndarray:
    """ids (B, T) -> (L, B·T): |attention update| / |stream entering the block|, per layer and position."""
    with one_thread():
        out = lm.model(ids, keep=True)
    B, L, H, T, d = out.head_outputs.shape
    ratios = []
    for i, block in enumerate(lm.model.h):
        merged = out.head_outputs[:, i].transpose(1, 2).reshape(B, T, H * d)  # (B, T, D): heads side by side
        update = block.attn.c_proj(merged)  # (B, T, D): what layer i's attention adds
        ratios.append((update.norm(dim=-1) / out.residuals[:, i].norm(dim=-1)).reshape(-1))
    return torch.stack(ratios).numpy()


def update_ratios(lm: LanguageModel, sentence: str | None = None, n_stories: int = 64,
                  seed: int = HELD_OUT_SEED) -> np.ndarray:
    """(n_layer, positions): each attention update's length over the length of the stream it joins.
    With a sentence, its tokens (read as the model was trained); otherwise every token of n_stories
    held-out stories."""
    if sentence is not None:
        return _ratios(lm, torch.tensor([lm.tokenizer.encode(sentence, bos=lm.bos)]))
    stories = held_out_stories(n_stories, seed, min(N_CTX, lm.config.n_ctx))
    return _ratios(lm, story_ids(lm, stories))
