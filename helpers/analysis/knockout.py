"""Knock-out experiments: remove heads and watch what the model can no longer predict.

    with knock_out(lm, [(0, 9), (1, 3)], mode="mean"):
        run = run_sentence(lm, "list : bed fox mat . again : bed")   # L0 H9 and L1 H3 removed

A head is removed with a PyTorch forward hook, as TransformerLens ablates, so the model itself
knows nothing of experiments: the hook sits before each layer's output projection (c_proj),
whose input is the heads side by side, (B, T, n_head * d_head), and overwrites the removed
heads' slices: with zeros ("zero"), or with the head's average output ("mean", so the rest of
the network still gets a typical input from that slot, just not one that depends on the
sentence). The hooks are removed when the `with` block ends, however it ends.

Circuits (notebook 06 §8) ask a narrower question of the same runs: with a head removed, do the heads
that do a job still look at the right words? If not, they found their targets through what the
removed head wrote: the two heads form a circuit (readers_score, layer_knockouts).
"""

from __future__ import annotations

import functools
import random
import weakref

import numpy as np
import torch

from ..core.arguments import is_whole_number, whole_number
from ..core.evaluation import HELD_OUT_SEED, forced_hits, held_out_stories, one_thread, story_ids
from ..core.language import FORCED
from ..core.model import GPT, LanguageModel
from ..core.run import run_sentence
from .detectors import repeated_random_tokens
from .relations import pair_scores, ranked_heads, relation_pairs, residual_stream

MODES = ("zero", "mean")
LOW_SCORE = 0.05  # a head scoring below this for a relation does not look at it
# Notebook 06's knock-out demo: the 4 best induction heads removed, "fox" (0.99) is no longer the
# top word (tests/test_head_analysis.py). Longer lists keep enough copying to survive, e.g.
# "list : red mat old fox . again : red mat old" still says "fox" (0.87).
KNOCKOUT_SENTENCE = "list : bed fox mat . again : bed"
_MEANS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()  # model -> (L, H, d_head)
_FORCED: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()  # model -> {(relation, ...): run}


def head_label(layer: int, head: int) -> str:
    return f"L{layer} H{head}"


def parse_head(label: str) -> tuple[int, int]:
    """'L5 H3' or '5.3' -> (5, 3)."""
    text = str(label).strip().upper().replace("L", "").replace("H", " ").replace(".", " ")
    parts = text.split()
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        raise ValueError(f"Cannot read head {label!r}; write it as 'L5 H3' or '5.3' (layer.head).")
    return int(parts[0]), int(parts[1])


def check_head_list(lm: LanguageModel, heads) -> list[tuple[int, int]]:
    """The heads as (layer, head) pairs, each checked against the model's size."""
    cfg = lm.config
    example = "e.g. [(3, 4), (5, 1)] or ['L3 H4']"
    if isinstance(heads, (str, bytes)) or not hasattr(heads, "__iter__") or (
            isinstance(heads, tuple) and len(heads) == 2 and all(map(is_whole_number, heads))):
        raise ValueError(f"heads={heads!r} must be a list of (layer, head) pairs, {example}.")
    out = []
    for item in heads:
        if isinstance(item, str):
            layer, head = parse_head(item)
        elif isinstance(item, (tuple, list)) and len(item) == 2 and all(map(is_whole_number, item)):
            layer, head = whole_number(item[0], "layer"), whole_number(item[1], "head")  # np.int64 and tensors too
        else:
            raise ValueError(f"{item!r} in heads is not a (layer, head) pair of whole numbers; {example}.")
        if not (0 <= layer < cfg.n_layer and 0 <= head < cfg.n_head):
            raise ValueError(f"Head {head_label(layer, head)} does not exist; {lm.name} has layers "
                             f"0..{cfg.n_layer - 1} and heads 0..{cfg.n_head - 1}.")
        out.append((layer, head))
    return out


