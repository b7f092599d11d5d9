"""Generic head detectors (previous token, first token, duplicate token, induction).

They need no annotations, so they work on any model, GPT-2 small included; each returns a
(n_layer, n_head) table of mean attention on the pattern's key.
"""

from __future__ import annotations

import numpy as np
import torch

from ..core.evaluation import one_thread
from ..core.model import LanguageModel
from .relations import ranked_heads


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


def induction_targets(tokens) -> np.ndarray:
    """Where an induction head looks (T, T): from each word to the word after its latest earlier
    copy; a word seen for the first time rests on the first token (notebook 05's prediction)."""
    T = len(tokens)
    pattern = np.zeros((T, T))
    for q, word in enumerate(tokens):
        copies = [k for k in range(q) if tokens[k] == word]
        pattern[q, copies[-1] + 1 if copies else 0] = 1.0
    return pattern


def induction_match(attn, tokens) -> tuple[np.ndarray, list[int]]:
    """Each head's mean attention, over the words seen before, on the word after their latest
    earlier copy -> ((L, H), those words' positions). attn: (L, H, T, T) of one sentence."""
    a = _as_batch(attn)[0].numpy()  # (L, H, T, T)
    rows = [q for q, word in enumerate(tokens) if word in tokens[:q]]
    if not rows:
        raise ValueError("No word repeats in these tokens; use a sentence with a list said twice, e.g. "
                         "'list : red mat . again : red mat'.")
    return (a * induction_targets(tokens)).sum(-1)[:, :, rows].mean(-1), rows


def repeated_random_tokens(lm: LanguageModel, length: int = 20, batch: int = 8, seed: int = 0) -> torch.Tensor:
    """(batch, 1 + 2*length) ids: a start token, then `length` random tokens said twice."""
    if 1 + 2 * length > lm.config.n_ctx:
        raise ValueError(f"length={length} needs {1 + 2 * length} tokens; {lm.name} reads {lm.config.n_ctx}.")
    g = torch.Generator().manual_seed(seed)
    start = int(lm.tokenizer.encode("I", bos=True)[0])  # <bos> for classroom models, <|endoftext|> for GPT-2
    V = lm.config.vocab_size
    rows = []
    for _ in range(batch):
        pool = torch.randperm(V, generator=g)
        half = pool[pool != start][:length]  # distinct tokens, so each has one earlier copy
        rows.append(torch.cat([torch.tensor([start]), half, half]))
    return torch.stack(rows)  # (B, 1 + 2 * length)


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
