"""What does each head attend to? Every head scored against the classroom language's ground truth.

The language's generator writes down the true (query, key) pairs of every relation, and a head's
score is its mean attention on the true keys, so 1.0 is a perfect head (models without annotations,
GPT-2 small: detectors.py). Position comes first (Clark et al. 2019): "previous" and "resting"
(<bos> or the latest full stop) are positional, and relation_report compares every annotated relation
with the best fixed-offset baseline on the pairs whose key is not the previous word. A grammar head's
margin over position comes with its noise (grammar_margins): 0.02 on about 100 pairs is within the noise
of which pairs the held-out stories hold, so each margin gets a seeded bootstrap over the pairs.
"""

from __future__ import annotations

import weakref

import numpy as np
import torch

from ..core.evaluation import HELD_OUT_SEED, N_CTX, held_out_stories, list_markers, one_thread, story_ids
from ..core.language import RELATIONS, Story
from ..core.model import LanguageModel
from .seeds import bootstrap_interval

TYPE_THRESHOLD = 0.5  # a head is given a type only when its best score reaches this
# Relations fixed by position alone. "resting" is attention parked on <bos> or on the most recent
# full stop: Clark et al. (2019) found BERT's idle heads parking on [SEP] and on periods, a "no-op".
POSITIONAL = ("previous", "resting")
GRAMMAR = RELATIONS[2:]  # relations the generator annotates: their targets depend on the words
SCORED_RELATIONS = POSITIONAL + GRAMMAR  # what relation_scores scores; "bos" alone is for single sentences
POSITIONAL_TYPES = ("previous", "offset", "resting")  # head types that position alone explains


# --- ground-truth scores for the classroom language ----------------------------------
def relation_pairs(stories: list[Story], relation: str, beyond_previous: bool = False) -> list[tuple[int, int, int]]:
    """(story, query, key) triples of one relation: the attention a perfect head would pay.

    beyond_previous=True keeps only the pairs whose key is not the word just before the query,
    the pairs that a head looking one word back cannot explain (Clark et al. 2019)."""
    if relation not in RELATIONS:
        raise ValueError(f"Unknown relation {relation!r}; choose one of {', '.join(RELATIONS)}.")
    triples = []
    for b, s in enumerate(stories):
        T = len(s.tokens)
        if relation == "previous":
            triples += [(b, t, t - 1) for t in range(1, T)]
        elif relation == "bos":
            triples += [(b, t, 0) for t in range(1, T)]
        else:
            triples += [(b, q, k) for q, k in s.links[relation]]
    if beyond_previous and relation != "previous":
        triples = [(b, q, k) for b, q, k in triples if k != q - 1]
    return triples


def resting_mask(stories: list[Story]) -> torch.Tensor:
    """(B, T, T) of 0/1: for each query, 1 on <bos> and on the most recent full stop (the query's
    own position included). Row 0, <bos> itself, has no earlier key and stays 0."""
    B, T = len(stories), max(len(s.tokens) for s in stories)
    mask = torch.zeros(B, T, T)
    for b, s in enumerate(stories):
        stop = 0  # no full stop yet: only <bos>
        for q, token in enumerate(s.tokens):
            stop = q if token == "." else stop
            if q:
                mask[b, q, 0] = mask[b, q, stop] = 1.0
    return mask


def resting_scores(attn: torch.Tensor, stories: list[Story]) -> np.ndarray:
    """Mean attention mass on <bos> plus the most recent full stop, over all queries -> (L, H)."""
    mask = resting_mask(stories)  # (B, T, T): at most two keys per query
    b, q, k = mask.nonzero(as_tuple=True)  # every (story, query, key) to add up
    mass = attn[b, :, :, q, k].float().sum(0)  # (L, H): gathering the pairs beats multiplying whole maps
    return (mass / (mask.sum(-1) > 0).sum()).numpy()


def links_table(story: Story, relations=RELATIONS[2:], n: int = 1) -> list[str]:
    """Readable lines: for each relation, its first n (query -> key) pairs with their words."""
    lines = []
    for r in relations:
        for q, k in story.links[r][:n]:
            lines.append(f"{r:>10}: query {q:2d} {story.tokens[q]!r:>10} -> key {k:2d} {story.tokens[k]!r}")
    return lines


def pair_scores(attn: torch.Tensor, triples: list[tuple[int, int, int]]) -> np.ndarray:
    """Mean attention on the given keys, per head. attn (B, L, H, T, T) -> (L, H)."""
    if not triples:
        return np.full(attn.shape[1:3], np.nan)
    b, q, k = (torch.tensor(col) for col in zip(*triples))  # 3 × (P,)
    mass = attn[b, :, :, q, k]  # (P, L, H): advanced indexing picks one weight per pair
    return mass.float().mean(0).numpy()


