"""The numbers notebook 02's sentences quote, measured on the shipped walkthrough models (tests/claims.py).

"walkthrough-12" (12 heads of 64) and "walkthrough-1" (notebook 01's one head) read "I like to draw" as
trained; the held-out numbers of the Going further section come from H.subject_scores / H.subject_weights.
"""

from __future__ import annotations

from functools import lru_cache

import torch

import helpers as H
from claims import Claim
from helpers.analysis.walkthrough_heads import _subject_pairs

NOTEBOOK = "02"
FOLLOWED = 0  # the head the notebook follows


@lru_cache(maxsize=None)
def walk(n_heads: int = 12, sentence: str = "I like to draw"):
    return H.walkthrough_layer("classroom", n_heads=n_heads, sentence=sentence)


def rows(n_heads: int = 12, sentence: str = "I like to draw") -> torch.Tensor:
    """The last word's attention row in every head: (heads, T)."""
    return walk(n_heads, sentence).steps().weights[:, -1]


@lru_cache(maxsize=None)
def scores(n_heads: int) -> dict:
    return H.subject_scores(walk(n_heads))


@lru_cache(maxsize=None)
def each(n_heads: int) -> dict:
    return H.subject_weights(walk(n_heads))


def one_head_opening() -> list[float]:
    w = each(1)["opening"]
    return [float(w["weight"][0].min()), float(w["weight"][0].max()), w["weight"][0].size]


def one_head_later() -> list[float]:
    w = each(1)["later"]
    return [int(w["largest"][0].sum()), w["weight"][0].size, int((w["weight"][0] > 0.5).sum()), float(w["weight"][0].max())]


def subject_heads() -> list[int]:
    s = scores(12)
    return [h for h in range(12) if round(min(float(s["opening"][h]), float(s["later"][h])), 2) >= 0.88]  # as printed


def subject_heads_sentence() -> list[float]:
    heads, s, largest = subject_heads(), scores(12), each(12)
    lowest = min(min(float(s["opening"][h]), float(s["later"][h])) for h in heads)
    later = largest["later"]["largest"][heads].sum(-1)
    return [*heads, lowest, int(largest["opening"]["largest"][heads].sum(-1).min()), int(later.min()),
            int(later.max()), largest["later"]["largest"].shape[1]]


def first_word() -> list[float]:
    twelve = walk()
    attn, pairs = _subject_pairs(twelve, 128)
    b, q, k = (torch.tensor(c) for c in zip(*pairs["first word"]))
    return [float(attn[b, 0, :, q, k].max()), float(scores(12)["first word"].mean())]


def grid() -> list[int]:
    tokens, top = walk().tokens, rows().argmax(-1).tolist()
    on = lambda word: [h for h in range(12) if tokens[top[h]] == word]
    split = [h for h in range(12) if float(rows()[h, 2:].min()) > 0.3 and abs(float(rows()[h, 2] - rows()[h, 3])) < 0.01]
    return [len(on("I")), *on("like"), len([h for h in on("to") if h not in split]), *split]


CLAIMS = [
    Claim(r"Yet the one head gave \*I\*", lambda: [float(rows(1)[0, 0])], tol=0.005),
    Claim(r"Each head works with vectors of", lambda: [768, 12, walk().d_head], tol=0),
    Claim(r"Where the one head of notebook 01 gave", lambda: [float(rows(1)[0, 0]), int((rows()[:, 0] > 0.5).sum()), 12],
          tol=0.005),
    Claim(r"^We follow head", lambda: [FOLLOWED, *rows()[FOLLOWED, :2].tolist()], tol=0.005),
    Claim(r"Head 0 is a \*\*subject head\*\*", lambda: [FOLLOWED] if FOLLOWED in subject_heads() else [-1], tol=0),
    Claim(r"Divide by √64", lambda: [walk().d_head, walk().d_head ** 0.5], tol=0),
    Claim(r"Head 0 puts .* on \*I\*, so the update is mostly", lambda: [FOLLOWED, float(rows()[FOLLOWED, 0])], tol=0.005),
    Claim(r"heads look mostly at \*I\*", grid, tol=0),
    Claim(r"^- Head 0 gives \*I\*", lambda: [FOLLOWED, float(rows()[FOLLOWED, 0])], tol=0.005),
    Claim(r"The scores are divided by √64", lambda: [walk().d_head, walk().d_head ** 0.5], tol=0),
    # Going further
    Claim(r"the subject gets .* of the activity word's attention, and in none", one_head_opening, tol=0.005),
    Claim(r"In a later sentence the head does find the subject", one_head_later, tol=0.005),
    Claim(r"find the subject wherever the sentence stands: ", subject_heads_sentence, tol=0.005),
    Claim(r"They are \*\*subject heads\*\*",
          lambda: [min(float(rows()[h, 0]) for h in subject_heads()), max(float(rows()[h, 0]) for h in subject_heads())],
          tol=0.005),
    Claim(r"No head rests", first_word, tol=0.005),
    Claim(r"Head 1 is \*\*not\*\* a subject head",
          lambda: [1, float(rows()[1, 0]), float(scores(12)["opening"][1]), float(scores(12)["later"][1])], tol=0.005),
    Claim(r"Notebooks 05 and 06 do that for", lambda: [5, 6, 12 * 12], tol=0),
]
