"""Figures of notebook 04: what more heads buy, the loss by head count, and the merge thought experiment."""

from __future__ import annotations

from matplotlib.figure import Figure

from ..analysis.headcount import (
    MERGE_SOURCE,
    SENTENCE,
    WIDTH,
    load_variant,
    loss_by_heads,
    merged_maps,
    repeat_accuracy_by_heads,
)
from ..core.arguments import whole_number
from ..core.run import run_sentence
from .views import HeadView


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


def plot_merge_example(sentence: str = SENTENCE, layer: int = 1, first: int = 0, group_size: int = 3) -> Figure:
    """Thought experiment, one group: heads first … first+g-1 of heads-12 and the single head they merge into."""
    lm = load_variant(MERGE_SOURCE)
    n_layer, n_head = lm.config.n_layer, lm.config.n_head
    layer = whole_number(layer, "layer", 0, n_layer - 1, valid=f"heads-{MERGE_SOURCE} has layers 0..{n_layer - 1}")
    group_size = whole_number(group_size, "group_size", 1, n_head)  # before first % group_size divides by it
    first = whole_number(first, "first", 0, n_head - 1, valid=f"heads-{MERGE_SOURCE} has heads 0..{n_head - 1}")
    if first % group_size:
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
