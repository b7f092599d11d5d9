"""What does each head attend to? Scores every head against known patterns.

Two kinds of score, both "mean attention mass on the right key", so 1.0 is a perfect head:
- relation_scores: for the classroom language, whose generator writes down the true
  (query, key) pairs of every relation, each head is scored against that ground truth.
  Position comes first (Clark et al. 2019): "previous" and "resting" (<bos> or the latest
  full stop) are positional, and relation_report compares every annotated relation with
  the best fixed-offset baseline on the pairs whose key is not the previous word.
- generic detectors (previous token, first token, duplicate token, induction): need no
  annotations, so they work on any model, GPT-2 small included.
"""

from __future__ import annotations

import weakref
from contextlib import contextmanager

import numpy as np
import torch
from matplotlib.figure import Figure

from .catalog import LanguageModel
from .language import RELATIONS, Story, StoryWriter
from .tokenizer import BOS
from .train import HELD_OUT_SEED, N_CTX

TYPE_THRESHOLD = 0.5  # a head is given a type only when its best score reaches this
# Relations fixed by position alone. "resting" is attention parked on <bos> or on the most recent
# full stop: Clark et al. (2019) found BERT's idle heads parking on [SEP] and on periods, a "no-op".
POSITIONAL = ("previous", "resting")
GRAMMAR = RELATIONS[2:]  # relations the generator annotates: their targets depend on the words
SCORED_RELATIONS = POSITIONAL + GRAMMAR  # what relation_scores scores; "bos" alone is for single sentences


# --- held-out stories through the model ---------------------------------------------
def held_out_stories(n_stories: int = 64, seed: int = HELD_OUT_SEED, n_ctx: int = N_CTX,
                     list_chance: float = 0.5) -> list[Story]:
    """Stories the model never trained on (the held-out seed), each n_ctx tokens long."""
    writer = StoryWriter(seed)
    return [writer.story(n_ctx, list_chance) for _ in range(n_stories)]


def story_ids(lm: LanguageModel, stories: list[Story]) -> torch.Tensor:
    """(B, T) token ids of the stories; only classroom models know these words."""
    ids = getattr(lm.tokenizer, "ids", None)
    if not isinstance(ids, dict) or BOS not in ids:
        raise ValueError(f"{lm.name} does not read the classroom language; use the generic detectors "
                         f"(previous_token_scores, induction_scores ...) for it.")
    return torch.tensor([[ids[t] for t in s.tokens] for s in stories])  # (B, T)


@torch.no_grad()
def story_attentions(lm: LanguageModel, stories: list[Story]) -> torch.Tensor:
    """Every attention map for a batch of stories, in one forward pass: (B, L, H, T, T)."""
    return lm.model(story_ids(lm, stories)).attentions


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


def describe_links(story: Story, relations=RELATIONS[2:], n: int = 1) -> list[str]:
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


