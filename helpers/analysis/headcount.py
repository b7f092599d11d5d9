"""Head counts (notebook 04): models trained with 1 to 12 heads at one width.

Shapes, held-out losses, and merging trained heads into wider ones. The six "heads-N" models
are 2 layers of width 96 trained on the classroom language; only the number of heads differs.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import torch

from ..core.arguments import whole_number
from ..core.attention import check_heads, multi_head_from
from ..core.catalog import DATA_DIR, info_number, load_model, manifest, recorded, record_measurements
from ..core.evaluation import evaluate, one_thread
from ..core.model import GPT, LanguageModel, head_weights
from ..core.run import Run, run_sentence

HEAD_COUNTS = (1, 2, 3, 4, 6, 12)  # every divisor of 12 (and of the width 96) we trained
WIDTH = 96
MERGE_SOURCE = 12  # the merge thought experiment works on the trained 12-head model
SENTENCE = "list : red fox old mat . again : red fox old mat ."


# --- shapes and counts ---------------------------------------------------------------------
def head_shapes(width: int, n_heads: int, n_tokens: int) -> dict[str, tuple[int, ...]]:
    """Every shape in one multi-head attention layer for a sentence of n_tokens (T)."""
    d = check_heads(width, n_heads)
    width, T = whole_number(width, "width"), whole_number(n_tokens, "n_tokens", low=1)  # plain ints in the shapes
    return {
        "input": (T, width),
        "W_Q, W_K, W_V (per head)": (width, d),
        "Q, K, V (per head)": (T, d),
        "scores (per head)": (T, T),
        "attention weights (per head)": (T, T),
        "head output (per head)": (T, d),
        "concatenation": (T, width),  # n_heads outputs of d numbers side by side
        "recombination W_O": (width, width),
        "output": (T, width),
    }


def shapes_table(width: int, n_heads: int, n_tokens: int) -> str:
    """head_shapes as aligned text lines, for printing."""
    rows = head_shapes(width, n_heads, n_tokens)
    return "\n".join(f"{name:<30}{' × '.join(map(str, shape))}" for name, shape in rows.items())


# --- the trained variants ------------------------------------------------------------------
def load_variant(n_heads: int) -> LanguageModel:
    """The model "heads-N", loaded once per kernel so the slider answers at once."""
    return _load_variant(check_head_count(n_heads))  # checked first: 4 and np.int64(4) share one entry


@lru_cache(maxsize=None)
def _load_variant(n_heads: int) -> LanguageModel:
    return load_model(f"heads-{n_heads}")


def available_head_counts() -> list[int]:
    """The head counts whose trained model is shipped in data/."""
    shipped = manifest()
    return [h for h in HEAD_COUNTS if f"heads-{h}" in shipped]


def check_head_count(n_heads, name: str = "n_heads") -> int:
    """n_heads as a plain int that one of the heads-N models was trained with, or a one-line ValueError."""
    choices = f"choose one of {', '.join(map(str, HEAD_COUNTS))}"
    n = whole_number(n_heads, name, valid=choices)
    if n not in HEAD_COUNTS:
        raise ValueError(f"No model trained with {n} heads; {choices}.")
    return n


def loss_by_heads() -> dict[int, float]:
    """Held-out loss of every shipped heads-N model, from its recorded info."""
    shipped = manifest()
    return {h: info_number(f"heads-{h}", "held_out_loss", shipped) for h in available_head_counts()}


def repeat_accuracy_by_heads() -> dict[int, float]:
    """Share of the list's second copy each heads-N model says right, from its recorded info."""
    shipped = manifest()
    return {h: info_number(f"heads-{h}", "accuracy_induction", shipped) for h in available_head_counts()}


# --- merging heads: a thought experiment on trained weights -----------------------------------
def check_divisor(value, n_heads: int, name: str = "group_size", heads: str = "heads") -> int:
    """value (a group size, a number of key/value heads) as a plain int that divides the n_heads heads, or a
    one-line ValueError naming the choices."""
    choices = ", ".join(str(k) for k in range(1, n_heads + 1) if n_heads % k == 0)
    n = whole_number(value, name, low=1, high=n_heads, valid=f"choose one of {choices}")
    if n_heads % n:
        raise ValueError(f"{name}={n} does not divide the {n_heads} {heads}; choose one of {choices}.")
    return n


