"""One-sentence captions computed from the numbers a figure shows.

A caption says what the picture shows for someone who cannot see it (alt text), and
gives the teacher a line to say (speaker notes). Each function reads the same data as
the figure, so the caption changes when the data does:

    head_caption(attn, tokens, layer=4, head=3)
    # 'Layer 4, head 3: 91 % of the attention rests on <bos> or a full stop.'
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..core.arrays import to_numpy

RESTING = ("<bos>", "<|endoftext|>", ".")  # where heads park attention they do not need


def _pct(x: float) -> str:
    return f"{100 * x:.0f} %"


def resting_share(attn, tokens: Sequence[str]) -> float:
    """Mean share of each query's attention on <bos> or full stops (attn: (T, T))."""
    a = to_numpy(attn)
    rest = np.isin(np.asarray(tokens), RESTING)
    return float(a[:, rest].sum(-1).mean())


def offset_share(attn, k: int) -> float:
    """Mean attention from each word to the word k places back (k = 0: itself), over the words that have one."""
    a = to_numpy(attn)
    T = a.shape[-1]
    return float(np.mean([a[i, i - k] for i in range(k, T)])) if T > k else 0.0


def induction_share(attn, tokens: Sequence[str]) -> tuple[float, int]:
    """Mean attention from a repeated word to the word after its earlier copy, and how many words repeat."""
    a, shares = to_numpy(attn), []
    for i, word in enumerate(tokens):
        earlier = [j for j in range(i - 1) if tokens[j] == word and word not in RESTING]
        if earlier:
            shares.append(a[i, earlier[-1] + 1])
    return (float(np.mean(shares)) if shares else 0.0), len(shares)


def head_pattern(attn, tokens: Sequence[str]) -> tuple[str, float]:
    """A head's strongest simple pattern and its share of the attention, e.g. ("goes to the word just before", 0.93)."""
    patterns = {"rests on <bos> or a full stop": resting_share(attn, tokens),
                "goes to the word just before": offset_share(attn, 1),
                "stays on the word itself": offset_share(attn, 0)}
    ind, n = induction_share(attn, tokens)
    if n:
        patterns[f"goes to the word after an earlier copy (over the {n} repeated words)"] = ind
    return max(patterns.items(), key=lambda kv: kv[1])


def head_caption(attn, tokens: Sequence[str], layer: int | None = None, head: int | None = None) -> str:
    """What one head mostly does, with its strongest pattern as a percentage."""
    name = f"Layer {layer}, head {head}" if layer is not None else "This head"
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
    listed = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    return f"The {len(w)} heads read '{tokens[-1]}' differently: their largest weights go to {listed}."


def shrink_caption(d_model: int, d_head: int, word: str) -> str:
    return (f"One head turns the {d_model} numbers of '{word}' into a query of {d_head}: "
            f"W_Q is [{d_model} × {d_head}], so the query is {d_model // d_head} times shorter.")


def recombination_caption(per_head, word: str) -> str:
    """Which head's decompressed update is largest for the word (per_head: (H, D))."""
    norms = np.linalg.norm(to_numpy(per_head), axis=-1)
    top = int(np.argmax(norms))
    return (f"The {len(norms)} head updates for '{word}' are each decompressed to {to_numpy(per_head).shape[-1]} "
            f"numbers and summed; head {top} adds the largest ({_pct(norms[top] / norms.sum())} of the total length).")


def loss_caption(losses: dict[int, float]) -> str:
    best = min(losses, key=losses.get)
    worst = max(losses, key=losses.get)
    return (f"Held-out loss is lowest with {best} heads ({losses[best]:.2f}) and highest with {worst} "
            f"({losses[worst]:.2f}), all at the same width.")


def head_count_caption(losses: dict[int, float], repeats: dict[int, float]) -> str:
    """Loss barely moves with the head count; repeating a list does."""
    low, high = min(losses.values()), max(losses.values())
    few, many = min(repeats), max(repeats)
    return (f"Held-out loss stays between {low:.2f} and {high:.2f} for every head count, but a repeated list "
            f"is said again correctly {_pct(repeats[few])} of the time with {few} head{'s' if few > 1 else ''} "
            f"and {_pct(repeats[many])} with {many}.")


def merge_caption(members, merged, first_name: str) -> str:
    """Which member head the merged map is closest to (members: (g, T, T), merged: (T, T))."""
    diffs = np.abs(to_numpy(members) - to_numpy(merged)[None]).mean(axis=(1, 2))
    i = int(np.argmin(diffs))
    return (f"Read as one wide head (no retraining), the {len(diffs)} heads give a map closest to "
            f"{first_name}{i} (mean difference {diffs[i]:.2f} per cell).")


def all_heads_caption(attentions, tokens: Sequence[str], highlight: tuple[int, int] | None = None) -> str:
    """How many of the heads mostly rest on <bos> or full stops, and what the framed head does."""
    a = to_numpy(attentions)  # (L, H, T, T)
    L, H = a.shape[:2]
    resting = sum(resting_share(a[l, h], tokens) > 0.5 for l in range(L) for h in range(H))
    text = f"{resting} of the {L * H} heads put more than half of their attention on <bos> or a full stop"
    if highlight is None:
        return text + "."
    what, share = head_pattern(a[highlight], tokens)
    return text + f"; in the framed head (layer {highlight[0]}, head {highlight[1]}) {_pct(share)} of it {what}."


def scores_caption(scores: dict) -> str:
    best = {r: float(np.nanmax(t)) for r, t in scores.items()}
    strong = [r for r, s in best.items() if s >= 0.8]
    top = max(best, key=best.get)
    weak = min(best, key=best.get)
    return (f"{len(strong)} of {len(best)} relations have a head scoring at least 0.8; the best is {top} "
            f"({best[top]:.2f}), the weakest {weak} ({best[weak]:.2f}).")


def types_caption(types) -> str:
    t = np.asarray(types)
    named = t[t != "none"]
    names, counts = np.unique(named, return_counts=True)
    common = names[np.argmax(counts)] if len(names) else "none"
    return (f"{named.size} of {t.size} heads reach 0.5 on some relation; the most common type is "
            f"{common} ({counts.max() if len(names) else 0} heads).")


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
