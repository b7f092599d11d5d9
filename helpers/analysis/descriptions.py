"""The words each notebook figure carries as alt text, computed from the numbers it draws.

captions.py holds the deck's sentences; this module adds one for every other figure a notebook
shows, so a student who cannot see the picture reads what a sighted one takes from it:

    ranked_words({"induction": table}, "induction", 3)
    # 'The 3 best heads for induction: L1 H4 0.97, L1 H10 0.92 and L1 H2 0.85 (mean attention on the true key).'
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..core.arrays import to_numpy
from .captions import head_caption, head_pattern, listed  # listed: figures call it as descriptions.listed


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
