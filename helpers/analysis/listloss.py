"""The held-out loss split by word (notebook 07 §4): the words that say a list again, and all the others.

The held-out loss is one average over every predicted word of the held-out stories. A few of those
words are decided by the list game (the second copy of a word list: `story.forced["induction"]`, the
positions whose accuracy is the "list said again" share), so the loss and the list accuracy are not two
measurements: the loss holds the list words too. Plain numbers, no matplotlib; any classroom
LanguageModel (another seed's kv-N model too) can be measured.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import torch
from torch.nn import functional as F

from ..core.catalog import DATA_DIR, recorded, record_measurements
from ..core.evaluation import held_out_batch, one_thread, story_ids
from ..core.model import LanguageModel
from .kvheads import available_kv_counts, load_kv_variant, variant_name

N_STORIES = 256  # the held-out stories evaluate() scores, so "loss" is the recorded held-out loss


@torch.no_grad()
def word_losses(lm: LanguageModel, stories) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """One pass over the stories: ids (B, T), logits (B, T, vocab), each predicted word's loss (B, T-1),
    and True where that word says a list again (word p is predicted at position p - 1)."""
    ids = story_ids(lm, stories)  # (B, T)
    with one_thread():
        logits = lm.model(ids).logits  # (B, T, vocab)
    per_word = F.cross_entropy(logits[:, :-1].transpose(1, 2), ids[:, 1:], reduction="none")  # (B, T-1)
    repeats = torch.zeros_like(per_word, dtype=torch.bool)
    for b, story in enumerate(stories):
        repeats[b, [p - 1 for p in story.forced["induction"]]] = True
    return ids, logits, per_word, repeats


def loss_on_list_words(lm: LanguageModel, n_stories: int = N_STORIES) -> dict[str, float]:
    """lm's next-word loss on the held-out stories, split into the words that repeat a list and the rest.

    Returns "list_loss", "other_loss" (mean nats per word), "list_share", "other_share" (of the predicted
    words), "loss" (all words: list_share · list_loss + other_share · other_loss), "list_words", "words"."""
    story_ids(lm, [])  # first refuses a model that does not read the classroom language (GPT-2)
    _, stories = held_out_batch(tuple(lm.tokenizer.vocab), n_stories, lm.bos)
    _, _, per_word, repeats = word_losses(lm, stories)
    share = repeats.float().mean().item()
    return {"list_loss": per_word[repeats].mean().item(), "other_loss": per_word[~repeats].mean().item(),
            "list_share": share, "other_share": 1 - share, "loss": per_word.mean().item(),
            "list_words": int(repeats.sum()), "words": per_word.numel()}


def loss_rise_by_word(split: dict[str, float], reference: dict[str, float]) -> dict[str, float]:
    """How much of split's loss above reference's comes from the list words and how much from the others
    (both measured on the same stories, so the shares are the same and the two parts add up to the rise)."""
    return {"rise": split["loss"] - reference["loss"],
            "from_list_words": split["list_share"] * (split["list_loss"] - reference["list_loss"]),
            "from_other_words": split["other_share"] * (split["other_loss"] - reference["other_loss"])}


def loss_split_by_kv_heads() -> dict[int, dict[str, float]]:
    """loss_on_list_words for every shipped kv-N model.

    Read from data/models.json, where `record_loss_split` wrote it for the shipped kv-N file, so
    notebook 07 skips six forward passes over 256 stories; measured here (once per kernel) for a
    file that has none recorded, e.g. one retrained since."""
    return {n: recorded(variant_name(n), "loss_split") or _live_split(n) for n in available_kv_counts()}


@cache
def _live_split(n_kv_head: int) -> dict[str, float]:
    return loss_on_list_words(load_kv_variant(n_kv_head))


def record_loss_split(name: str, path: Path | None = None) -> dict[str, float]:
    """Measure the split of the kv-N file at path (data/NAME.safetensors) and write it into its manifest
    line: `python -m helpers.train kv-N` calls this after saving, so the numbers belong to that file."""
    path = DATA_DIR / f"{name}.safetensors" if path is None else path
    return record_measurements(name, "loss_split", loss_on_list_words, path)


def loss_split_table(splits: dict[int, dict[str, float]] | None = None) -> str:
    """The split of every kv-N model as text: the loss on all words, on the list words, on the others."""
    splits = loss_split_by_kv_heads() if splits is None else splits
    first = next(iter(splits.values()))
    lines = [f"{first['words']:,} predicted words of {N_STORIES} held-out stories: {first['list_words']:,} say a list "
             f"again ({first['list_share']:.1%}), {first['words'] - first['list_words']:,} do not "
             f"({first['other_share']:.1%})",
             f"{'kv heads':>8}{'all words':>11}{'list words':>12}{'other words':>13}"]
    for n, s in splits.items():
        lines.append(f"{n:>8}{s['loss']:>11.3f}{s['list_loss']:>12.3f}{s['other_loss']:>13.3f}")
    return "\n".join(lines)

