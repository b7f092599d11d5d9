"""How far a grammar head beats position, with its noise, and how much attention a fixed distance gets.

Notebook 06 types a head by a grammar relation when its score beats the best fixed-offset baseline
("always look k words back"). A margin of 0.02 on about 100 pairs is within the noise of which pairs
the held-out stories happen to hold, so each margin comes with a seeded bootstrap over the pairs:
resample the pairs, recompute head score minus baseline (the offset k stays the one chosen on all
pairs), and take the middle 95 % of the resampled margins.
"""

from __future__ import annotations

import numpy as np
import torch

from ..core.model import LanguageModel
from .relations import GRAMMAR, head_types, offset_baseline, pair_scores, relation_pairs, scored_stories

RESAMPLES = 2000  # bootstrap draws per head
LEVEL = 0.95  # the share of resampled margins the interval holds


def margin_interval(weights: np.ndarray, at_offset: np.ndarray, resamples: int = RESAMPLES,
                    seed: int = 0) -> tuple[float, float, float]:
    """(margin, low, high): mean of weights - at_offset over the pairs, and its bootstrap interval.
    weights (P,): the head's attention on each pair's key; at_offset (P,): 1 where the key is k back."""
    diff = np.asarray(weights, dtype=float) - np.asarray(at_offset, dtype=float)  # (P,)
    draws = np.random.default_rng(seed).integers(0, len(diff), (resamples, len(diff)))  # (R, P)
    means = diff[draws].mean(1)  # (R,)
    tail = 100 * (1 - LEVEL) / 2
    return float(diff.mean()), float(np.percentile(means, tail)), float(np.percentile(means, 100 - tail))


def grammar_margins(lm: LanguageModel, resamples: int = RESAMPLES, seed: int = 0) -> list[dict]:
    """One row per head typed by a grammar relation (head_types): head, relation, pairs, score, offset,
    baseline, margin, low, high, and clear (the whole interval above 0: beyond the noise)."""
    stories, attn = scored_stories(lm)  # (B, L, H, T, T): the held-out pass every table of 06 shares
    types, _ = head_types(lm)
    rows = []
    for layer, head in np.argwhere(np.isin(types.astype(str), GRAMMAR)):
        relation = str(types[layer, head])
        b, q, k = (torch.tensor(c) for c in zip(*relation_pairs(stories, relation, beyond_previous=True)))
        offset, baseline = offset_baseline(stories, relation, beyond_previous=True)
        weights = attn[b, layer, head, q, k].double().numpy()  # (P,): the head's weight on each true key
        margin, low, high = margin_interval(weights, (q - k == offset).numpy(), resamples, seed)
        rows.append({"head": (int(layer), int(head)), "relation": relation, "pairs": len(weights),
                     "score": float(weights.mean()), "offset": offset, "baseline": baseline,
                     "margin": margin, "low": low, "high": high, "clear": low > 0})
    return rows


def back_scores(lm: LanguageModel, distances=(2, 3)) -> dict[int, np.ndarray]:
    """{k: (L, H)}: each head's mean attention on the word k back, over every word of the held-out
    stories that has one (not only where a relation's key sits k back)."""
    stories, attn = scored_stories(lm)
    return {k: pair_scores(attn, [(b, q, q - k) for b, s in enumerate(stories) for q in range(k, len(s.tokens))])
            for k in distances}
