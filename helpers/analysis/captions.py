"""Sentences computed from the numbers a figure shows: the deck's captions and every notebook figure's alt text.

A caption says what the picture shows for someone who cannot see it (alt text), and
gives the teacher a line to say (speaker notes). Each function reads the same data as
the figure, so the sentence changes when the data does:

    head_caption(attn, tokens, layer=4, head=3)
    # 'Layer 4, head 3: 91 % of the attention rests on <bos> or a full stop.'
    ranked_words({"induction": table}, "induction", 3)
    # 'The 3 best heads for induction: L1 H4 0.97, L1 H10 0.92 and L1 H2 0.85 (mean attention on the true key).'
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..core.arrays import to_numpy
from .detectors import first_token_scores, induction_match
from .relations import GRAMMAR, POSITIONAL_TYPES, type_counts

RESTING = ("<bos>", "<|endoftext|>", ".")  # where heads park attention they do not need


def _pct(x: float) -> str:
    return f"{100 * x:.0f} %"


def listed(parts) -> str:
    """'a', 'a and b', 'a, b and c'."""
    parts = list(parts)
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def resting_shares(attn, tokens: Sequence[str]) -> np.ndarray:
    """Mean share of each query's attention on <bos> or full stops, per map: (..., T, T) -> (...).
    All maps at once: the grid's caption asks it of 144 maps at every move of a control."""
    rest = np.isin(np.asarray(tokens), RESTING)
    return to_numpy(attn)[..., rest].sum(-1).mean(-1)


def offset_share(attn, k: int) -> float:
    """Mean attention from each word to the word k places back (k = 0: itself), over the words that have one."""
    a = to_numpy(attn)
    return float(np.mean([a[i, i - k] for i in range(k, a.shape[-1])])) if a.shape[-1] > k else 0.0


def induction_share(attn, tokens: Sequence[str]) -> tuple[float, int]:
    """Mean attention from a repeated word to the word after its latest earlier copy, and how many
    words repeat: detectors.induction_match on one map, as notebook 05 measures it."""
    if not any(word in tokens[:q] for q, word in enumerate(tokens)):
        return 0.0, 0
    table, rows = induction_match(to_numpy(attn)[None, None], list(tokens))
    return float(table[0, 0]), len(rows)


def head_pattern(attn, tokens: Sequence[str]) -> tuple[str, float]:
    """A head's strongest simple pattern and its share of the attention, e.g. ("goes to the word just before", 0.93)."""
    patterns = {"rests on <bos> or a full stop": float(resting_shares(attn, tokens)),
                "goes to the word just before": offset_share(attn, 1),
                "stays on the word itself": offset_share(attn, 0)}
    ind, n = induction_share(attn, tokens)
    if n:
        patterns[f"goes to the word after an earlier copy (over the {n} repeated words)"] = ind
    return max(patterns.items(), key=lambda kv: kv[1])


def head_caption(attn, tokens: Sequence[str], layer: int | None = None, head: int | None = None,
                 name: str | None = None) -> str:
    """What one head mostly does, with its strongest pattern as a percentage; `name` replaces "Layer 4, head 3"."""
    name = name or (f"Layer {layer}, head {head}" if layer is not None else "This head")
    what, share = head_pattern(attn, tokens)
    return f"{name}: {_pct(share)} of the attention {what}."


def word_caption(row, tokens: Sequence[str], word: str) -> str:
    """Where one word looks: its largest weight and the sum."""
    w = to_numpy(row)
    top = int(np.argmax(w))
    return (f"'{word}' gives its largest weight, {w[top]:.2f}, to '{tokens[top]}'; "
            f"its {len(w)} weights sum to {w.sum():.2f}.")


def heads_caption(weights, tokens: Sequence[str]) -> str:
    """For the last word: which word each head looks at most, counted over the heads."""
    w = to_numpy(weights)[:, -1]  # (H, T): the last word's row in every head
    targets = [tokens[int(i)] for i in w.argmax(-1)]
    counts = sorted(((targets.count(t), t) for t in dict.fromkeys(targets)), reverse=True)
    parts = [f"'{t}' ({n} head{'s' if n > 1 else ''})" for n, t in counts]
    return f"The {len(w)} heads read '{tokens[-1]}' differently: their largest weights go to {listed(parts)}."


