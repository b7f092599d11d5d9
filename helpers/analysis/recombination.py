"""How much of each head reaches the update: the recombination's blocks, measured on one word.

The article says the recombination "decides how much weight each head's update gets". Not with one
number per head: block h is a [d × D] map. But it does change how long head h's update comes out,
and that factor can be measured, word by word (notebook 03): the length of z_h · W_O[h] over the
length of z_h.
"""

from __future__ import annotations

import numpy as np

from ..core.arrays import to_numpy


def head_scaling(steps, word: int) -> dict[str, np.ndarray]:
    """For one word, per head (H,): "update" |z_h|, "scale" |z_h · W_O[h]| / |z_h| (what the block does to
    its length) and "contribution" |z_h · W_O[h]| (the head's row in the sum), so contribution = update · scale.
    steps: a layer's MultiHeadSteps (walk.steps())."""
    z = to_numpy(steps.z)[:, word]  # (H, d): each head's update for the word
    out = to_numpy(steps.per_head)[:, word]  # (H, D): the same through its own block
    update, contribution = np.linalg.norm(z, axis=-1), np.linalg.norm(out, axis=-1)
    return {"update": update, "scale": contribution / update, "contribution": contribution}


def spread(values) -> float:
    """Largest over smallest: how many times longer the longest is than the shortest."""
    values = np.asarray(values, dtype=float)
    return float(values.max() / values.min())
