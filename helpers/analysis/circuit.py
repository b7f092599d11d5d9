"""Circuits (notebook 06 §8): does removing one head change where the other heads look?

A knock-out (ablation.py) tells what the model can no longer predict without a head. Two heads
can cost the same accuracy for different reasons. Here we ask a narrower question: with a head
removed, do the heads that do a job still put their attention on the right words? If they no
longer do, they were finding their targets with what the removed head wrote: the two heads
form a circuit.
"""

from __future__ import annotations

from ..core.model import LanguageModel
from .knockout import check_head_list, forced_accuracy, forced_scores


def readers_score(lm: LanguageModel, relation: str, readers, heads_knocked=(), mode: str = "zero") -> float:
    """The mean score of the `readers` heads for a relation (their attention on its true keys, as in
    relation_scores), measured with `heads_knocked` removed. The knock-out's pass is shared with
    forced_accuracy: asking for both costs one pass."""
    readers = check_head_list(lm, readers)
    table = forced_scores(lm, relation, heads_knocked, mode)
    return float(sum(table[layer, head] for layer, head in readers) / len(readers))


def layer_knockouts(lm: LanguageModel, relation: str, readers, layer: int = 0, mode: str = "zero") -> list[dict]:
    """Remove each head of one layer in turn. For each: the relation's accuracy without it, and how
    much attention the `readers` still put on their targets. A head that costs accuracy while the
    readers keep looking at the right words matters in some other way."""
    return [{"head": (layer, head), "accuracy": forced_accuracy(lm, relation, [(layer, head)], mode),
             "readers": readers_score(lm, relation, readers, [(layer, head)], mode)}
            for head in range(lm.config.n_head)]