@contextmanager
def one_thread():
    """Run torch on one thread inside the block. The classroom model's passes are many small matrix
    products; on a 2-core machine that is busy with anything else (a browser, other kernels), two
    threads wait on each other: a 64-story pass took 1.2 s of CPU on one thread against 2.2-2.8 s on
    two, and a knock-out pass 0.2 s against 1.3-2.0 s (measured under load; bench/bench_heads.py)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


@torch.no_grad()
def _story_pass(lm: LanguageModel, stories: list[Story]):
    """One pass with every head: the maps (B, L, H, T, T) and the residual stream entering each
    layer, plus the final one: L + 1 tensors (B, T, D). Knock-outs restart from the latter."""
    with one_thread():
        x = lm.model.embed(story_ids(lm, stories))  # (B, T, D)
        xs, maps = [x], []
        for block in lm.model.h:
            x, weights = block(x)
            xs.append(x)
            maps.append(weights)
        return torch.stack(maps, dim=1), xs


def _cached_pass(lm: LanguageModel, n_stories: int, seed: int):
    key = (n_stories, seed, min(N_CTX, lm.config.n_ctx))
    cached = _PASSES.get(lm.model)
    if cached is None or cached[0] != key:
        stories = held_out_stories(n_stories, seed, key[2])
        cached = _PASSES[lm.model] = (key, stories, *_story_pass(lm, stories))
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


def best_head_types(scores: dict[str, np.ndarray], threshold: float = TYPE_THRESHOLD):
    """Each head's type: position first, then grammar, then rest.

    A head is "previous" when that score reaches threshold (position explains what it does);
    otherwise it takes its best annotated relation, otherwise "resting" (or "bos"), otherwise
    "none". Pass tables scored with beyond_previous=True, so that a relation only counts where
    looking one word back would not do. Returns (types (L, H) array of names, scores (L, H)).
    """
    names = list(scores)
    if not names:
        raise ValueError("No score tables given; pass the dict that relation_scores returns.")
    shape = np.shape(scores[names[0]])
    types, best = np.full(shape, "none", dtype=object), np.zeros(shape)
    groups = [[r for r in names if r in ("resting", "bos")], [r for r in names if r not in POSITIONAL + ("bos",)],
              [r for r in names if r == "previous"]]  # lowest precedence first: later groups overwrite
    for group in groups:
        if not group:
            continue
        stack = np.stack([np.nan_to_num(scores[r], nan=-1.0) for r in group])  # (R, L, H)
        wins = stack.max(0) >= threshold
        types[wins] = np.array(group, dtype=object)[stack.argmax(0)][wins]
        best[wins] = stack.max(0)[wins]
    overall = np.stack([np.nan_to_num(scores[r], nan=0.0) for r in names]).max(0)
    best[types == "none"] = overall[types == "none"]
    return types, np.clip(best, 0.0, None)


def relation_report(lm: LanguageModel, n_stories: int = 64, seed: int = HELD_OUT_SEED) -> list[dict]:
    """One row per relation: its best head against the best fixed-offset baseline, and the head's type.

    Annotated relations are judged on the pairs whose key is not the previous word (beyond);
    the positional ones on all their pairs. Keys of a row: relation, pairs, previous_share
    (share of all pairs whose key is the previous word), head, score, offset, baseline, type."""
    stories, _ = scored_stories(lm, n_stories, seed)
    beyond = relation_scores(lm, n_stories, seed, beyond_previous=True)
    types, _ = best_head_types(beyond)
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
    table = scores if relation is None else _table(scores, relation)
    table = np.nan_to_num(np.asarray(table, dtype=float), nan=-np.inf)
    order = np.argsort(-table, axis=None, kind="stable")[:k]  # flat indices, best first
    H = table.shape[1]
    return [((int(i // H), int(i % H)), float(table.flat[i])) for i in order]


def _table(scores, relation: str) -> np.ndarray:
    if not isinstance(scores, dict):
        return np.asarray(scores)
    if relation not in scores:
        raise ValueError(f"No scores for {relation!r}; the tables hold {', '.join(scores)}.")
    return scores[relation]


# --- generic detectors: any model, any tokenizer ---------------------------------------
def _as_batch(attn) -> torch.Tensor:
    """Accept (L, H, T, T) or (B, L, H, T, T); return (B, L, H, T, T) as a float tensor."""
    attn = torch.as_tensor(attn).float()
    if attn.dim() == 4:
        attn = attn.unsqueeze(0)
    if attn.dim() != 5 or attn.shape[-1] != attn.shape[-2]:
        raise ValueError(f"Expected attention of shape (L, H, T, T) or (B, L, H, T, T), got {tuple(attn.shape)}.")
    return attn


def previous_token_scores(attn) -> np.ndarray:
    """Mean attention from each token to the one just before it, per head -> (L, H)."""
    attn = _as_batch(attn)  # (B, L, H, T, T)
    diag = attn.diagonal(offset=-1, dim1=-2, dim2=-1)  # (B, L, H, T-1): weight of t on t-1
    return diag.mean(dim=(0, -1)).numpy()


def first_token_scores(attn) -> np.ndarray:
    """Mean attention from each token (after the first) to the first one -> (L, H)."""
    attn = _as_batch(attn)
    return attn[..., 1:, 0].mean(dim=(0, -1)).numpy()  # (L, H)


def word_scores(attn, tokens: list[str], word: str) -> np.ndarray:
    """Mean attention on every copy of `word`, from the queries after its first copy -> (L, H).

    A head with nothing to do can rest on a word that says little, such as a full stop, instead
    of the first token. Tokens are compared without their spaces, so GPT-2's " ." counts as "."."""
    attn = _as_batch(attn)  # (B, L, H, T, T)
    if len(tokens) != attn.shape[-1]:
        raise ValueError(f"{len(tokens)} tokens do not match attention over {attn.shape[-1]}; pass run.tokens.")
    is_word = torch.tensor([t.strip() == word for t in tokens])
    if not is_word[:-1].any():
        raise ValueError(f"{word!r} is not followed by any query in these tokens; pick a word that occurs "
                         f"before the end, e.g. {tokens[1].strip()!r}.")
    first = int(is_word.nonzero()[0])
    mass = attn[..., first + 1:, :][..., is_word].sum(-1)  # (B, L, H, queries after the first copy)
    return mass.mean(dim=(0, -1)).numpy()


