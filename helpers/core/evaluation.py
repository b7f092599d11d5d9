"""Held-out stories and how a model is measured on them: loss, and accuracy where a relation decides.

Every score in the notebooks reads stories from HELD_OUT_SEED, a seed no training run uses.
"""

from __future__ import annotations

import functools
from contextlib import contextmanager

import torch
from torch.nn import functional as F

from .language import FORCED, Story, StoryWriter
from .model import GPT, LanguageModel
from .tokenizer import BOS, WordTokenizer

N_CTX = 64  # tokens per story: the context every classroom model is trained with

HELD_OUT_SEED = 1_000_003  # stories for evaluation come from their own seed, never seen in training


# --- held-out stories through the model ---------------------------------------------
def held_out_stories(n_stories: int = 64, seed: int = HELD_OUT_SEED, n_ctx: int = N_CTX,
                     list_chance: float = 0.5, markers: bool = True) -> list[Story]:
    """Stories the model never trained on (the held-out seed), each n_ctx tokens long. markers=False writes
    their lists without `list :` / `again :`, as notebook 08's recipe was trained."""
    writer = StoryWriter(seed)
    return [writer.story(n_ctx, list_chance, markers=markers) for _ in range(n_stories)]


def list_markers(lm: LanguageModel) -> bool:
    """Whether the model's lists were written with their markers in training (all but notebook 08's recipe)."""
    return bool(lm.info.get("list_markers", True))


def story_ids(lm: LanguageModel | WordTokenizer, stories: list[Story]) -> torch.Tensor:
    """(B, T) token ids of the stories, for a model or its tokenizer; only classroom models know these words."""
    ids = getattr(getattr(lm, "tokenizer", lm), "ids", None)
    if not isinstance(ids, dict) or BOS not in ids:
        who = getattr(lm, "name", "This vocabulary")  # a tokenizer has no name
        raise ValueError(f"{who} does not read the classroom language; use the generic detectors "
                         f"(previous_token_scores, induction_scores ...) for it.")
    return torch.tensor([[ids[t] for t in s.tokens] for s in stories])  # (B, T)


@contextmanager
def one_thread(threads: int = 1):
    """Run torch on `threads` threads inside the block (one by default). The classroom model's passes are many
    small matrix products; on a 2-core machine that is busy with anything else (a browser, other kernels), two
    threads wait on each other and one thread finishes first (bench/bench_heads.py; bench/last_run.md)."""
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def story_batch(writer: StoryWriter, tokenizer: WordTokenizer, batch: int, list_chance: float, bos: bool = True,
                relay_chance: float = 0.0, relay_only: bool = False):
    """(batch, N_CTX) token ids and the stories they came from."""
    if relay_only:
        stories = [writer.relay_story(N_CTX, bos) for _ in range(batch)]
    else:
        stories = [writer.story(N_CTX, list_chance, bos, relay_chance=relay_chance) for _ in range(batch)]
    return story_ids(tokenizer, stories), stories


def next_token_loss(model: GPT, ids: torch.Tensor, logits: torch.Tensor | None = None) -> torch.Tensor:
    """Cross-entropy of each next token; logits: the model's output on all of ids, when already computed."""
    logits = model(ids[:, :-1]).logits if logits is None else logits[:, :-1]  # predict token t+1 from tokens 0..t
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1))


@torch.no_grad()
def evaluate(model: GPT, tokenizer: WordTokenizer, n_stories: int = 256, bos: bool = True, relay: bool = False) -> dict:
    """Held-out loss, and next-word accuracy at the positions a relation decides.

    Loss and the relations' accuracy come from plain stories (no relay game), so every model
    is measured on the same text; relay=True adds the accuracy on relay words, from stories
    that each hold one relay."""
    ids, stories = held_out_batch(tuple(tokenizer.vocab), n_stories, bos)
    logits = model(ids).logits
    result = {"held_out_loss": round(next_token_loss(model, ids, logits).item(), 4)}
    for relation in FORCED:
        result[f"accuracy_{relation}"] = round(forced_hits(logits, ids, stories, relation), 4)
    if relay:
        ids, stories = held_out_batch(tuple(tokenizer.vocab), n_stories, bos, relay_chance=1.0)
        result["accuracy_relay"] = round(forced_hits(model(ids).logits, ids, stories, "relay"), 4)
    return result


@functools.lru_cache(maxsize=8)
def held_out_batch(vocab: tuple[str, ...], n_stories: int, bos: bool = True, relay_chance: float = 0.0):
    """The held-out stories every model is measured on, made once per vocabulary (notebook
    04 scores six merged models on the same 256 stories). Read-only."""
    return story_batch(StoryWriter(HELD_OUT_SEED), WordTokenizer(list(vocab)), n_stories, 0.5, bos,
                       relay_chance=relay_chance)


def forced_hits(logits: torch.Tensor, ids: torch.Tensor, stories, game: str) -> float:
    """Share of the words a relation (or the relay game) decides that the model guesses right
    (0 when the stories hold none)."""
    pairs = [(b, p) for b, s in enumerate(stories) for p in s.forced[game]]
    if not pairs:
        return 0.0
    b, p = (torch.tensor(col) for col in zip(*pairs))
    return (logits[b, p - 1].argmax(-1) == ids[b, p]).float().mean().item()  # logits at p-1 predict word p
