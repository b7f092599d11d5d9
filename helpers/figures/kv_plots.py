"""Figures of notebook 07: the KV cache of published models, the six kv-N variants, maps grouped by
the key/value head they share, how alike the maps of a group are, mean pooling (kv-12, or GPT-2
small on a paragraph), and the deck slide."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from ..analysis import captions
from ..analysis.kvcache import CONTEXT, kv_cache_rows
from ..analysis.kvheads import (
    N_QUERY_HEADS,
    SENTENCE,
    variant_name,
    check_kv_count,
    group_of,
    kv_results,
    load_kv_variant,
    pooled_results,
    similarity_by_kv_heads,
)
from ..analysis.seeds import seed_values
from ..core.run import run_sentence
from .common import describe, new_axes, new_figure
from .headcount_plots import count_curve, seed_bars
from .mosaic import AllHeadsView, all_heads_words
from .slide import SLIDE_INCHES

GROUP_COLOURS = ("#E69F00", "#56B4E9")  # frames: Okabe–Ito orange and sky blue, bright on the dark maps
LABEL_COLOURS = ("#B84A00", "#0072B2")  # H0 … labels: dark vermillion 5.2 : 1 and blue 5.2 : 1 on white
SHARED, FULL = "#0072B2", "#999999"  # bars: models that share keys and values, and those that do not


# --- maps grouped by the key/value head they share ---------------------------------------------------
def mark_groups(view: AllHeadsView, n_kv_head: int) -> list[Rectangle]:
    """Frame each group of query heads that reads one key/value head, in every layer, and colour the
    H0 … labels to match. Nothing is framed with one key/value head per query head: nothing is shared."""
    L, H, T, _ = view.shape
    n_kv = check_kv_count(n_kv_head, H)
    g = H // n_kv
    for h, text in enumerate(view.head_texts):
        text.set_color(LABEL_COLOURS[group_of(h, n_kv, H) % 2] if g > 1 else "black")
        text.set_fontweight("bold" if g > 1 else "normal")
    if g == 1:
        return []
    boxes = [Rectangle((j * g * (T + 1) - 0.5, layer * (T + 1) - 0.5), g * (T + 1) - 1, T, fill=False,
                       edgecolor=GROUP_COLOURS[j % 2], linewidth=3, zorder=2.6)  # over the gaps and spines
             for layer in range(L) for j in range(n_kv)]
    for box in boxes:
        view.ax.add_patch(box)
    return boxes


def grouped_heads_view(maps, tokens, n_kv_head: int, ax=None, title=None,
                       token_labels: bool = False) -> tuple[AllHeadsView, list[Rectangle]]:
    """The all-heads grid (L, H, T, T) with its groups framed: the view and the frames."""
    view = AllHeadsView(maps, tokens, ax=ax, title=title, token_labels=token_labels)
    return view, mark_groups(view, n_kv_head)


# --- the KV cache of published models ----------------------------------------------------------------
def cache_note(row: dict, context: int) -> str:
    """The cache of a `context`-token text, or, where the model reads fewer tokens (or keeps only a sliding
    window of them), the most it ever holds."""
    if context > row["context length"]:
        return f"reads at most {row['context length']:,} tokens: {row['GiB at most']:.2f} GiB"
    if context > row["tokens kept at most"]:
        return f"window of {row['sliding window']:,} tokens: {row['GiB at most']:.2f} GiB, however long the text"
    return f"{row['GiB per context']:.2f} GiB for {context:,} tokens"


def plot_kv_cache(context: int = CONTEXT, ax=None) -> Figure:
    """KiB of keys and values each new token adds, for the published configs (16-bit numbers)."""
    fig, ax = new_axes(ax, (10, 4.6))
    rows = kv_cache_rows(context)[::-1]  # the first row on top
    y = np.arange(len(rows))
    values = [r["KiB per token"] for r in rows]
    ax.barh(y, values, color=[SHARED if r["kv heads"] < r["query heads"] else FULL for r in rows])
    ax.set_yticks(y, [f"{r['model']}  ({r['query heads']} q / {r['kv heads']} kv)" for r in rows])
    for i, r in enumerate(rows):
        ax.annotate(f" {r['KiB per token']:g} KiB · {cache_note(r, context)}", (values[i], i), va="center",
                    fontsize="small")
    ax.set_xlim(0, max(values) * 2.1)  # room for the notes
    ax.set_xlabel("KV cache per token (KiB, 16-bit numbers)")
    ax.set_title("Keys and values kept for every earlier token (blue: heads share keys and values)")
    parts = [f"{r['model']} {r['KiB per token']:g} KiB ({r['query heads']} query, {r['kv heads']} key/value heads)"
             for r in rows[::-1]]
    describe(ax, captions.panels_words(ax.get_title(), [f"KV cache per token: {captions.listed(parts)}."]))
    return fig


# --- the six variants -----------------------------------------------------------------------------------
def plot_kv_results(current: int | None = None) -> Figure:
    """Held-out loss, list repeated correctly (bars at the mean of the training runs, a dot per seed, an
    open diamond for the shipped file) and KV cache per token (one number per layout) of the six variants."""
    results = kv_results()
    if not results:
        raise ValueError("No kv-N models shipped; train them first (python -m helpers.train kv-1 …).")
    fig = new_figure(figsize=(12, 4.6), layout="constrained")
    axes = fig.subplots(1, 3)
    ns = list(results)
    xs = list(range(len(ns)))
    names = [variant_name(n) for n in ns]
    panels = [("held_out_loss", "held-out loss (lower is better)", "{:.2f}", 1, "#0072B2"),
              ("list_accuracy", "list said again correctly (%)", "{:.0f}%", 100, "#009E73"),
              ("cache_bytes_per_token", "KV cache per token (bytes)", "{:.0f}", 1, "#E69F00")]
    sentences = []  # one per panel, for the figure's words
    for ax, (key, label, fmt, scale, colour) in zip(axes, panels):
        shipped = [scale * results[n][key] for n in ns]
        runs = seed_values(names, key) if key != "cache_bytes_per_token" else {}
        if all(name in runs for name in names):  # a trained number: its spread over the seeds
            values = seed_bars(ax, ns, [runs[name] for name in names], [results[n][key] for n in ns], colour,
                               scale, fmt, current)
            top = max(max(shipped), scale * max(v for r in runs.values() for v in r.values()))
        else:  # the cache follows from the layout: one number, no training run
            values, top = shipped, max(shipped)
            ax.bar(xs, values, color=colour)
            ax.set_xticks(xs, [str(n) for n in ns])
            for i, n in enumerate(ns):  # above its bar
                ax.annotate(fmt.format(values[i]), (i, values[i]), xytext=(0, 2), textcoords="offset points",
                            ha="center", va="bottom", fontsize="small", fontweight="bold" if n == current else "normal")
        sentences.append(captions.seed_bars_words(label, ns, values, fmt, "key/value heads"))
        ax.set_ylim(0, top * 1.18)  # from 0: a small gap looks small
        ax.set_ylabel(label)
        ax.set_xlabel("key/value heads")
    handles = axes[1].get_legend_handles_labels()
    if handles[0]:
        fig.legend(*handles, loc="outside lower center", ncols=3, fontsize="small")
        n_runs = len(next(iter(seed_values(names[:1], "list_accuracy").values())))
        axes[0].set_title(f"{n_runs} runs per layout", fontsize="medium")
        axes[1].set_title(f"{n_runs} runs per layout", fontsize="medium")
        axes[2].set_title("from the layout alone", fontsize="medium")
    fig.suptitle("Six 2-layer models, 12 query heads each, that differ only in their key/value heads")
    return describe(fig, captions.panels_words(fig.get_suptitle(), sentences))


class KVPlot:
    """The widget's small plot: held-out loss and cache per token against key/value heads; `.update(n)`
    moves the two rings only."""

    def __init__(self, results: dict[int, dict], current: int | None = None):
        if not results:
            raise ValueError("No kv-N models shipped; train them first (python -m helpers.train kv-1 …).")
        self.fig = new_figure(figsize=(6.4, 2.6), layout="constrained")
        self.results = dict(sorted(results.items()))
        self.ns = list(self.results)
        left, right = self.fig.subplots(1, 2)
        self.markers = []
        for ax, key, label, colour in ((left, "held_out_loss", "held-out loss", "#0072B2"),
                                       (right, "cache_bytes_per_token", "cache bytes / token", "#E69F00")):
            runs = seed_values([variant_name(n) for n in self.ns], key) if key == "held_out_loss" else {}
            seeds = {n: runs[variant_name(n)] for n in self.ns if variant_name(n) in runs}
            values = {n: self.results[n][key] for n in self.ns}
            self.markers.append((count_curve(ax, values, seeds, colour, "key/value heads"), key))
            ax.set_title(label, fontsize=10)
        self.update(current)

    def update(self, current: int | None) -> None:
        for marker, key in self.markers:
            if current in self.results:
                marker.set_data([current], [self.results[current][key]])
            else:
                marker.set_data([], [])


# --- inside a group against across groups ---------------------------------------------------------------
def plot_group_similarity(ax=None) -> Figure:
    """Overlap of maps of query heads in one group, across groups, and kv-12's same pairs (baseline)."""
    sims = similarity_by_kv_heads()
    fig, ax = new_axes(ax, (9, 4.2))
    ns = list(sims)
    x = np.arange(len(ns))
    bars = [("within", "same key/value head", "#D55E00"), ("across", "different key/value heads", "#56B4E9"),
            ("baseline_within", "kv-12, same pairs (nothing shared)", "#999999")]
    for k, (key, label, colour) in enumerate(bars):
        values = [sims[n][key] for n in ns]
        bars = ax.bar(x + (k - 1) * 0.27, values, width=0.27, color=colour, label=label)
        ax.bar_label(bars, fmt="{:.2f}", fontsize=8)
    ax.set_xticks(x, [f"{n} kv heads\n(groups of {N_QUERY_HEADS // n})" for n in ns])
    ax.set_ylim(0, 1.12)
    ax.set_ylabel("overlap of two heads' maps (1 = same)")
    ax.legend(loc="upper left", fontsize="small", ncols=3)
    ax.set_title("How alike are two query heads' maps? (held-out stories, both layers)")
    parts = [f"{n} key/value head{'s' * (n > 1)}: same group {sims[n]['within']:.2f}, different groups {sims[n]['across']:.2f}, "
             f"kv-12's same pairs {sims[n]['baseline_within']:.2f}" for n in ns]
    describe(ax, captions.panels_words(ax.get_title(), [f"Overlap of two heads' maps (1 = same): {'; '.join(parts)}."]))
    return fig


