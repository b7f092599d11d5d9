"""Do the list heads need the list's markers? Induction measured on repeats with and without them.

The list game writes `list : red cup old fox . again : red cup old fox .`: after `again :` the position
of a word in the second copy can be matched to the same position after `list :`, so a head can copy a
list without ever reading which word came before which. A real induction head (Olsson et al. 2022)
finds "the word after the earlier copy of this word" from the words alone. So every story here holds
the same repeat in two formats, drawn from one seed so that only the markers differ:
- markers=True:  `list : a b c . again : a b c .` (the list game's own format),
- markers=False: `a b c . a b c .` (the same words said twice, nothing announcing either copy),
and each head is scored by its mean attention from each word of the second copy to the token right
after that word's earlier copy (the "right key"), as relations.relation_scores scores induction, so the
two numbers compare with notebook 06's score table.
"""

from __future__ import annotations

import torch
from torch.nn import functional as F

from ..core.evaluation import N_CTX, one_thread, story_ids
from ..core.language import LIST_WORDS, Story, StoryWriter
from ..core.model import LanguageModel
from ..core.tokenizer import BOS
from .relations import pair_scores

REPEAT_SEED = 1_000_050  # its own held-out seed: no training run draws stories from it


def repeat_story(writer: StoryWriter, markers: bool, n_ctx: int = N_CTX, bos: bool = True) -> Story:
    """One story: 0-2 sentences, a list of 3-8 list words said twice (with or without the list game's
    markers), then sentences up to n_ctx. links["induction"] holds (query, right key) for every word
    of the second copy whose only earlier occurrence is in the first copy."""
    r = writer.rng
    s = Story(tokens=[BOS] if bos else [])
    writers = [writer.hobby, writer.agreement, writer.pronoun, writer.verb_object]
    for _ in range(r.randint(0, 2)):
        r.choice(writers)(s)
    words = r.sample(LIST_WORDS, r.randint(3, 8))
    first = s.add(*(["list", ":"] if markers else []), *words, ".") + (2 if markers else 0)
    second = s.add(*(["again", ":"] if markers else []), *words, ".") + (2 if markers else 0)
    for i in range(len(words) - 1):  # word i of the second copy -> word i + 1 of the first
        s.link_induction(second + i, first + i + 1)
    while len(s.tokens) < n_ctx:
        r.choice(writers)(s)
    return s.cut(n_ctx)


def repeat_stories(markers: bool, n_stories: int = 64, seed: int = REPEAT_SEED, n_ctx: int = N_CTX,
                   bos: bool = True) -> list[Story]:
    """n_stories repeat stories from `seed`; the same seed gives the same words in both formats."""
    if n_stories < 1:
        raise ValueError(f"n_stories={n_stories}; ask for at least 1 story.")
    # one writer per story: the words drawn never depend on how long the earlier stories were
    return [repeat_story(StoryWriter(seed + i), markers, n_ctx, bos) for i in range(n_stories)]


@torch.no_grad()
def repeat_run(lm: LanguageModel, markers: bool, n_stories: int = 64, seed: int = REPEAT_SEED):
    """One pass over the repeat stories: (stories, the model's output with maps (B, L, H, T, T) and logits)."""
    stories = repeat_stories(markers, n_stories, seed, min(N_CTX, lm.config.n_ctx), lm.bos)
    with one_thread():
        return stories, lm.model(story_ids(lm, stories))


def repeat_numbers(lm: LanguageModel, markers: bool = False, n_stories: int = 64, seed: int = REPEAT_SEED) -> dict:
    """From one pass over the repeat stories: "scores" (L, H), each head's mean attention from a word of the
    second copy to the token after its earlier copy; "accuracy", the share of those next words the model
    guesses right (does it copy the repeat at all?); "loss", its mean loss on them (the repeat loss)."""
    stories, out = repeat_run(lm, markers, n_stories, seed)
    triples = [(b, q, k) for b, s in enumerate(stories) for q, k in s.links["induction"]]
    b, q, k = (torch.tensor(col) for col in zip(*triples))
    target = story_ids(lm, stories)[b, k]  # the word after the earlier copy: what comes next at q
    logits = out.logits[b, q].float()  # (P, vocab)
    return {"scores": pair_scores(out.attentions, triples),
            "accuracy": (logits.argmax(-1) == target).float().mean().item(), "loss": F.cross_entropy(logits, target).item()}


def repeat_accuracy(lm: LanguageModel, markers: bool = False, n_stories: int = 64, seed: int = REPEAT_SEED) -> float:
    """Share of the second copy's next words the model gets right (repeat_numbers' "accuracy")."""
    return repeat_numbers(lm, markers, n_stories, seed)["accuracy"]


def marker_table(lm: LanguageModel, heads, n_stories: int = 64, seed: int = REPEAT_SEED) -> dict:
    """{(layer, head): (with markers, without markers)} induction scores of the named heads on a repeat
    inside a story (`list : a b c . again : a b c .` against `a b c . a b c .`, the same words): what a
    notebook's sentence about its list heads quotes."""
    with_markers = repeat_numbers(lm, True, n_stories, seed)["scores"]
    without = repeat_numbers(lm, False, n_stories, seed)["scores"]
    return {tuple(h): (float(with_markers[tuple(h)]), float(without[tuple(h)])) for h in heads}