def map_caption(weights, tokens: Sequence[str]) -> str:
    """One head's map (T, T): every row sums to 1, and where the last word looks most (as notebook 01 prints)."""
    w = to_numpy(weights)
    top = int(np.argmax(w[-1]))
    return (f"Each row is one word's weights and sums to {w[-1].sum():.2f}; the last row, '{tokens[-1]}', gives "
            f"its largest weight, {w[-1, top]:.2f}, to '{tokens[top]}'.")


def shrink_caption(d_model: int, d_head: int, word: str) -> str:
    return (f"One head turns the {d_model} numbers of '{word}' into a query of {d_head}: "
            f"W_Q is [{d_model} × {d_head}], so the query is {d_model // d_head} times shorter.")


def recombination_caption(W_O_blocks, word: str) -> str:
    """The recombination's shape from the per-head blocks (H, d_head, D), as notebook 03 prints it."""
    H, d_head, D = to_numpy(W_O_blocks).shape
    return (f"The {H} head updates of {d_head} numbers for '{word}' are concatenated and multiplied by the "
            f"[{H * d_head} × {D}] recombination: {H} blocks of [{d_head} × {D}], one decompression per head.")


def loss_caption(losses: dict[int, float]) -> str:
    best = min(losses, key=losses.get)
    worst = max(losses, key=losses.get)
    return (f"Held-out loss is lowest with {best} heads ({losses[best]:.2f}) and highest with {worst} "
            f"({losses[worst]:.2f}), all at the same width.")


def head_count_caption(losses: dict[int, float], repeats: dict[int, float]) -> str:
    """Loss barely moves with the head count; repeating a list does."""
    low, high = min(losses.values()), max(losses.values())
    few, many = min(repeats), max(repeats)
    return (f"Held-out loss stays between {low:.3f} and {high:.3f} for every head count, but a repeated list "
            f"is said again correctly {_pct(repeats[few])} of the time with {few} head{'s' if few > 1 else ''} "
            f"and {_pct(repeats[many])} with {many}.")


def merge_caption(group: int, merged: float, trained: float, n_heads: int = 12, width: int = 96) -> str:
    """Held-out loss of heads merged in groups (no retraining) against a model trained with that many heads."""
    n = n_heads // group
    return (f"Merged in groups of {group} without retraining, {n_heads} heads of {width // n_heads} become {n} of "
            f"{width // n}: held-out loss {merged:.3f}, against {trained:.3f} for a model trained with {n} heads.")


def resting_caption(attentions, tokens: Sequence[str]) -> str:
    """How many heads put more than half on the first token, and the most resting one (as notebook 05 prints)."""
    first = first_token_scores(attentions)  # (L, H)
    l, h = np.unravel_index(int(first.argmax()), first.shape)
    return (f"On '{' '.join(tokens[1:])}', {(first > 0.5).sum()} of the {first.size} heads put more than half of "
            f"their attention on {tokens[0]}; the most resting, L{l} H{h}, puts {first[l, h]:.2f} there.")


def induction_caption(attentions, tokens: Sequence[str]) -> str:
    """The head that best matches the induction prediction on a repeated list (as notebook 05 prints it)."""
    table, rows = induction_match(attentions, list(tokens))
    l, h = np.unravel_index(int(table.argmax()), table.shape)
    return (f"On a list said twice, L{l} H{h} matches the induction prediction best of the {table.size} heads: "
            f"{table[l, h]:.2f} of the attention of the {len(rows)} repeated words goes to the word after their "
            f"earlier copy.")


def all_heads_caption(attentions, tokens: Sequence[str], highlight: tuple[int, int] | None = None) -> str:
    """How many of the heads mostly rest on <bos> or full stops, and what the framed head does."""
    a = to_numpy(attentions)  # (L, H, T, T)
    L, H = a.shape[:2]
    resting = int((resting_shares(a, tokens) > 0.5).sum())
    text = f"{resting} of the {L * H} heads put more than half of their attention on <bos> or a full stop"
    if highlight is None:
        return text + "."
    what, share = head_pattern(a[highlight], tokens)
    return text + f"; in the framed head (layer {highlight[0]}, head {highlight[1]}) {_pct(share)} of it {what}."


