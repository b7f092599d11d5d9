"""Figures of notebook 04: what more heads buy, the loss by head count, and the merge thought experiment."""

from __future__ import annotations

from matplotlib.figure import Figure

from ..analysis.headcount import (
    MERGE_SOURCE,
    SENTENCE,
    WIDTH,
    available_head_counts,
    load_variant,
    merged_maps,
)
from ..analysis import captions
from ..analysis.seeds import failed_runs, seed_values, shipped_number
from ..core.arguments import whole_number
from ..core.run import run_sentence
from .common import describe, new_axes, new_figure
from .views import HeadView


SEED_DOT = dict(marker="o", ms=4.5, ls="none", color="black", alpha=0.75, zorder=3)  # one training run
SHIPPED_MARK = dict(marker="D", ms=9, ls="none", mfc="none", mec="#D55E00", mew=2.2, zorder=4)  # the shipped file


def draw_seeds(ax, positions, runs: list[dict[int, float]], shipped: list[float] | None = None,
               scale: float = 1.0, legend: bool = False) -> None:
    """Every seed's value as a small dot beside its position (spread a little sideways, so equal values
    stay visible), and the shipped file's value as an open diamond; a legend names both."""
    for i, (x, values) in enumerate(zip(positions, runs)):
        n = len(values)
        ax.plot([x + 0.09 * (k - (n - 1) / 2) for k in range(n)], [scale * v for v in values.values()],
                label="one training run (seed)" if i == 0 else None, **SEED_DOT)
    if shipped is not None:
        ax.plot(positions, [scale * v for v in shipped], label="the shipped file (maps, slider)", **SHIPPED_MARK)
    if legend:
        ax.legend(loc="lower right", fontsize="small", framealpha=0.9)


def seed_bars(ax, counts, runs: list[dict[int, float]], shipped: list[float], colour: str, scale: float,
              fmt: str, current=None, fontsize="small") -> list[float]:
    """One bar per count at the mean of its training runs, a dot per run, the shipped file's diamond,
    and each mean written low inside its bar (bold for `current`); returns the means."""
    xs = list(range(len(counts)))
    means = [scale * sum(r.values()) / len(r) for r in runs]
    ax.bar(xs, means, color=colour, alpha=0.45, label="mean of the runs")
    draw_seeds(ax, xs, runs, shipped, scale)
    ax.set_xticks(xs, [str(n) for n in counts])
    for i, n in enumerate(counts):  # low inside the bar, clear of the dots
        ax.annotate(fmt.format(means[i]), (i, 0), xytext=(0, 6), textcoords="offset points", ha="center",
                    va="bottom", fontsize=fontsize, fontweight="bold" if n == current else "normal")
    return means


def count_curve(ax, values: dict[int, float], seeds: dict[int, dict[int, float]], colour: str, xlabel: str):
    """A widget's small plot of one number against a count of heads (log2 axis, y from 0): the shipped
    files' line, a dot per training run ({count: {seed: value}}), and the ring a widget moves to the
    count it shows, which this returns."""
    counts = list(values)
    ax.plot(counts, list(values.values()), "o-", color=colour, lw=2, label="the shipped file")
    for i, n in enumerate(n for n in counts if n in seeds):
        ax.plot([n] * len(seeds[n]), list(seeds[n].values()), label="one training run" if i == 0 else None,
                **{**SEED_DOT, "ms": 3})
    if seeds:
        ax.legend(loc="lower left", fontsize=7, framealpha=0.9)
    (ring,) = ax.plot([], [], "o", ms=14, mfc="none", mec="#D55E00", mew=3)
    ax.set_xscale("log", base=2)
    ax.set_xticks(counts, [str(n) for n in counts])
    ax.minorticks_off()
    top = max([*values.values(), *(v for runs in seeds.values() for v in runs.values())])
    ax.set_ylim(0, top * 1.15)  # from 0: a gap of 0.1 in 1.6 looks like one
    ax.set_xlabel(xlabel)
    return ring