def plot_pooled(ax=None) -> Figure:
    """Held-out loss of each trained variant against kv-12 mean-pooled to that many key/value heads."""
    trained, pooled = kv_results(), pooled_results()
    fig, ax = new_axes(ax, (9, 4.2))
    ns = [n for n in trained if n in pooled]
    x = np.arange(len(ns))
    for k, (values, label, colour) in enumerate((
            ([trained[n]["held_out_loss"] for n in ns], "trained with shared keys and values", "#0072B2"),
            ([pooled[n]["held_out_loss"] for n in ns], "kv-12 mean-pooled, NOT retrained", "#D55E00"))):
        bars = ax.bar(x + (k - 0.5) * 0.38, values, width=0.38, color=colour, label=label)
        ax.bar_label(bars, fmt="{:.2f}", fontsize=8)
    ax.set_xticks(x, [str(n) for n in ns])
    ax.set_xlabel("key/value heads (12 query heads)")
    ax.set_ylabel("held-out loss (lower is better)")
    ax.set_ylim(0, max(p["held_out_loss"] for p in pooled.values()) * 1.15)
    ax.legend(loc="upper right", fontsize="small")
    ax.set_title("Thought experiment: averaging a trained model's key and value heads")
    parts = [f"{n} key/value head{'s' * (n > 1)}: trained {trained[n]['held_out_loss']:.2f}, pooled {pooled[n]['held_out_loss']:.2f}"
             for n in ns]
    describe(ax, captions.panels_words(ax.get_title(), [f"Held-out loss: {'; '.join(parts)}."]))
    return fig


