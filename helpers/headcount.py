"""Head counts (notebook 04): models trained with 1 to 12 heads at one width.

Plain functions for shapes, parameter counts, held-out losses, merging trained heads
into wider ones, and the notebook's exercise checks. The six "heads-N" models are
2 layers of width 96 trained on the classroom language; only the number of heads
differs. The slider widget that shows them is in slider.py.
"""

from __future__ import annotations

import numbers
from functools import lru_cache
from pathlib import Path

import torch
from matplotlib.figure import Figure

from .attention import attention_param_count, check_heads, multi_head_from
from .catalog import DATA_DIR, MANIFEST, LanguageModel, load_model, manifest, write_manifest
from .checks import call_student
from .model import GPT, head_weights
from .run import run_sentence
from .scores import one_thread

HEAD_COUNTS = (1, 2, 3, 4, 6, 12)  # every divisor of 12 (and of the width 96) we trained
WIDTH = 96
MERGE_SOURCE = 12  # the merge thought experiment works on the trained 12-head model
SENTENCE = "list : red fox old mat . again : red fox old mat ."


# --- shapes and counts ---------------------------------------------------------------------
def head_shapes(width: int, n_heads: int, n_tokens: int) -> dict[str, tuple[int, ...]]:
    """Every shape in one multi-head attention layer for a sentence of n_tokens (T)."""
    d, T = check_heads(width, n_heads), n_tokens
    if not (isinstance(T, int) and T > 0):
        raise ValueError(f"n_tokens={n_tokens!r} must be a positive whole number.")
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


def describe_shapes(width: int, n_heads: int, n_tokens: int) -> str:
    """head_shapes as aligned text lines, for printing."""
    rows = head_shapes(width, n_heads, n_tokens)
    return "\n".join(f"{name:<30}{' × '.join(map(str, shape))}" for name, shape in rows.items())


# --- the trained variants ------------------------------------------------------------------
@lru_cache(maxsize=None, typed=True)  # typed: True is not the head count 1
def load_variant(n_heads: int) -> LanguageModel:
    """The model "heads-N", loaded once per kernel so the slider answers at once."""
    return load_model(f"heads-{check_head_count(n_heads)}")


def available_head_counts() -> list[int]:
    """The head counts whose trained model is shipped in data/."""
    shipped = manifest()
    return [h for h in HEAD_COUNTS if f"heads-{h}" in shipped]


def check_head_count(n_heads) -> int:
    if n_heads not in HEAD_COUNTS or isinstance(n_heads, bool):
        raise ValueError(f"No model trained with {n_heads!r} heads; choose one of {', '.join(map(str, HEAD_COUNTS))}.")
    return int(n_heads)


def loss_by_heads() -> dict[int, float]:
    """Held-out loss of every shipped heads-N model, from its recorded info."""
    shipped = manifest()
    return {h: float(shipped[f"heads-{h}"]["info"]["held_out_loss"]) for h in available_head_counts()}


def repeat_accuracy_by_heads() -> dict[int, float]:
    """Share of the list's second copy each heads-N model says right, from its recorded info."""
    shipped = manifest()
    return {h: float(shipped[f"heads-{h}"]["info"]["accuracy_induction"]) for h in available_head_counts()}