@torch.no_grad()
def head_means(lm: LanguageModel, ids: torch.Tensor | None = None) -> torch.Tensor:
    """Each head's output averaged over batch and positions -> (n_layer, n_head, d_head).

    Default input: 16 held-out stories for classroom models, repeated random tokens otherwise.
    """
    if ids is None:
        try:
            # 16 stories = 1024 positions per head: plenty for a mean, and 4 times cheaper than 64
            ids = story_ids(lm, held_out_stories(16, HELD_OUT_SEED, min(64, lm.config.n_ctx)))
        except ValueError:
            ids = repeated_random_tokens(lm, length=min(20, (lm.config.n_ctx - 1) // 2))
    with one_thread():
        heads = lm.model(ids, keep=True).head_outputs  # (B, L, H, T, d)
    return heads.mean(dim=(0, 3))  # over stories and positions: (L, H, d)


def cached_head_means(lm: LanguageModel) -> torch.Tensor:
    if lm.model not in _MEANS:
        _MEANS[lm.model] = head_means(lm)
    return _MEANS[lm.model]


def check_mode(mode) -> str:
    """A knock-out mode, or a one-line ValueError."""
    if mode not in MODES:
        raise ValueError(f"mode={mode!r}: choose one of {' or '.join(map(repr, MODES))}.")
    return mode


def knock_out(lm: LanguageModel, heads, mode: str = "zero") -> "KnockOut":
    """A context manager that removes `heads` from every forward pass of lm inside its `with` block.

    mode "zero" silences a head; "mean" replaces its output by its average output (head_means).
    The heads and the mode are checked now, before any `with`: a bad one is a one-line ValueError.
    """
    check_mode(mode)
    heads = check_head_list(lm, heads)
    return KnockOut(lm.model, heads, cached_head_means(lm) if mode == "mean" else None)


class KnockOut:
    """Forward pre-hooks on the output projections of the layers that lose a head; see knock_out."""

    def __init__(self, model: GPT, heads: list[tuple[int, int]], means: torch.Tensor | None = None):
        self.model, self.heads, self.means = model, heads, means  # means: (L, H, d_head), or None for zeros
        self.handles: list = []

    def __enter__(self) -> "KnockOut":
        layers = sorted({layer for layer, _ in self.heads})
        try:
            for layer in layers:
                removed = sorted({head for l, head in self.heads if l == layer})
                hook = functools.partial(self._replace, layer=layer, removed=removed)
                self.handles.append(self.model.h[layer].attn.c_proj.register_forward_pre_hook(hook))
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc_info) -> None:
        while self.handles:
            self.handles.pop().remove()

    def _replace(self, module, args, layer: int, removed: list[int]) -> tuple[torch.Tensor]:
        """c_proj's input (B, T, n_head * d_head) with each removed head's slice replaced."""
        d = self.model.config.d_head
        merged = args[0].clone()
        for head in removed:
            merged[..., head * d:(head + 1) * d] = 0.0 if self.means is None else self.means[layer, head]
        return (merged,)


@torch.no_grad()
def _forced_run(lm: LanguageModel, relation: str, n_stories: int, seed: int) -> dict:
    """What every knock-out of one relation shares, computed once per model and kept: the stories
    that hold words the relation decides, cut after the last such word, and the residual stream
    entering each layer with every head present. A knock-out then reruns only the layers from its
    first removed head up (the layers below it cannot tell), on only these stories."""
    cache = _FORCED.setdefault(lm.model, {})
    if (relation, n_stories, seed) not in cache:
        stories, xs = residual_stream(lm, n_stories, seed)  # the pass the score tables use: all heads present
        ids = story_ids(lm, stories)  # (B, T); a model without the classroom words stops here
        rows = [b for b, s in enumerate(stories) if s.forced[relation]]
        end = max((max(stories[b].forced[relation]) for b in rows), default=0) + 1  # a causal model: cut freely
        cache[(relation, n_stories, seed)] = {"stories": [stories[b] for b in rows], "ids": ids[rows, :end],
                                              "xs": [x[rows, :end] for x in xs], "results": {}}
    return cache[(relation, n_stories, seed)]


def forced_accuracy(lm: LanguageModel, relation: str, heads_knocked=(), mode: str = "zero",
                    n_stories: int = 64, seed: int = HELD_OUT_SEED) -> float:
    """Next-word accuracy at the positions the relation decides (Story.forced), heads removed.

    E.g. relation "induction": the words of the second copy of a repeated list. Each answer is
    kept per model, so asking again (a check after a notebook cell) costs nothing.
    """
    return _knocked(lm, relation, heads_knocked, mode, n_stories, seed)[0]


def forced_scores(lm: LanguageModel, relation: str, heads_knocked=(), mode: str = "zero",
                  n_stories: int = 64, seed: int = HELD_OUT_SEED) -> np.ndarray:
    """Every head's score for the relation (L, H), heads removed: its mean attention on the true
    keys, as relation_scores measures it, on the stories whose words the relation decides. From
    the same pass as forced_accuracy: does removing a head change where the others look?"""
    return _knocked(lm, relation, heads_knocked, mode, n_stories, seed)[1]


@torch.no_grad()
def _knocked(lm: LanguageModel, relation: str, heads_knocked, mode: str, n_stories: int, seed: int):
    """(accuracy, score table) with heads removed: one pass, kept per model."""
    if relation not in FORCED:
        raise ValueError(f"Relation {relation!r} decides no next word; choose one of {', '.join(FORCED)}.")
    heads = tuple(sorted(set(check_head_list(lm, heads_knocked))))
    removal = knock_out(lm, heads, mode)
    run = _forced_run(lm, relation, n_stories, seed)
    if (heads, mode) not in run["results"]:
        # below the first removed head nothing changes: start there, with the scores of a pass with every head
        first = min((layer for layer, _ in heads), default=0)
        table = _knocked(lm, relation, (), "zero", n_stories, seed)[1].copy() if heads else \
            np.full((lm.config.n_layer, lm.config.n_head), np.nan)
        triples = relation_pairs(run["stories"], relation)  # rows of this batch; all lie before its cut
        with one_thread(), removal:  # small products: see evaluation.one_thread
            out = lm.model.run_blocks(run["xs"][first], first)  # from layer `first` up
        if triples:
            table[first:] = pair_scores(out.attentions, triples)  # (B', L - first, H, T', T') -> (L - first, H)
        hits = forced_hits(out.logits, run["ids"], run["stories"], relation) if run["stories"] else 0.0
        run["results"][(heads, mode)] = (hits, table)
    return run["results"][(heads, mode)]


# --- next-word probabilities before and after --------------------------------------
def _word(lm: LanguageModel, token_id: int) -> str:
    word = lm.tokenizer.decode([token_id])
    word = word[0] if isinstance(word, list) else str(word)
    return repr(word) if word != word.strip() or not word else word  # show GPT-2's leading spaces


def next_word_change(lm: LanguageModel, sentence: str, heads_knocked=(), mode: str = "zero",
                     top_k: int = 5, before: torch.Tensor | None = None) -> dict:
    """Next-word probabilities with all heads and with `heads_knocked` removed.

    Returns {"words", "before", "after"}: the union of both top-k lists, most likely (before) first.
    `before`: the all-heads probabilities (V,) if already known (the knock-out widget keeps them).
    """
    removal = knock_out(lm, heads_knocked, mode)
    if before is None:
        before = run_sentence(lm, sentence).next_word_probs()  # (V,)
    after = before  # nothing removed: nothing to rerun
    if removal.heads:
        with removal:
            after = run_sentence(lm, sentence).next_word_probs()
    ids = list(dict.fromkeys(before.topk(top_k).indices.tolist() + after.topk(top_k).indices.tolist()))
    ids.sort(key=lambda i: (-before[i].item(), -after[i].item()))
    return {"words": [_word(lm, i) for i in ids], "before": before[ids].numpy(), "after": after[ids].numpy()}


# --- summaries and exercise checks ----------------------------------------------------
def low_scorers(table: np.ndarray, below: float = LOW_SCORE) -> list[tuple[int, int]]:
    """Every head whose score in `table` is below `below`: heads that do not look at the relation."""
    return [(int(l), int(h)) for l, h in zip(*np.nonzero(np.nan_to_num(table, nan=0.0) < below))]


def knockout_control(lm: LanguageModel, relation: str, table: np.ndarray, k: int = 4, draws: int = 6,
                     below: float = LOW_SCORE, mode: str = "zero", seed: int = 0) -> dict:
    """The control for a knock-out of k heads: `draws` seeded random sets of k heads, each drawn
    among the heads scoring below `below`. Returns {"heads", "accuracy", "mean", "min", "max"}.

    The bottom of a ranking is many near-zero scores in an order set by chance, so "the k worst"
    is one arbitrary set; several random draws show how much removing *some* k idle heads costs."""
    pool = low_scorers(table, below)
    rng = random.Random(seed)
    heads = [sorted(rng.sample(pool, min(k, len(pool)))) for _ in range(draws)]
    accuracy = [forced_accuracy(lm, relation, h, mode) for h in heads]
    return {"heads": heads, "accuracy": accuracy, "mean": float(np.mean(accuracy)),
            "min": float(min(accuracy)), "max": float(max(accuracy))}


def knockout_summary(lm: LanguageModel, relation: str, table: np.ndarray, k: int = 4, mode: str = "zero",
                     draws: int = 6) -> dict:
    """Forced accuracy with all heads, without the k best heads of `table`, and the control:
    k random low scorers removed, `draws` times (see knockout_control)."""
    best = [head for head, _ in ranked_heads(table, k=k)]
    return {"all heads": forced_accuracy(lm, relation, mode=mode),
            f"best {k} removed": forced_accuracy(lm, relation, best, mode),
            "control": knockout_control(lm, relation, table, k, draws, mode=mode)}


# --- circuits: does removing one head change where the other heads look? ----------------
def readers_score(lm: LanguageModel, relation: str, readers, heads_knocked=(), mode: str = "zero") -> float:
    """The mean score of the `readers` heads for a relation (as relation_scores measures it) with
    `heads_knocked` removed; it shares forced_accuracy's pass, so asking for both costs one."""
    readers = check_head_list(lm, readers)
    table = forced_scores(lm, relation, heads_knocked, mode)
    return float(sum(table[layer, head] for layer, head in readers) / len(readers))


def layer_knockouts(lm: LanguageModel, relation: str, readers, layer: int = 0, mode: str = "zero") -> list[dict]:
    """Remove each head of one layer in turn: the relation's accuracy without it, and the `readers`' score.
    A head that costs accuracy while the readers keep looking at the right words matters in another way."""
    return [{"head": (layer, head), "accuracy": forced_accuracy(lm, relation, [(layer, head)], mode),
             "readers": readers_score(lm, relation, readers, [(layer, head)], mode)}
            for head in range(lm.config.n_head)]