def duplicate_token_scores(attn, ids) -> np.ndarray:
    """Mean attention mass on earlier copies of the same token, over queries that have one."""
    attn = _as_batch(attn)  # (B, L, H, T, T)
    ids = torch.as_tensor(ids)
    ids = ids.unsqueeze(0) if ids.dim() == 1 else ids  # (B, T)
    if ids.shape != (attn.shape[0], attn.shape[-1]):
        raise ValueError(f"ids of shape {tuple(ids.shape)} do not match attention over {attn.shape[-1]} tokens.")
    same = ids[:, :, None] == ids[:, None, :]  # (B, T, T): query t, key j hold the same token
    earlier = same & torch.ones_like(same).tril(-1)  # keys strictly before the query
    has_copy = earlier.any(-1)  # (B, T)
    if not has_copy.any():
        raise ValueError("No token repeats in these ids, so duplicate-token scores are undefined.")
    mass = (attn * earlier[:, None, None].float()).sum(-1)  # (B, L, H, T)
    return mass.permute(1, 2, 0, 3)[..., has_copy].mean(-1).numpy()  # (L, H)


def induction_pattern_scores(attn, period: int) -> np.ndarray:
    """For a sequence repeated with the given period: mean attention from each query in
    the second copy to the token *after* its earlier copy (offset period - 1) -> (L, H)."""
    attn = _as_batch(attn)
    T = attn.shape[-1]
    if not 2 <= period <= T // 2:
        raise ValueError(f"period={period} must be between 2 and {T // 2} for {T} tokens.")
    diag = attn.diagonal(offset=-(period - 1), dim1=-2, dim2=-1)  # (B, L, H, T-period+1), queries period-1..
    return diag[..., 1:].mean(dim=(0, -1)).numpy()  # queries from period on: those in the second copy


def repeated_random_tokens(lm: LanguageModel, length: int = 20, batch: int = 8, seed: int = 0) -> torch.Tensor:
    """(batch, 1 + 2*length) ids: a start token, then `length` random tokens said twice."""
    if 1 + 2 * length > lm.config.n_ctx:
        raise ValueError(f"length={length} needs {1 + 2 * length} tokens; {lm.name} reads {lm.config.n_ctx}.")
    g = torch.Generator().manual_seed(seed)
    start = _start_id(lm)
    V = lm.config.vocab_size
    rows = []
    for _ in range(batch):
        pool = torch.randperm(V, generator=g)
        half = pool[pool != start][:length]  # distinct tokens, so each has one earlier copy
        rows.append(torch.cat([torch.tensor([start]), half, half]))
    return torch.stack(rows)  # (B, 1 + 2 * length)


def _start_id(lm: LanguageModel) -> int:
    """The id a sequence starts with (<bos> for classroom models, <|endoftext|> for GPT-2)."""
    return int(lm.tokenizer.encode("I", bos=True)[0])


@torch.no_grad()
def generic_scores(lm: LanguageModel, length: int = 20, batch: int = 8, seed: int = 0) -> dict[str, np.ndarray]:
    """All four detectors on one seeded batch of repeated random tokens -> {name: (L, H)}."""
    ids = repeated_random_tokens(lm, length, batch, seed)  # (B, T)
    with one_thread():  # a few hundred tokens: one thread is enough even for GPT-2 small
        attn = lm.model(ids).attentions  # (B, L, H, T, T)
    return {"previous": previous_token_scores(attn), "first": first_token_scores(attn),
            "duplicate": duplicate_token_scores(attn[:, :, :, 1:, 1:], ids[:, 1:]),
            "induction": induction_pattern_scores(attn[:, :, :, 1:, 1:], length)}


def induction_scores(lm: LanguageModel, length: int = 20, batch: int = 8, seed: int = 0) -> np.ndarray:
    """Induction score of every head on seeded random tokens said twice -> (L, H)."""
    return generic_scores(lm, length, batch, seed)["induction"]