def plot_head_count_results(current: int | None = None) -> Figure:
    """The six models side by side: held-out loss (axis from 0, so a small gap looks small) and
    the share of a repeated list said right. The slide for "what more heads buy"."""
    losses, repeats = loss_by_heads(), repeat_accuracy_by_heads()
    if not losses:
        raise ValueError("No heads-N models shipped; train them first (python -m helpers.train heads-12).")
    fig = Figure(figsize=(10, 4.2), layout="constrained")
    left, right = fig.subplots(1, 2)
    hs = list(losses)
    labels = [str(h) for h in hs]
    left.bar(labels, [losses[h] for h in hs], color="#0072B2")
    left.set_ylim(0, max(losses.values()) * 1.15)
    left.set_ylabel("held-out loss (lower is better)")
    right.bar(labels, [100 * repeats[h] for h in hs], color="#009E73")
    right.set_ylim(0, 105)
    right.set_ylabel("list said again correctly (%)")
    for ax, values, fmt in ((left, losses, "{:.2f}"), (right, {h: 100 * a for h, a in repeats.items()}, "{:.0f}%")):
        ax.set_xlabel("heads (width 96 for all)")
        for i, h in enumerate(hs):
            ax.annotate(fmt.format(values[h]), (i, values[h]), ha="center", va="bottom", fontsize=10,
                        fontweight="bold" if h == current else "normal")
    left.set_title("Held-out loss: within 0.1 for every head count")
    right.set_title("Repeating a list: one head is not enough")
    fig.suptitle("Six 2-layer models that differ only in their number of heads", fontsize=13)
    return fig


def plot_loss_vs_heads(losses: dict[int, float], current: int | None = None, ax=None) -> Figure:
    """Held-out loss against head count; a ring marks the `current` head count."""
    return LossPlot(losses, current, ax).fig


class LossPlot:
    """The small loss-versus-heads plot; `.update(current)` moves the marker only."""

    def __init__(self, losses: dict[int, float], current: int | None = None, ax=None):
        if not losses:
            raise ValueError("No losses to plot; train the heads-N models first (python -m helpers.train heads-12).")
        if ax is None:
            ax = Figure(figsize=(3.6, 2.6), layout="constrained").add_subplot()
        self.ax, self.fig, self.losses = ax, ax.figure, dict(sorted(losses.items()))
        hs = list(self.losses)
        ax.plot(hs, list(self.losses.values()), "o-", color="#0072B2", lw=2)
        (self.marker,) = ax.plot([], [], "o", ms=14, mfc="none", mec="#D55E00", mew=3)
        ax.set_xscale("log", base=2)
        ax.set_xticks(hs, [str(h) for h in hs])
        ax.minorticks_off()
        ax.set_xlabel("heads (width 96 for all)")
        ax.set_ylim(0, max(self.losses.values()) * 1.15)  # from 0: a gap of 0.1 in 1.6 looks like one
        ax.set_ylabel("held-out loss")
        ax.set_title("held-out loss (lower is better)", fontsize=10)
        self.update(current)

    def update(self, current: int | None) -> None:
        if current is None or current not in self.losses:
            self.marker.set_data([], [])
        else:
            self.marker.set_data([current], [self.losses[current]])


# --- merging heads: a thought experiment on trained weights -----------------------------------
def merge_head_groups(weights: dict[str, torch.Tensor], group_size: int) -> dict[str, torch.Tensor]:
    """Join each run of `group_size` neighbouring heads into one wider head.

    Head j of the result owns the query, key and value slices of heads j·g … j·g+g-1 side
    by side, and the matching rows of W_O. No number changes: only where the width is cut.
    """
    H, D, d = weights["W_Q"].shape  # (H, D, d)
    if not isinstance(group_size, int) or group_size < 1 or H % group_size:
        raise ValueError(f"group_size={group_size!r} must divide the {H} heads; choose one of "
                         f"{', '.join(str(g) for g in range(1, H + 1) if H % g == 0)}.")
    G, g = H // group_size, group_size
    out = {}
    for name in ("W_Q", "W_K", "W_V"):
        out[name] = weights[name].reshape(G, g, D, d).permute(0, 2, 1, 3).reshape(G, D, g * d)  # (G, D, g·d)
        bias = "b_" + name[-1]
        out[bias] = weights[bias].reshape(G, g * d)  # (G, g·d)
    out["W_O"] = weights["W_O"].reshape(G, g * d, D)  # (G, g·d, D): the rows stay in order
    out["b_O"] = weights["b_O"]
    return out