def merge_head_groups(weights: dict[str, torch.Tensor], group_size: int) -> dict[str, torch.Tensor]:
    """Join each run of `group_size` neighbouring heads into one wider head.

    Head j of the result owns the query, key and value slices of heads j·g … j·g+g-1 side
    by side, and the matching rows of W_O. No number changes: only where the width is cut.
    """
    H, D, d = weights["W_Q"].shape  # (H, D, d)
    g = check_divisor(group_size, H)
    G = H // g
    out = {}
    for name in ("W_Q", "W_K", "W_V"):
        out[name] = weights[name].reshape(G, g, D, d).permute(0, 2, 1, 3).reshape(G, D, g * d)  # (G, D, g·d)
        bias = "b_" + name[-1]
        out[bias] = weights[bias].reshape(G, g * d)  # (G, g·d)
    out["W_O"] = weights["W_O"].reshape(G, g * d, D)  # (G, g·d, D): the rows stay in order
    out["b_O"] = weights["b_O"]
    return out


@torch.no_grad()
def merged_maps(lm: LanguageModel, sentence: str | Run, group_size: int) -> tuple[list[str], torch.Tensor]:
    """Every layer's maps with heads merged in groups, each layer reading the trained model's input.

    `sentence` may be lm's Run of it already (a widget reuses the run it drew). Returns the tokens
    and (L, H / group_size, T, T) maps.
    """
    run = sentence if isinstance(sentence, Run) else run_sentence(lm, sentence)
    maps = [multi_head_from(x, merge_head_groups(head_weights(lm.model, i), group_size), causal=True).weights
            for i, x in enumerate(run.attention_inputs)]  # L × (H / group_size, T, T)
    return run.tokens, torch.stack(maps)


def merged_model(lm: LanguageModel, group_size: int) -> GPT:
    """The same weights read as fewer, wider heads: merging is only moving the cuts."""
    cfg = lm.config
    config = type(cfg)(**{**cfg.to_dict(), "n_head": cfg.n_head // check_divisor(group_size, cfg.n_head)})
    model = GPT(config)
    model.load_state_dict(lm.model.state_dict())
    return model.eval()


def merged_loss(group_size: int) -> float:
    """Held-out loss of heads-12 with every layer's heads merged in groups (no retraining).

    Read from data/models.json, where `record_merged_losses` wrote it for the shipped heads-12 file,
    so a notebook skips six evaluations; measured here when no number is recorded."""
    losses = recorded(f"heads-{MERGE_SOURCE}", "merged_held_out_loss")
    if str(group_size) in losses:
        return float(losses[str(group_size)])
    return _live_merged_loss(check_head_count(group_size, name="group_size"))


@lru_cache(maxsize=None)
def _live_merged_loss(group_size: int) -> float:
    return measure_merged_loss(load_variant(MERGE_SOURCE), group_size)


def measure_merged_loss(lm: LanguageModel, group_size: int) -> float:
    """Evaluate lm with its heads merged in groups on the held-out stories every model is scored on."""
    with one_thread():  # small products: see scores.one_thread
        return float(evaluate(merged_model(lm, group_size), lm.tokenizer)["held_out_loss"])


def record_merged_losses(path: Path = DATA_DIR / f"heads-{MERGE_SOURCE}.safetensors") -> dict[str, float]:
    """Measure the merged losses of the heads-12 file at path and write them into its manifest entry.

    `python -m helpers.train heads-12` calls this after saving, so the numbers always belong to the
    file beside them; a retrained file without them is measured live instead."""
    groups = [g for g in HEAD_COUNTS if MERGE_SOURCE % g == 0]
    return record_measurements(f"heads-{MERGE_SOURCE}", "merged_held_out_loss",
                               lambda lm: {str(g): measure_merged_loss(lm, g) for g in groups}, path)


