"""Circuits (notebook 06 §8): does removing one head change where the other heads look?

A knock-out (ablation.py) tells what the model can no longer predict without a head. Two heads
can cost the same accuracy for different reasons. Here we ask a narrower question: with a head
removed, do the heads that do a job still put their attention on the right words? If they no
longer do, they were finding their targets with what the removed head wrote: the two heads
form a circuit.
"""

from __future__ import annotations

import torch

from .ablation import check_heads, forced_accuracy, knock_out
from .catalog import LanguageModel
from .scores import one_thread, pair_scores, relation_pairs, residual_stream, scored_stories
from .train import HELD_OUT_SEED


@torch.no_grad()
def readers_score(lm: LanguageModel, relation: str, readers, heads_knocked=(), mode: str = "zero",
                  n_stories: int = 64, seed: int = HELD_OUT_SEED) -> float:
    """The mean score of the `readers` heads for a relation (their attention on its true keys, as
    in relation_scores), measured with `heads_knocked` removed."""
    readers, knocked = check_heads(lm, readers), check_heads(lm, heads_knocked)
    stories, xs = residual_stream(lm, n_stories, seed)  # cached: the pass the score tables use
    _, attn = scored_stories(lm, n_stories, seed)
    triples = relation_pairs(stories, relation)
    if not triples:
        raise ValueError(f"The held-out stories hold no {relation!r} pairs to score.")
    rows = sorted({b for b, _, _ in triples})  # only the stories where the relation occurs
    end = max(q for _, q, _ in triples) + 1  # a causal model: later words change nothing
    triples = [(rows.index(b), q, k) for b, q, k in triples]
    head_scale, head_mean = knock_out(lm, knocked, mode)
    first = min((layer for layer, _ in knocked), default=lm.config.n_layer)
    maps = [attn[rows, i, :, :end, :end] for i in range(lm.config.n_layer)]  # layers below `first` are unchanged
    x = xs[first][rows, :end]
    with one_thread():  # small products: see scores.one_thread
        for i in range(first, lm.config.n_layer):
            x, maps[i] = lm.model.h[i](x, head_scale[i], None if head_mean is None else head_mean[i])
    table = pair_scores(torch.stack(maps, dim=1), triples)  # (L, H)
    return float(sum(table[layer, head] for layer, head in readers) / len(readers))


def layer_knockouts(lm: LanguageModel, relation: str, readers, layer: int = 0, mode: str = "zero") -> list[dict]:
    """Remove each head of one layer in turn. For each: the relation's accuracy without it, and how
    much attention the `readers` still put on their targets. A head that costs accuracy while the
    readers keep looking at the right words matters in some other way."""
    return [{"head": (layer, head), "accuracy": forced_accuracy(lm, relation, [(layer, head)], mode),
             "readers": readers_score(lm, relation, readers, [(layer, head)], mode)}
            for head in range(lm.config.n_head)]