@torch.no_grad()
def layer_inputs(lm: LanguageModel, sentence: str) -> tuple[list[str], list[torch.Tensor]]:
    """The tokens, and what each layer's attention reads (after its LayerNorm): L × (T, D)."""
    tokens = lm.tokenizer.tokens(sentence)
    run_sentence(lm, sentence)  # checks the length against the context
    x = lm.model.embed(torch.tensor([lm.tokenizer.encode(sentence)]))  # (1, T, D)
    inputs = []
    for block in lm.model.h:
        inputs.append(block.ln_1(x)[0])  # (T, D)
        x, _ = block(x)
    return tokens, inputs


@torch.no_grad()
def merged_maps(lm: LanguageModel, sentence: str, group_size: int) -> tuple[list[str], torch.Tensor]:
    """Every layer's maps with heads merged in groups, each layer reading the trained model's input.

    Returns the tokens and (L, H / group_size, T, T) maps.
    """
    tokens, inputs = layer_inputs(lm, sentence)
    maps = [multi_head_from(x, merge_head_groups(head_weights(lm.model, i), group_size), causal=True).weights
            for i, x in enumerate(inputs)]  # L × (H / group_size, T, T)
    return tokens, torch.stack(maps)


def merged_model(lm: LanguageModel, group_size: int) -> GPT:
    """The same weights read as fewer, wider heads: merging is only moving the cuts."""
    cfg = lm.config
    if cfg.n_head % group_size:
        raise ValueError(f"group_size={group_size} must divide the {cfg.n_head} heads of {lm.name}.")
    config = type(cfg)(**{**cfg.to_dict(), "n_head": cfg.n_head // group_size})
    model = GPT(config)
    model.load_state_dict(lm.model.state_dict())
    return model.eval()


def merged_loss(group_size: int) -> float:
    """Held-out loss of heads-12 with every layer's heads merged in groups (no retraining).

    Read from data/models.json, where `record_merged_losses` wrote it for the shipped heads-12 file
    (six evaluations cost ~2 s of a notebook's run); measured here when no number is recorded."""
    recorded = manifest().get(f"heads-{MERGE_SOURCE}", {}).get("merged_held_out_loss", {})
    if str(group_size) in recorded:
        return float(recorded[str(group_size)])
    return _live_merged_loss(check_head_count(group_size))


@lru_cache(maxsize=None)
def _live_merged_loss(group_size: int) -> float:
    return measure_merged_loss(load_variant(MERGE_SOURCE), group_size)


def measure_merged_loss(lm: LanguageModel, group_size: int) -> float:
    """Evaluate lm with its heads merged in groups on the held-out stories every model is scored on."""
    from .train import evaluate  # train imports this module's neighbours: import it when needed

    with one_thread():  # small products: see scores.one_thread
        return float(evaluate(merged_model(lm, group_size), lm.tokenizer)["held_out_loss"])


def record_merged_losses(path: Path = DATA_DIR / f"heads-{MERGE_SOURCE}.safetensors") -> dict[str, float]:
    """Measure the merged losses of the heads-12 file at path and write them into its manifest entry.

    `python -m helpers.train heads-12` calls this after saving, so the numbers always belong to the
    file beside them; a retrained file without them is measured live instead."""
    name, manifest_path = f"heads-{MERGE_SOURCE}", path.parent / MANIFEST.name
    lm = load_model(name, data_dir=path.parent)
    losses = {str(g): measure_merged_loss(lm, g) for g in HEAD_COUNTS if MERGE_SOURCE % g == 0}
    entries = manifest(manifest_path)
    entries[name]["merged_held_out_loss"] = losses
    write_manifest(entries, manifest_path)
    return losses


def plot_merge_example(sentence: str = SENTENCE, layer: int = 1, first: int = 0, group_size: int = 3) -> Figure:
    """Thought experiment, one group: heads first … first+g-1 of heads-12 and the single head they merge into."""
    from .views import HeadView

    lm = load_variant(MERGE_SOURCE)
    if first % group_size or not 0 <= first < lm.config.n_head:
        raise ValueError(f"first={first} must be a head that starts a group of {group_size} (0, {group_size}, …).")
    tokens, merged = merged_maps(lm, sentence, group_size)  # (L, 12 / g, T, T)
    members = run_sentence(lm, sentence).attentions[layer, first:first + group_size]  # (g, T, T)
    fig = Figure(figsize=(3.4 * (group_size + 1), 3.8), layout="constrained")
    axes = fig.subplots(1, group_size + 1)
    for i, ax in enumerate(axes[:-1]):
        HeadView(members[i], tokens, ax=ax, title=f"trained L{layer} H{first + i} ({WIDTH // 12} numbers)")
    HeadView(merged[layer, first // group_size], tokens, ax=axes[-1],
             title=f"merged L{layer} H{first}–H{first + group_size - 1}: one head of {group_size * WIDTH // 12}")
    fig.suptitle(f"Thought experiment on trained weights (not a trained model): {group_size} heads of layer "
                 f"{layer} joined into one", fontsize=12)
    return fig


# --- exercise checks -------------------------------------------------------------------------
def _whole_numbers(got) -> tuple[int, ...] | None:
    """The answer as a tuple of whole numbers, or None when it is not one (5, "96", a tensor …)."""
    if isinstance(got, torch.Tensor) or not isinstance(got, (tuple, list, torch.Size)):
        return None
    if not all(isinstance(x, numbers.Integral) and not isinstance(x, bool) for x in got):
        return None
    return tuple(int(x) for x in got)


def _verdict(name: str, fn, cases, want, hints) -> None:
    """Run fn on every case; print one line: pass, not attempted, raised, or the likely mistake."""
    for case in cases:
        got, problem = call_student(name, fn, *case)
        if problem:
            print(problem)
            return
        numbers = _whole_numbers(got)
        if numbers is None:
            print(f"✗ {name}{case}: expected a tuple of whole numbers such as {want(*case)}, "
                  f"got {type(got).__name__} {got!r:.40}.")
            return
        expected = want(*case)
        if numbers != expected:
            print(f"✗ {name}{case}: expected {expected}, got {numbers}; {hints(case, numbers, expected)}.")
            return
    print(f"✓ {name}: right for all {len(cases)} cases.")


def check_head_size_and_params(fn) -> None:
    """Exercise: fn(width, n_heads) -> (head size, attention parameters of the layer, biases included)."""
    def hints(case, got, want):
        (width, n), (size, params) = case, (list(got) + [None, None])[:2]
        d = width // n
        one_head = 3 * (width * d + d) + d * width
        if size == n and n != d:
            return "that is the number of heads; the head size is width / heads"
        if size != d:
            return "the head size is width / heads"
        if params == attention_param_count(width, n) - width:
            return "you left out the output bias: add width (one bias per output feature)"
        if params in (one_head, one_head + width) and n > 1:
            return "that is one head's share: multiply by the number of heads (and add the output bias)"
        if params == 4 * width ** 2:
            return "you left out the biases: 3·width for Q, K, V together and width for the output"
        return "per head 3·(width·d + d) for Q, K, V and d·width for its rows of W_O; then add width"
    return _verdict("head_size_and_params", fn, [(96, 1), (96, 4), (96, 12), (768, 12), (64, 8)],
                    lambda w, n: (w // n, attention_param_count(w, n)), hints)


def check_concat_shape(fn) -> None:
    """Exercise: fn(n_tokens, width, n_heads) -> shape of the concatenated head outputs."""
    def hints(case, got, want):
        T, width, n = case
        if got == (T, width // n):
            return "that is one head's output; concatenation puts all heads side by side"
        if len(got) == 3:
            return "that keeps a heads axis (stacking); concatenating joins the heads' columns"
        if got == (width, T):
            return "rows and columns swapped: one row per token"
        if got == (T, width * n):
            return "each head's output is width / heads long, so the heads together give width columns"
        return "rows are tokens, columns are heads × head size"
    return _verdict("concat_shape", fn, [(5, 96, 12), (9, 96, 1), (4, 768, 12), (7, 96, 3)],
                    lambda T, w, n: head_shapes(w, n, T)["concatenation"], hints)