def plot_head_count_results(current: int | None = None) -> Figure:
    """The six models side by side over their training runs: bars at the mean of the seeds, a dot per
    seed, an open diamond for the shipped file; held-out loss (axis from 0, so a small gap looks small)
    and the share of a repeated list said right. The slide for "what more heads buy"."""
    hs = available_head_counts()
    names = [f"heads-{h}" for h in hs]
    losses, repeats = seed_values(names, "held_out_loss"), seed_values(names, "list_accuracy")
    if not losses:
        raise ValueError("No heads-N seed runs recorded; train them first (python -m helpers.train heads-12 --seeds 5).")
    hs = [h for h, name in zip(hs, names) if name in losses]
    names = [f"heads-{h}" for h in hs]
    fig = new_figure(figsize=(10, 4.6), layout="constrained")
    left, right = fig.subplots(1, 2)
    panels = []  # one sentence per panel, for the figure's words
    for ax, runs, key, colour, scale, fmt in (
            (left, losses, "held_out_loss", "#0072B2", 1, "{:.2f}"),
            (right, repeats, "list_accuracy", "#009E73", 100, "{:.0f}%")):
        means = seed_bars(ax, hs, [runs[n] for n in names], [shipped_number(n, key) for n in names], colour,
                          scale, fmt, current, fontsize=10)
        what = "mean held-out loss" if key == "held_out_loss" else "mean share of repeated lists said again right"
        panels.append(captions.seed_bars_words(what, hs, means, fmt, "heads"))
        ax.set_xlabel("heads (width 96 for all)")
    left.set_ylim(0, max(max(v.values()) for v in losses.values()) * 1.15)
    left.set_ylabel("held-out loss (lower is better)")
    right.set_ylim(0, 105)
    right.set_ylabel("list said again correctly (%)")
    fig.legend(*right.get_legend_handles_labels(), loc="outside lower center", ncols=3, fontsize=10)
    n_runs = len(next(iter(repeats.values())))
    failed = {h: len(failed_runs(f"heads-{h}")) for h in hs}
    left.set_title(f"Held-out loss, {n_runs} runs each")
    right.set_title("Lists: " + (", ".join(f"{h} head{'s' * (h > 1)} failed {k} of {n_runs} runs"
                                           for h, k in failed.items() if k) or "no run failed"))
    fig.suptitle("Six 2-layer models that differ only in their number of heads, each trained "
                 f"{n_runs} times", fontsize=13)
    return describe(fig, captions.panels_words(
        f"Six 2-layer models that differ only in their number of heads, each trained {n_runs} times",
        [f"Bars at the mean of the runs, a dot per run. {panels[0]}", f"{panels[1]} {right.get_title()}."]))


def plot_loss_vs_heads(losses: dict[int, float], current: int | None = None, ax=None,
                       seeds: dict[int, dict[int, float]] | None = None) -> Figure:
    """Held-out loss of the shipped files against head count, a dot for every recorded training run
    (seeds: {heads: {seed: loss}}, by default the runs recorded for heads-N); a ring marks `current`."""
    return LossPlot(losses, current, ax, seeds).fig


class LossPlot:
    """The small loss-versus-heads plot; `.update(current)` moves the marker only."""

    def __init__(self, losses: dict[int, float], current: int | None = None, ax=None,
                 seeds: dict[int, dict[int, float]] | None = None):
        if not losses:
            raise ValueError("No losses to plot; train the heads-N models first (python -m helpers.train heads-12).")
        self.fig, self.ax = new_axes(ax, (3.6, 2.6))
        self.losses = dict(sorted(losses.items()))
        hs = list(self.losses)
        if seeds is None:  # the runs recorded for the heads-N models plotted here
            runs = seed_values([f"heads-{h}" for h in hs], "held_out_loss")
            seeds = {h: runs[f"heads-{h}"] for h in hs if f"heads-{h}" in runs}
        self.marker = count_curve(self.ax, self.losses, seeds, "#0072B2", "heads (width 96 for all)")
        self.ax.set_ylabel("held-out loss")
        self.ax.set_title("held-out loss (lower is better)", fontsize=10)
        describe(self.ax, captions.loss_caption(self.losses))
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
    tokens, members, merged = merge_maps(sentence, layer, first, group_size)
    fig = new_figure(figsize=(3.4 * (group_size + 1), 3.8), layout="constrained")
    axes = fig.subplots(1, group_size + 1)
    for i, ax in enumerate(axes[:-1]):
        HeadView(members[i], tokens, ax=ax, title=f"trained L{layer} H{first + i} ({WIDTH // 12} numbers)")
    HeadView(merged, tokens, ax=axes[-1],
             title=f"merged L{layer} H{first}–H{first + group_size - 1}: one head of {group_size * WIDTH // 12}")
    fig.suptitle(f"Thought experiment on trained weights (not a trained model): {group_size} heads of layer "
                 f"{layer} joined into one", fontsize=12)
    maps = [*members, merged]
    return describe(fig, captions.panels_words(fig.get_suptitle(), [
        captions.head_words(m, tokens, ax.get_title()) for m, ax in zip(maps, axes)]))


def merge_maps(sentence: str = SENTENCE, layer: int = 1, first: int = 0, group: int = 3):
    """Tokens, the member heads' maps (group, T, T) and the merged head's map (T, T), from heads-12."""
    lm = load_variant(MERGE_SOURCE)
    run = run_sentence(lm, sentence)
    tokens, merged = merged_maps(lm, run, group)  # (L, 12 / group, T, T)
    return tokens, run.attentions[layer, first:first + group], merged[layer, first // group]
