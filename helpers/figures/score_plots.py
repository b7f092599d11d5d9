"""Figures of the head scores: one heatmap per relation, the best heads ranked, each head's type."""

from __future__ import annotations

import numpy as np
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from ..analysis import captions
from ..analysis.relations import TYPE_THRESHOLD, best_head_types, ranked_heads, score_table
from .common import describe, new_axes, new_figure


# --- figures ------------------------------------------------------------------------
def plot_score_tables(scores: dict[str, np.ndarray], relations=None, fig: Figure | None = None,
                      cmap: str = "viridis") -> Figure:
    """One layer × head heatmap per relation, all on the same 0–1 colour scale.

    Placed with a fixed grid and one shared colour bar: a layout engine would cost more than the drawing."""
    relations = list(relations or scores)
    for r in relations:
        score_table(scores, r)  # one-line error for an unknown relation
    cols = min(4, len(relations))
    rows = -(-len(relations) // cols)
    fig = fig or new_figure(figsize=(3.2 * cols + 1.0, 3.4 * rows))
    grid = fig.add_gridspec(rows, cols + 1, width_ratios=[1] * cols + [0.06], left=0.05, right=0.93,
                            bottom=0.2 / rows, top=1 - 0.1 / rows, wspace=0.25, hspace=0.3)
    for i, r in enumerate(relations):
        ax = fig.add_subplot(grid[i // cols, i % cols])
        table = scores[r]
        image = ax.imshow(table, cmap=cmap, vmin=0, vmax=1)
        (l, h), s = ranked_heads(table, k=1)[0]
        ax.set_title(f"{r}  (best L{l} H{h}: {s:.2f})", fontsize=10)
        ax.set_xlabel("head" if i + cols >= len(relations) else "")
        ax.set_ylabel("layer" if i % cols == 0 else "")
        ax.set_xticks(range(0, table.shape[1], 2))
        ax.set_yticks(range(0, table.shape[0], 2))
        ax.tick_params(labelsize=8)
    fig.colorbar(image, cax=fig.add_subplot(grid[:, cols]), label="mean attention on the true key")
    return describe(fig, captions.score_tables_words(scores, relations))


def plot_ranked(scores: dict[str, np.ndarray], relation: str, k: int = 10, ax=None) -> Figure:
    """Horizontal bars of the k best heads for one relation, best on top."""
    ranked = ranked_heads(scores, relation, k)
    fig, ax = new_axes(ax, (4.5, 0.3 * k + 1))
    labels = [f"L{l} H{h}" for (l, h), _ in ranked]
    values = [s for _, s in ranked]
    ax.barh(range(len(ranked)), values, color="#0072B2")  # Okabe–Ito blue
    ax.set_yticks(range(len(ranked)), labels)
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("score (mean attention on the true key)")
    ax.set_title(f"top {k} heads: {relation}")
    describe(ax, captions.ranked_words(ranked, relation))
    return fig


# One colour per type (Okabe–Ito, safe for colour-blind readers); heads with no type stay light grey.
# Positional types in warm colours and grey, grammar in blues, green and pink.
TYPE_COLOURS = {"previous": "#D55E00", "offset": "#E69F00", "resting": "#999999", "agreement": "#0072B2",
                "pronoun": "#56B4E9", "induction": "#009E73", "object": "#000000", "determiner": "#F0E442",
                "subject": "#CC79A7", "bos": "#999999", "none": "#F2F2F2"}


def plot_head_types(types, threshold: float = TYPE_THRESHOLD, ax=None) -> Figure:
    """Every head coloured by its type, with a legend that counts each type.

    types: the (L, H) array of names that relations.head_types returns (what notebook 06 counts), or a
    dict of score tables, typed here by best_head_types without baselines. Colours and a legend instead
    of words in the cells, so the picture stays readable on a slide."""
    if isinstance(types, dict):
        types, _ = best_head_types(types, threshold)
    types = np.asarray(types, dtype=object)
    unknown = sorted({str(t) for t in types.ravel()} - set(TYPE_COLOURS))
    if unknown:
        raise ValueError(f"Unknown head type {unknown[0]!r}; pass the types from H.head_types (known: "
                         f"{', '.join(TYPE_COLOURS)}).")
    names = [t for t in TYPE_COLOURS if (types == t).any()]  # legend order: positional, grammar, none
    index = np.vectorize(names.index)(types)  # (L, H) of colour numbers
    fig, ax = new_axes(ax, (9, 6))
    ax.imshow(index, cmap=ListedColormap([TYPE_COLOURS[t] for t in names]), vmin=-0.5, vmax=len(names) - 0.5)
    ax.set_xticks(np.arange(-0.5, types.shape[1]), minor=True)
    ax.set_yticks(np.arange(-0.5, types.shape[0]), minor=True)
    ax.grid(which="minor", color="white", linewidth=1.5)
    ax.tick_params(which="minor", length=0)
    ax.set_xticks(range(types.shape[1]))
    ax.set_yticks(range(types.shape[0]))
    ax.set_xlabel("head")
    ax.set_ylabel("layer")
    ax.set_title(f"each head's type (none: no score reaches {threshold})")
    handles = [Patch(facecolor=TYPE_COLOURS[t], edgecolor="#666666", label=f"{t} ({int((types == t).sum())})")
               for t in names]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.02, 1), frameon=False, title="type (heads)")
    describe(ax, f"Each head coloured by its type (layers down, heads across). {captions.types_caption(types)}")
    return fig
