"""How long the attention's updates come out: each head's through its block of W_O, each layer's
next to the residual stream it joins.

The article says the recombination "decides how much weight each head's update gets". Not with one
number per head: block h is a [d × D] map. But it does change how long head h's update comes out,
and that factor can be measured, word by word (notebook 03): the length of z_h · W_O[h] over the
length of z_h. Notebook 01 says that in the 12-layer classroom model the updates from layer 1 on are
shorter than the stream they join: a claim about every position, so `update_ratios` measures each one.
"""

from __future__ import annotations

import numpy as np
import torch

from ..core.arrays import to_numpy
from ..core.evaluation import HELD_OUT_SEED, N_CTX, held_out_stories, one_thread, story_ids
from ..core.model import LanguageModel


def head_scaling(steps, word: int) -> dict[str, np.ndarray]:
    """For one word, per head (H,): "update" |z_h|, "scale" |z_h · W_O[h]| / |z_h| (what the block does to
    its length) and "contribution" |z_h · W_O[h]| (the head's row in the sum), so contribution = update · scale.
    steps: a layer's MultiHeadSteps (walk.steps())."""
    z = to_numpy(steps.z)[:, word]  # (H, d): each head's update for the word
    out = to_numpy(steps.per_head)[:, word]  # (H, D): the same through its own block
    update, contribution = np.linalg.norm(z, axis=-1), np.linalg.norm(out, axis=-1)
    return {"update": update, "scale": contribution / update, "contribution": contribution}


@torch.no_grad()
def update_ratios(lm: LanguageModel, sentence: str | None = None, n_stories: int = 64,
                  seed: int = HELD_OUT_SEED) -> np.ndarray:
    """(n_layer, positions): each attention update's length over the length of the stream it joins.
    With a sentence, its tokens (read as the model was trained); otherwise every token of n_stories
    held-out stories."""
    if sentence is not None:
        ids = torch.tensor([lm.tokenizer.encode(sentence, bos=lm.bos)])  # (1, T)
    else:
        ids = story_ids(lm, held_out_stories(n_stories, seed, min(N_CTX, lm.config.n_ctx)))  # (B, T)
    with one_thread():
        out = lm.model(ids, keep=True)
    B, L, H, T, d = out.head_outputs.shape
    ratios = []
    for i, block in enumerate(lm.model.h):
        merged = out.head_outputs[:, i].transpose(1, 2).reshape(B, T, H * d)  # (B, T, D): heads side by side
        update = block.attn.c_proj(merged)  # (B, T, D): what layer i's attention adds
        ratios.append((update.norm(dim=-1) / out.residuals[:, i].norm(dim=-1)).reshape(-1))
    return torch.stack(ratios).numpy()  # (L, B·T)
