"""What the walkthrough heads of 01-02 do on held-out stories, read as their model was trained.

Notebook 02 follows one head of walkthrough-12 on "I like to draw"; whether that head *finds the
subject* or only happens to look at "I" in this sentence is a claim about many sentences. This
module measures it: each hobby sentence's activity word ("draw") and its subject ("I"), split by
whether the sentence opens the story (the subject is then also the story's first word, where a
head with nothing to do may simply rest) or comes later.
"""

from __future__ import annotations

import numpy as np
import torch

from ..core.evaluation import HELD_OUT_SEED, N_CTX, one_thread, story_ids
from ..core.language import StoryWriter
from ..core.walkthrough import Walkthrough
from .relations import pair_scores


@torch.no_grad()
def _subject_pairs(walk: Walkthrough, n_stories: int):
    """Layer 0's maps of n_stories held-out stories (B, 1, H, T, T) and the (story, query, key) triples
    of each group; None where subject_scores gives None."""
    lm = walk.model
    if lm is None or walk.n_heads != lm.config.n_head or not isinstance(getattr(lm.tokenizer, "ids", None), dict):
        return None
    writer = StoryWriter(HELD_OUT_SEED)
    stories = [writer.story(min(N_CTX, lm.config.n_ctx), bos=lm.bos) for _ in range(n_stories)]
    with one_thread():
        attn = lm.model(story_ids(lm, stories)).attentions[:, :1]  # layer 0: (B, 1, H, T, T)
    first = int(lm.bos)  # the position of a story's first word
    pairs = {"opening": [], "later": [], "first word": []}  # (story, query, key) triples
    for b, story in enumerate(stories):
        for q, k in story.links["subject"]:
            pairs["opening" if k == first else "later"].append((b, q, k))
            if k != first:
                pairs["first word"].append((b, q, first))
    return attn, pairs


def subject_scores(walk: Walkthrough, n_stories: int = 128) -> dict[str, np.ndarray] | None:
    """Per head of layer 0, the mean weight from an activity word to its subject: {"opening": the
    sentence opens the story, "later": it does not, "first word": the weight those later queries put
    on the story's first word}, each (H,). None for seeded weights, fused heads (a thought
    experiment) or a model that does not read the classroom language."""
    found = _subject_pairs(walk, n_stories)
    if found is None:
        return None
    attn, pairs = found
    return {name: pair_scores(attn, triples)[0] for name, triples in pairs.items()}  # (1, H) -> (H,)


def subject_weights(walk: Walkthrough, n_stories: int = 128) -> dict[str, dict[str, np.ndarray]] | None:
    """The same sentences one by one, not their mean: {"opening" / "later": {"weight": (H, N) each
    activity word's weight on its subject, "largest": (H, N) True where no other word gets more}}.
    None where subject_scores gives None."""
    found = _subject_pairs(walk, n_stories)
    if found is None:
        return None
    attn, pairs = found
    out = {}
    for name in ("opening", "later"):
        b, q, k = (torch.tensor(c) for c in zip(*pairs[name]))
        rows = attn[b, 0, :, q]  # (N, H, T): each activity word's whole row, in every head
        out[name] = {"weight": rows[torch.arange(len(k)), :, k].T.numpy(),  # (H, N)
                     "largest": (rows.argmax(-1) == k[:, None]).T.numpy()}  # (H, N)
    return out