def report_caption(report: list[dict]) -> str:
    """Which relations' best heads beat the best fixed offset, from relation_report's rows (notebook 06's table)."""
    rows = [row for row in report if row["relation"] in GRAMMAR]
    beat = [row for row in rows if row["head"] is not None and row["score"] > row["baseline"]]
    tied = [row for row in rows if row["head"] is not None and row["score"] <= row["baseline"]]
    empty = [row["relation"] for row in rows if row["head"] is None]
    text = (f"Beyond the previous word, {listed(row['relation'] for row in beat)} beat the best fixed offset ("
            + ", ".join(f"{row['score']:.2f} vs {row['baseline']:.2f}" for row in beat) + ")")
    if tied:
        text += (f"; {listed(row['relation'] for row in tied)} do not (a fixed offset scores "
                 f"{min(row['baseline'] for row in tied):.2f})")
    return text + (f"; {listed(empty)} ha{'s' if len(empty) == 1 else 've'} no pair left." if empty else ".")


def types_caption(types) -> str:
    """The type counts of notebook 06: positional types, grammar types, none (types from relations.head_types)."""
    counts = type_counts(types)
    positional = {t: n for t, n in counts.items() if t in POSITIONAL_TYPES}
    grammar = {t: n for t, n in counts.items() if t not in POSITIONAL_TYPES + ("none",)}
    total = int(np.asarray(types).size)

    def listed(d):
        return ", ".join(f"{n} {t}" for t, n in d.items())
    return (f"Of the {total} heads, {sum(positional.values())} follow position ({listed(positional)}), "
            f"{sum(grammar.values())} have a grammar job position cannot explain ({listed(grammar)}) and "
            f"{counts.get('none', 0)} get no type.")


SHORT_PATTERNS = {"rests": "resting", "goes to the word just before": "previous word",
                  "stays": "the word itself", "goes to the word after": "induction"}


def zoom_head(maps, tokens) -> tuple[tuple[int, int], str]:
    """The head to show up close: the clearest pattern that is not resting, and its short name."""
    L, H = maps.shape[:2]

    def clarity(head):
        what, share = head_pattern(maps[head], tokens)
        return not what.startswith("rests"), share

    head = max(((l, h) for l in range(L) for h in range(H)), key=clarity)
    what, share = head_pattern(maps[head], tokens)
    if share < 0.5:  # no simple pattern holds most of its attention: do not name one
        return head, "no simple pattern"
    return head, next(short for start, short in SHORT_PATTERNS.items() if what.startswith(start))


# --- alt text for the notebooks' figures (the deck's captions are above) ---------------------------------
def _titled(title: str | None, text: str) -> str:
    """The figure's visible title first (a screen reader cannot read it from the picture), then the words."""
    title = " ".join(str(title or "").split())
    return f"{title.rstrip('.:')}. {text}" if title else text


def attention_words(weights, tokens: Sequence[str], keys: Sequence[str] | None = None,
                    title: str | None = None) -> str:
    """One map (T, K): its size, and where the last word and the map as a whole look most."""
    w = np.nan_to_num(to_numpy(weights))  # (T, K)
    keys = list(tokens if keys is None else keys)
    top = int(np.argmax(w[-1]))
    text = (f"Attention map, {w.shape[0]} query words down and {w.shape[1]} key words across; "
            f"the last row, '{tokens[-1]}', gives its largest weight, {w[-1, top]:.2f}, to '{keys[top]}'.")
    if w.shape[0] == w.shape[1]:
        what, share = head_pattern(w, tokens)
        text += f" On average {100 * share:.0f} % of the attention {what}."
    return _titled(title, text)


def head_words(attn, tokens: Sequence[str], title: str | None = None) -> str:
    """One head's map: its strongest pattern (captions.head_caption), after the figure's title."""
    name = " ".join(str(title or "").split()).rstrip(".:") or None
    return head_caption(np.nan_to_num(to_numpy(attn)), tokens, name=name)