_PASSES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()  # model -> (key, stories, attn, xs)


@torch.no_grad()
def _cached_pass(lm: LanguageModel, n_stories: int, seed: int):
    """(stories, maps (B, L, H, T, T), the residual stream entering each layer plus the final one: L + 1
    tensors (B, T, D)) of one pass with every head, kept per model. Knock-outs restart from the stream."""
    key = (n_stories, seed, min(N_CTX, lm.config.n_ctx), list_markers(lm))
    cached = _PASSES.get(lm.model)
    if cached is None or cached[0] != key:
        stories = held_out_stories(n_stories, seed, key[2], markers=key[3])
        with one_thread():
            out = lm.model(story_ids(lm, stories), keep=True)
        cached = _PASSES[lm.model] = (key, stories, out.attentions, list(out.residuals.unbind(1)))
    return cached[1:]


def scored_stories(lm: LanguageModel, n_stories: int = 64, seed: int = HELD_OUT_SEED):
    """The held-out stories and their attention maps (B, L, H, T, T), computed once per model and
    kept: every table of a notebook, and its knock-outs (residual_stream), share one pass."""
    stories, attn, _ = _cached_pass(lm, n_stories, seed)
    return stories, attn


def residual_stream(lm: LanguageModel, n_stories: int = 64, seed: int = HELD_OUT_SEED):
    """The same stories and what enters each layer with every head present: L + 1 tensors (B, T, D)."""
    stories, _, xs = _cached_pass(lm, n_stories, seed)
    return stories, xs


def relation_scores(lm: LanguageModel, n_stories: int = 64, seed: int = HELD_OUT_SEED,
                    relations=SCORED_RELATIONS, beyond_previous: bool = False) -> dict[str, np.ndarray]:
    """Each relation's (n_layer, n_head) table: a head's mean attention on the true key.

    Stories come from the held-out seed, never a training seed. beyond_previous=True scores the
    annotated relations only on pairs whose key is not the previous word. A relation with no
    pairs gets a table of NaN (determiners, whose key is always the previous word, beyond it).
    """
    for r in relations:
        if r not in RELATIONS and r != "resting":
            raise ValueError(f"Unknown relation {r!r}; choose from {', '.join(SCORED_RELATIONS)} or 'bos'.")
    stories, attn = scored_stories(lm, n_stories, seed)  # (B, L, H, T, T)
    return {r: resting_scores(attn, stories) if r == "resting"
            else pair_scores(attn, relation_pairs(stories, r, beyond_previous)) for r in relations}


def offset_baseline(stories: list[Story], relation: str, beyond_previous: bool = False) -> tuple[int | None, float]:
    """The best fixed-offset head for a relation: (k, score) of "always look k words back".

    Such a head puts all its weight on the word k back, so its score is the share of the
    relation's pairs whose key lies exactly k back. (None, nan) when there are no pairs."""
    pairs = relation_pairs(stories, relation, beyond_previous)
    if not pairs:
        return None, float("nan")
    offsets = np.bincount([q - k for _, q, k in pairs])
    return int(offsets.argmax()), float(offsets.max() / len(pairs))


def offset_baselines(stories: list[Story], relations=GRAMMAR) -> dict[str, float]:
    """Each annotated relation's best fixed-offset score on its pairs beyond the previous word
    (offset_baseline); NaN where no pair is left. What a grammar score must beat."""
    return {r: offset_baseline(stories, r, beyond_previous=True)[1] for r in relations}


def best_head_types(scores: dict[str, np.ndarray], threshold: float = TYPE_THRESHOLD,
                    baselines: dict[str, float] | None = None):
    """Each head's type: position first, then grammar, then rest.

    A head is "previous" when that score reaches threshold (position explains what it does);
    otherwise it takes its best annotated relation whose score beats that relation's fixed-offset
    baseline (baselines, from offset_baselines); otherwise "offset" when a relation reaches threshold
    but "always look k words back" would score as well (position explains it too); otherwise
    "resting" (or "bos"), otherwise "none". Pass tables scored with beyond_previous=True. Without
    baselines no head is typed "offset". Returns (types (L, H) array of names, scores (L, H)).
    """
    names = list(scores)
    if not names:
        raise ValueError("No score tables given; pass the dict that relation_scores returns.")
    shape = np.shape(scores[names[0]])
    types, best = np.full(shape, "none", dtype=object), np.zeros(shape)
    grammar = [r for r in names if r not in POSITIONAL + ("bos",)]
    tables = {r: np.nan_to_num(scores[r], nan=-1.0) for r in names}
    beats = {r: tables[r] > np.nan_to_num((baselines or {}).get(r, -1.0), nan=1.0) for r in grammar}
    groups = [([r for r in names if r in ("resting", "bos")], {}, None),  # lowest precedence first:
              (grammar, {r: ~beats[r] for r in grammar}, "offset"),    # later groups overwrite
              (grammar, beats, None), ([r for r in names if r == "previous"], {}, None)]
    for group, keep, label in groups:
        if not group:
            continue
        stack = np.stack([np.where(keep.get(r, True), tables[r], -1.0) for r in group])  # (R, L, H)
        wins = stack.max(0) >= threshold
        types[wins] = label or np.array(group, dtype=object)[stack.argmax(0)][wins]
        best[wins] = stack.max(0)[wins]
    overall = np.stack([np.nan_to_num(scores[r], nan=0.0) for r in names]).max(0)
    best[types == "none"] = overall[types == "none"]
    return types, np.clip(best, 0.0, None)


