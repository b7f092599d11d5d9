"""Figures composed for a 16:9 slide where a notebook's figure does not fit one as it is: drawn
straight onto a 13.33 × 7.5 in figure, so fonts are chosen for the slide (not enlarged afterwards)
and what the layout check measures is what the room sees. They reuse the notebooks' plot functions."""

from __future__ import annotations

import textwrap

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from ..analysis import headcount
from ..analysis.relations import ranked_heads
from . import headcount_plots, mosaic, plots, views
from .common import new_figure
from .slide import SLIDE_INCHES

SHORT_LIST = "list : red fox . again : red fox ."  # 11 tokens: 4 maps fit side by side with readable labels


def _slide() -> Figure:
    return new_figure(figsize=SLIDE_INCHES, layout="constrained")


def shrunk_query(d_model: int = 768, d_head: int = 64, word: str = "draw") -> Figure:
    """x [1 × d_model] · W_Q [d_model × d_head] = q [1 × d_head], every length to scale."""
    fig = _slide()
    ax = fig.add_subplot()
    thick, gap = d_model / 20, d_model / 8  # a one-row vector is drawn thick enough to see
    parts = [(f"'{word}'", 1, d_model, "#56B4E9"), ("W_Q of one head", d_model, d_head, "#E69F00"),
             ("its query", 1, d_head, "#009E73")]
    x = 0.0
    for i, (name, rows, cols, colour) in enumerate(parts):
        height = rows if rows > 1 else thick
        ax.add_patch(Rectangle((x, -height / 2), cols, height, facecolor=colour, edgecolor="black", lw=1.5))
        above = rows > 1  # the tall matrix is labelled above, the thin vectors just below themselves
        ax.text(x + cols / 2, height / 2 + thick / 2 if above else -height / 2 - thick / 2,
                f"{name}\n[{rows} × {cols}]", ha="center", va="bottom" if above else "top")
        if i < 2:
            ax.text(x + cols + gap / 2, 0, "·" if i == 0 else "=", ha="center", va="center", fontsize=36)
        x += cols + gap
    ax.text(x, 0, f"lengths to scale:\n{d_model} numbers in,\n{d_head} numbers out,\n"
                  f"{d_model // d_head} × shorter", ha="left", va="center")
    ax.set_xlim(-thick, x + 2.6 * gap)
    ax.set_ylim(-d_model / 2 - thick, d_model / 2 + 4 * thick)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(f"One head's query: [1 × {d_model}] · [{d_model} × {d_head}] → [1 × {d_head}]")
    return fig


def merged_heads(sentence: str = SHORT_LIST, layer: int = 1, first: int = 0, group: int = 3) -> Figure:
    """Thought experiment: `group` trained heads of the 12-head model and the one wide head they merge into."""
    tokens, members, merged = headcount_plots.merge_maps(sentence, layer, first, group)
    d = headcount.WIDTH // headcount.MERGE_SOURCE
    maps = [(members[i], f"L{layer} H{first + i}\n{d} numbers") for i in range(group)]
    maps.append((merged, f"merged head\n{group * d} numbers"))
    fig = _slide()
    axes = fig.subplots(1, len(maps), sharey=True)
    for ax, (w, title) in zip(axes, maps):
        plots.plot_attention(w, tokens, ax=ax, title=title, annotate=False, colorbar=False)
        ax.tick_params(axis="x", labelrotation=90)
        ax.set_xlabel("")
        ax.set_ylabel("")
    axes[0].set_ylabel(plots.QUERY_LABEL)
    fig.supxlabel(plots.KEY_LABEL, fontsize="large")
    fig.colorbar(axes[0].images[0], ax=axes, shrink=0.8, label="attention weight")
    fig.suptitle(f"Thought experiment, no retraining: L{layer} H{first}–H{first + group - 1} "
                 f"read as one head of {group * d}")
    return fig


def all_heads_with_zoom(attentions, tokens, head: tuple[int, int], what: str, title: str | None = None) -> Figure:
    """The all-heads grid (L, H, T, T) with one head framed, and that head up close beside it: the
    grid shows the patterns, the close-up carries token labels large enough to read on a slide."""
    layer, h = head
    fig = _slide()
    L, H = attentions.shape[:2]
    grid_share = min(2.0, max(0.6, 1.7 * H / L))  # a wide 2 × 12 grid gets more room than a square 12 × 12
    left, right = fig.subplots(1, 2, width_ratios=[grid_share, 1])
    grid = mosaic.AllHeadsView(attentions, tokens, ax=left, highlight=head, title=" ")  # title: the slide's
    for label in grid.head_texts + grid.layer_texts:
        label.set_fontsize(14)  # "H10 H11" fit side by side over a long sentence's narrow cells
    # numbers in the close-up's cells only where they fit at slide size (a third of the slide's width)
    views.plot_head(attentions[layer, h], tokens, ax=right, title=f"L{layer} H{h} up close: {what}",
                    annotate=len(tokens) <= 8)
    right.tick_params(labelsize=14)  # a 15-word sentence's labels fit beside the grid
    fig.suptitle(title or f"All {L * H} heads ({L} layers × {H} heads) reading: {' '.join(tokens)}", fontsize=18)
    fig.get_layout_engine().set(rect=(0.03, 0, 0.97, 1))  # room for the L0.. labels the layout does not see
    return fig


def score_tables(scores: dict[str, np.ndarray], cols: int = 4) -> Figure:
    """One layer × head table per relation, same 0–1 colour scale, best head in each title."""
    fig = _slide()
    rows = -(-len(scores) // cols)
    axes = fig.subplots(rows, cols, squeeze=False, sharex=True, sharey=True)
    for ax, (relation, table) in zip(axes.flat, scores.items()):
        image = ax.imshow(table, vmin=0, vmax=1)
        (l, h), s = ranked_heads(table, k=1)[0]
        ax.set_title(f"{relation}\nbest L{l} H{h}: {s:.2f}", fontsize="medium")
        ax.set_xticks(range(0, table.shape[1], 4))
        ax.set_yticks(range(0, table.shape[0], 4))
    for ax in list(axes.flat)[len(scores):]:
        ax.set_visible(False)
    fig.supxlabel("head")
    fig.supylabel("layer")
    fig.colorbar(image, ax=axes, shrink=0.8, label="mean attention on the true key")
    return fig


def slide_title(title: str, tokens) -> str:
    """A slide title and the sentence, in lines short enough for a 16:9 slide at projector size."""
    return textwrap.fill(title, 60) + "\n" + textwrap.fill("reading: " + " ".join(tokens), 60)