def plot_pooling_on_text(results: dict[int, dict], name: str = "GPT-2 small") -> Figure:
    """pooling_on_text's numbers: the paragraph's loss per key/value-head count, and how far the maps of
    each layer moved (mean over its heads), one line per count."""
    fig = new_figure(figsize=(12, 4.2), layout="constrained")
    left, right = fig.subplots(1, 2)
    ns = sorted(results, reverse=True)
    losses = [results[n]["loss"] for n in ns]
    left.bar_label(left.bar([str(n) for n in ns], losses, color=[FULL] + [SHARED] * (len(ns) - 1)), fmt="{:.2f}",
                   fontsize="small")
    left.set_ylim(0, max(losses) * 1.15)
    left.set_xlabel("key/value heads (grey: as trained)")
    left.set_ylabel("next-token loss on the paragraph")
    colours = ("#D55E00", "#E69F00", "#009E73", "#56B4E9", "#0072B2", "#CC79A7")
    for n, colour in zip(ns[1:], colours):
        by_layer = results[n]["map_change"].mean(-1)
        right.plot(np.arange(len(by_layer)), by_layer, "o-", color=colour, label=f"{n} kv head{'s' * (n > 1)}")
    right.set_ylim(0, 1)
    right.set_xticks(np.arange(len(by_layer)))
    right.set_xlabel("layer")
    right.set_ylabel("map moved (0 = same, 1 = nothing in common)")
    right.legend(loc="upper right", fontsize="small", ncols=3)
    fig.suptitle(f"{name}, key and value heads averaged in groups, NOT retrained")
    moved = [f"{n}: {results[n]['map_change'].mean():.2f}" for n in ns[1:]]
    return describe(fig, captions.panels_words(fig.get_suptitle(), [
        captions.seed_bars_words("next-token loss on the paragraph", ns, losses, "{:.2f}", "key/value heads"),
        f"Mean share the maps moved, by key/value heads, {', '.join(moved)}."]))