def head_types(lm: LanguageModel, n_stories: int = 64, seed: int = HELD_OUT_SEED):
    """Every head's type on the held-out stories, (types (L, H), best scores (L, H)): the one call
    behind notebook 05's labelled grid, notebook 06's type map and counts, and the deck's slide."""
    stories, _ = scored_stories(lm, n_stories, seed)
    beyond = relation_scores(lm, n_stories, seed, beyond_previous=True)
    return best_head_types(beyond, baselines=offset_baselines(stories))


def type_counts(types) -> dict[str, int]:
    """How many heads have each type, positional types first, then grammar, then "none"."""
    order = list(POSITIONAL_TYPES) + list(GRAMMAR) + ["bos", "none"]
    found = [str(t) for t in np.asarray(types, dtype=object).ravel()]
    return {t: found.count(t) for t in sorted(set(found), key=lambda t: order.index(t) if t in order else len(order))}


def relation_report(lm: LanguageModel, n_stories: int = 64, seed: int = HELD_OUT_SEED) -> list[dict]:
    """One row per relation: its best head against the best fixed-offset baseline, and the head's type.

    Annotated relations are judged on the pairs whose key is not the previous word (beyond);
    the positional ones on all their pairs. Keys of a row: relation, pairs, previous_share
    (share of all pairs whose key is the previous word), head, score, offset, baseline, type."""
    stories, _ = scored_stories(lm, n_stories, seed)
    beyond = relation_scores(lm, n_stories, seed, beyond_previous=True)
    types, _ = head_types(lm, n_stories, seed)
    rows = []
    for r in SCORED_RELATIONS:
        pairs = relation_pairs(stories, "bos" if r == "resting" else r)  # resting: one pair per query
        previous = [(b, q, k) for b, q, k in pairs if k == q - 1]
        (head, score), = ranked_heads(beyond, r, k=1)
        offset, baseline = (None, float("nan")) if r == "resting" else offset_baseline(stories, r, r != "previous")
        empty = np.isnan(beyond[r]).all()
        rows.append({"relation": r, "pairs": len(pairs) - (len(previous) if r not in POSITIONAL else 0),
                     "previous_share": float("nan") if r == "resting" or not pairs else len(previous) / len(pairs),
                     "head": None if empty else head, "score": float("nan") if empty else score,
                     "offset": offset, "baseline": baseline, "type": None if empty else types[head]})
    return rows


def ranked_heads(scores: dict[str, np.ndarray] | np.ndarray, relation: str | None = None,
                 k: int = 5) -> list[tuple[tuple[int, int], float]]:
    """The k heads that score highest for one relation: [((layer, head), score), ...]."""
    table = scores if relation is None else score_table(scores, relation)
    table = np.nan_to_num(np.asarray(table, dtype=float), nan=-np.inf)
    order = np.argsort(-table, axis=None, kind="stable")[:k]  # flat indices, best first
    H = table.shape[1]
    return [((int(i // H), int(i % H)), float(table.flat[i])) for i in order]


def score_table(scores, relation: str) -> np.ndarray:
    if not isinstance(scores, dict):
        return np.asarray(scores)
    if relation not in scores:
        raise ValueError(f"No scores for {relation!r}; the tables hold {', '.join(scores)}.")
    return scores[relation]


# --- how far a grammar head beats position, with its noise ------------------------------
RESAMPLES = 2000  # bootstrap draws per head
LEVEL = 0.95  # the share of resampled margins the interval holds


def margin_interval(weights: np.ndarray, at_offset: np.ndarray, resamples: int = RESAMPLES,
                    seed: int = 0) -> tuple[float, float, float]:
    """(margin, low, high): mean of weights - at_offset over the pairs, and its bootstrap interval.
    weights (P,): the head's attention on each pair's key; at_offset (P,): 1 where the key is k back
    (k chosen once, on all pairs)."""
    diff = np.asarray(weights, dtype=float) - np.asarray(at_offset, dtype=float)  # (P,)
    return (float(diff.mean()), *bootstrap_interval(diff, LEVEL, resamples, seed))


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