def links_words(attn, tokens: Sequence[str], query: int | None = None, title: str | None = None) -> str:
    """The token links: one word's strongest links, or every word's strongest one."""
    a = np.nan_to_num(to_numpy(attn))  # (T, T)
    rows = range(len(tokens)) if query is None else [query]
    links = [f"'{tokens[q]}' to '{tokens[int(a[q].argmax())]}' ({a[q].max():.2f})" for q in rows]
    if query is None and len(links) > 6:
        links = links[-6:]
        start = "Lines join each word to the words it reads; the thickest from the last 6 words: "
    else:
        start = "Lines join each word to the words it reads; the thickest: "
    return _titled(title, start + listed(links) + ".")


def matmul_words(left: tuple[int, int], right: tuple[int, int], names: Sequence[str]) -> str:
    (n, k), (_, m) = left, right
    return (f"Shape diagram: {names[0]} [{n} × {k}] times {names[1]} [{k} × {m}] gives {names[2]} [{n} × {m}]; "
            f"the inner sizes ({k}) match, boxes drawn to scale.")


def recombination_words(z, per_head, total, word: str) -> str:
    """z (H, d), per_head (H, D), total (D,): each head's block output for one word and their sum."""
    lengths = np.linalg.norm(to_numpy(per_head), axis=-1)  # (H,)
    H, d = to_numpy(z).shape
    D = to_numpy(per_head).shape[-1]
    big, small = int(lengths.argmax()), int(lengths.argmin())
    return (f"Recombination for '{word}': each of the {H} heads' updates of {d} numbers goes through its own "
            f"block of W_O [{d} × {D}]; the longest result is head {big}'s ({lengths[big]:.1f}), the shortest "
            f"head {small}'s ({lengths[small]:.1f}), and their sum has length {np.linalg.norm(total):.1f}.")


def score_tables_words(scores: dict, relations: Sequence[str]) -> str:
    """One heat map per relation: the best head of each, with its score."""
    best = []
    for r in relations:
        table = np.nan_to_num(to_numpy(scores[r]))  # (L, H)
        l, h = np.unravel_index(int(table.argmax()), table.shape)
        best.append(f"{r} L{l} H{h} {table[l, h]:.2f}")
    return (f"Every head's score (layers down, heads across, 0 to 1) for {len(best)} relations; "
            f"the best head of each: {listed(best)}.")


def ranked_words(ranked: Sequence[tuple[tuple[int, int], float]], relation: str) -> str:
    """ranked: [((layer, head), score)] best first, as relations.ranked_heads returns it."""
    parts = [f"L{l} H{h} {s:.2f}" for (l, h), s in ranked]
    return f"The {len(parts)} best heads for {relation}: {listed(parts)} (mean attention on the true key)."


def bars_words(change: dict, sentence: str, removed: str, mode: str) -> str:
    """The knock-out bars: the most likely next word before and after removing heads."""
    words, before, after = change["words"], np.asarray(change["before"]), np.asarray(change["after"])
    b, a = int(before.argmax()), int(after.argmax())
    start = f"Next word after '{sentence}': with all heads '{words[b]}' is most likely ({before[b]:.2f}); without {removed} ({mode})"
    if a == b:
        return f"{start} it stays most likely ({after[b]:.2f})."
    return f"{start} '{words[a]}' is ({after[a]:.2f}) and '{words[b]}' gets {after[b]:.2f}."


def seed_bars_words(what: str, xs: Sequence, means: Sequence[float], fmt: str, unit: str) -> str:
    """One panel of bars over the variants: the lowest and highest mean."""
    lo, hi = int(np.argmin(means)), int(np.argmax(means))
    one = unit.removesuffix("s") if str(xs[lo]) == "1" else unit  # "1 head", "1 key/value head"
    return (f"{what[0].upper()}{what[1:]}: lowest with {xs[lo]} {one} ({fmt.format(means[lo])}), highest with {xs[hi]} "
            f"({fmt.format(means[hi])}).")


def panels_words(title: str | None, panels: Sequence[str]) -> str:
    """A figure of several panels: its title, then one sentence per panel."""
    return _titled(title, " ".join(panels))