# --- figures ------------------------------------------------------------------------
def plot_score_tables(scores: dict[str, np.ndarray], relations=None, fig: Figure | None = None,
                      cmap: str = "viridis") -> Figure:
    """One layer × head heatmap per relation, all on the same 0–1 colour scale.

    Placed with a fixed grid and one shared colour bar (no constrained layout: ~10× faster to draw)."""
    relations = list(relations or scores)
    for r in relations:
        _table(scores, r)  # one-line error for an unknown relation
    cols = min(4, len(relations))
    rows = -(-len(relations) // cols)
    fig = fig or Figure(figsize=(3.2 * cols + 1.0, 3.4 * rows))
    grid = fig.add_gridspec(rows, cols + 1, width_ratios=[1] * cols + [0.06], left=0.05, right=0.93,
                            bottom=0.2 / rows, top=1 - 0.1 / rows, wspace=0.25, hspace=0.3)
    for i, r in enumerate(relations):
        ax = fig.add_subplot(grid[i // cols, i % cols])
        table = scores[r]
        image = ax.imshow(table, cmap=cmap, vmin=0, vmax=1)
        (l, h), s = ranked_heads(table, k=1)[0]
        ax.set_title(f"{r}  (best L{l} H{h}: {s:.2f})", fontsize=10)
        ax.set_xlabel("head" if i + cols >= len(relations) else "")
        ax.set_ylabel("layer" if i % cols == 0 else "")
        ax.set_xticks(range(0, table.shape[1], 2))
        ax.set_yticks(range(0, table.shape[0], 2))
        ax.tick_params(labelsize=8)
    fig.colorbar(image, cax=fig.add_subplot(grid[:, cols]), label="mean attention on the true key")
    return fig


def plot_ranked(scores: dict[str, np.ndarray], relation: str, k: int = 10, ax=None) -> Figure:
    """Horizontal bars of the k best heads for one relation, best on top."""
    ranked = ranked_heads(scores, relation, k)
    if ax is None:
        fig = Figure(figsize=(4.5, 0.3 * k + 1), layout="constrained")
        ax = fig.subplots()
    labels = [f"L{l} H{h}" for (l, h), _ in ranked]
    values = [s for _, s in ranked]
    ax.barh(range(len(ranked)), values, color="#0072B2")  # Okabe–Ito blue
    ax.set_yticks(range(len(ranked)), labels)
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("score (mean attention on the true key)")
    ax.set_title(f"top {k} heads: {relation}")
    return ax.figure


# One colour per type (Okabe–Ito, safe for colour-blind readers); heads with no type stay light grey.
TYPE_COLOURS = {"previous": "#D55E00", "resting": "#999999", "agreement": "#0072B2", "pronoun": "#56B4E9",
                "induction": "#009E73", "object": "#E69F00", "determiner": "#F0E442", "subject": "#CC79A7",
                "bos": "#999999", "none": "#F2F2F2"}


def plot_head_types(scores: dict[str, np.ndarray], threshold: float = TYPE_THRESHOLD, ax=None) -> Figure:
    """Every head coloured by its type (best_head_types), with a legend that counts each type.

    Colours and a legend instead of words in the cells, so the picture stays readable on a slide."""
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    types, _ = best_head_types(scores, threshold)
    names = [t for t in TYPE_COLOURS if (types == t).any()]  # legend order: positional, grammar, none
    index = np.vectorize(names.index)(types)  # (L, H) of colour numbers
    if ax is None:
        ax = Figure(figsize=(9, 6), layout="constrained").subplots()
    ax.imshow(index, cmap=ListedColormap([TYPE_COLOURS[t] for t in names]), vmin=-0.5, vmax=len(names) - 0.5)
    ax.set_xticks(np.arange(-0.5, types.shape[1]), minor=True)
    ax.set_yticks(np.arange(-0.5, types.shape[0]), minor=True)
    ax.grid(which="minor", color="white", linewidth=1.5)
    ax.tick_params(which="minor", length=0)
    ax.set_xticks(range(types.shape[1]))
    ax.set_yticks(range(types.shape[0]))
    ax.set_xlabel("head")
    ax.set_ylabel("layer")
    ax.set_title(f"each head's type (none: no score reaches {threshold})")
    handles = [Patch(facecolor=TYPE_COLOURS[t], edgecolor="#666666", label=f"{t} ({int((types == t).sum())})")
               for t in names]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.02, 1), frameon=False, title="type (heads)")
    return ax.figure


# --- GPT-2 small's published heads ---------------------------------------------------
# Wang et al. 2022, "Interpretability in the Wild" (the IOI paper), as (layer, head).
PUBLISHED_GPT2_HEADS = {"previous": [(4, 11), (2, 2)], "induction": [(5, 5), (5, 8), (5, 9), (6, 9)],
                        "duplicate": [(0, 1), (0, 10), (3, 0)]}


def published_head_ranks(tables: dict[str, np.ndarray], published=None) -> list[dict]:
    """Where each published head lands in our detector's ranking (rank 1 = best of all heads)."""
    rows = []
    for detector, heads in (published or PUBLISHED_GPT2_HEADS).items():
        order = [head for head, _ in ranked_heads(tables, detector, k=tables[detector].size)]
        for layer, head in heads:
            rows.append({"detector": detector, "head": f"L{layer} H{head}",
                         "score": float(tables[detector][layer, head]), "rank": order.index((layer, head)) + 1})
    return rows