# --- the deck slide -----------------------------------------------------------------------------------------
def setting_title(n_kv_head: int) -> str:
    """'3 key/value heads: loss 1.600 · list said again 90% · cache 192 bytes/token', from the records."""
    r = kv_results()[n_kv_head]
    kind = " (multi-head)" if n_kv_head == N_QUERY_HEADS else " (multi-query)" if n_kv_head == 1 else ""
    return (f"{n_kv_head} key/value head{'s' * (n_kv_head > 1)}{kind}: loss {r['held_out_loss']:.3f} · list said "
            f"again {r['list_accuracy']:.0%} · cache {r['cache_bytes_per_token']} bytes/token")


def kv_slide(settings: tuple[int, int] = (12, 1), sentence: str = SENTENCE) -> Figure:
    """A 16:9 slide: the slider's grouped grid at two settings, each titled with loss and cache size."""
    fig = new_figure(figsize=SLIDE_INCHES, layout="constrained")
    axes = fig.subplots(len(settings), 1)
    for ax, n in zip(np.atleast_1d(axes), settings):
        run = run_sentence(load_kv_variant(n), sentence)
        view, _ = grouped_heads_view(run.attentions, run.tokens, n, ax=ax, title=" ")
        ax.set_title(setting_title(n), pad=26, fontsize=16)
        describe(ax, all_heads_words(run.attentions, run.tokens, title=setting_title(n)))
        for label in view.head_texts + view.layer_texts:
            label.set_fontsize(14)
    fig.suptitle("12 query heads; each frame: the heads that share one key and value head\n"
                 f"reading: {' '.join(run.tokens)}", fontsize=18)
    return fig
