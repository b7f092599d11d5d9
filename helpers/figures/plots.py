"""Plots for the walkthrough notebooks (01-03): attention maps, one word's weights, shapes, blocks.
Rows of a map are queries (the word being updated), columns keys (the words it looks at), and
every map says so on its axes."""

from __future__ import annotations

import warnings
from typing import Sequence

import matplotlib as mpl
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.patches import Rectangle

from ..analysis import captions
from ..analysis.recombination import head_scaling
from ..core.arrays import to_numpy
from .common import describe, new_axes, new_figure
from .slide import current_cmap, text_colour_on

QUERY_LABEL = "query: the word being updated"
KEY_LABEL = "key: the word looked at"
ANNOTATE_UP_TO = 12  # tokens; bigger maps get no numbers in the cells
HEADS_FS = 13  # points: plot_heads' tick labels and titles, legible when JupyterLab shrinks the grid to fit
FS = 14  # points: the block figure is drawn at slide size, so 14 pt stays 14 pt on a 16:9 slide


def _as_array(values, name: str, ndim: int) -> np.ndarray:
    array = to_numpy(values)
    if array.ndim != ndim:
        raise ValueError(f"{name} has shape {list(array.shape)} but must have {ndim} dimension(s); "
                         f"select one map, e.g. attentions[layer, head].")
    return array


MAX_INCHES, MAX_TICKS = (16.0, 14.0), 40  # one map: at most a screen, and words a reader can tell apart


def plot_attention(weights, tokens: Sequence[str], ax: Axes | None = None, title: str | None = None,
                   key_tokens: Sequence[str] | None = None, annotate: bool | None = None,
                   cmap: str | None = None, colorbar: bool = True) -> Figure:
    """Heatmap of an attention map (T_query, T_key) with the tokens on both axes (cmap: the one in force)."""
    w = _as_array(weights, "weights", 2)
    keys = list(tokens if key_tokens is None else key_tokens)
    if w.shape != (len(tokens), len(keys)):
        raise ValueError(f"weights has shape {list(w.shape)} but there are {len(tokens)} query and "
                         f"{len(keys)} key tokens; pass the tokens the map was computed from.")
    if (bad := ~np.isfinite(w)).any():  # drawn blank: a reader would take the gap for a weight of 0
        row, col = np.argwhere(bad)[0]
        warnings.warn(f"weights hold {int(bad.sum())} NaN or inf value(s), the first in row {row} "
                      f"({tokens[row]!r}), column {col}: drawn blank. A row masked with -inf everywhere is NaN after "
                      f"softmax.", stacklevel=2)
    # never smaller than its axis labels need (a one- or two-token map at its own size cut them off), never
    # larger than a screen: a 1000-token map at 0.75 in a token asked Agg for gigabytes
    fig, ax = new_axes(ax, (min(MAX_INCHES[0], max(4.2, 1.2 + 0.75 * len(keys))),
                            min(MAX_INCHES[1], max(3.6, 0.8 + 0.65 * len(tokens)))))
    image = ax.imshow(w, cmap=cmap or current_cmap(), vmin=0, vmax=max(1.0, float(w.max())), aspect="auto")
    every = [-(-n // MAX_TICKS) for n in (len(keys), len(tokens))]  # a label for every k-th word past MAX_TICKS
    ax.set_xticks(range(0, len(keys), every[0]), keys[::every[0]], rotation=45 if len(keys) > 6 else 0,
                  ha="right" if len(keys) > 6 else "center")
    ax.set_yticks(range(0, len(tokens), every[1]), list(tokens)[::every[1]])
    ax.set_xlabel(KEY_LABEL)
    ax.set_ylabel(QUERY_LABEL)
    if title:
        ax.set_title(title)
    if annotate if annotate is not None else max(w.shape) <= ANNOTATE_UP_TO:
        _annotate_cells(ax, w)
    if colorbar:
        fig.colorbar(image, ax=ax, label="attention weight", shrink=0.8)
    describe(ax, captions.attention_words(w, list(tokens), keys, title))
    return fig


def plot_heads(weights, tokens: Sequence[str], ncols: int = 6, title: str | None = None,
               annotate: bool = False) -> Figure:
    """Small multiples: one attention map (H, T, T) per head, in a grid, with shared labels and one colour bar."""
    w = _as_array(weights, "weights", 3)
    n = w.shape[0]
    nrows, cols = -(-n // ncols), min(n, ncols)
    fig = new_figure(figsize=(1.9 * cols + 1.6, 2.1 * nrows + 1.0), layout="constrained")
    axes = fig.subplots(nrows, cols, squeeze=False, sharex=True, sharey=True)
    size = _at_least(HEADS_FS, "xtick.labelsize")  # JupyterLab shows the grid ~1160 px wide: >= HEADS_FS
    for k, ax in enumerate(axes.flat):
        if k >= n:
            ax.set_visible(False)
            continue
        plot_attention(w[k], tokens, ax=ax, title=f"head {k}", annotate=annotate, colorbar=False)
        ax.images[0].set_clim(0.0, max(1.0, float(w.max())))  # one scale for every head: the colour bar's
        ax.tick_params(axis="x", labelrotation=90, labelbottom=k + cols >= n)  # tokens on the outer edges only
        ax.tick_params(labelleft=k % cols == 0, labelsize=size)
        ax.set_title(f"head {k}", fontsize=size)
        ax.set_xlabel("")
        ax.set_ylabel("")
    bar = fig.colorbar(axes.flat[0].images[0], ax=axes, shrink=0.8, aspect=30, pad=0.015)
    bar.set_label("attention weight", fontsize=size)
    bar.ax.tick_params(labelsize=size)
    fig.supxlabel(KEY_LABEL, fontsize=size)
    fig.supylabel(QUERY_LABEL, fontsize=size)
    if title:
        fig.suptitle(title, fontsize=_at_least(HEADS_FS + 2, "figure.titlesize"))
    return describe(fig, captions.panels_words(title, [captions.heads_caption(w, list(tokens))]))


def _at_least(points: float, rc_key: str) -> float:
    """`points`, or the current style's size for rc_key when that is bigger (the slide style is)."""
    return max(points, FontProperties(size=mpl.rcParams[rc_key]).get_size_in_points())


def _annotate_cells(ax: Axes, w: np.ndarray) -> None:
    """Write each weight in its cell in black or white, whichever contrasts more with the cell's colour."""
    image = ax.images[0]
    for (row, col), value in np.ndenumerate(w):
        colour = text_colour_on(image.cmap(image.norm(value)))
        ax.text(col, row, f"{value:.2f}", ha="center", va="center", color=colour, fontsize=11)


def plot_word_weights(weights, tokens: Sequence[str], word: str | int, ax: Axes | None = None,
                      title: str | None = None) -> Figure:
    """Bar chart of how much one word (the query) attends to every word (the keys)."""
    w = _as_array(weights, "weights", 1)
    if len(w) != len(tokens):
        raise ValueError(f"weights has {len(w)} values but there are {len(tokens)} tokens; "
                         f"pass one row of the attention map and its tokens.")
    label = tokens[word] if isinstance(word, int) else str(word)
    fig, ax = new_axes(ax, (1.5 + 1.0 * len(tokens), 3.6))
    bars = ax.bar(range(len(tokens)), w, color="#0072B2")
    ax.bar_label(bars, [f"{v:.2f}" for v in w], padding=3)
    ax.set_xticks(range(len(tokens)), list(tokens))
    ax.set_ylim(0, max(1.0, float(w.max())) * 1.12)
    ax.set_xlabel(KEY_LABEL)
    ax.set_ylabel(f"weight from '{label}'")
    ax.set_title(title or f"Where '{label}' looks (the weights sum to {w.sum():.2f})")
    describe(ax, captions.panels_words(title, [captions.word_caption(w, list(tokens), label)]))
    return fig


def plot_matmul(left: tuple[int, int], right: tuple[int, int], names: Sequence[str] = ("A", "B", "A·B"),
                ax: Axes | None = None, title: str | None = None) -> Figure:
    """Shape diagram of a matrix product: [n × k]·[k × m] → [n × m], boxes drawn to scale (square-root)."""
    (n, k), (k2, m) = left, right
    if k != k2:
        raise ValueError(f"Cannot multiply [{n} × {k}] by [{k2} × {m}]: the inner sizes {k} and {k2} differ; "
                         f"transpose one matrix or pick matching shapes.")
    fig, ax = new_axes(ax, (10, 4))
    x = 0.0
    for i, ((rows, cols), name) in enumerate(zip((left, right, (n, m)), names)):
        w, h = np.sqrt(cols), np.sqrt(rows)  # square-root scale keeps 1 and 768 both visible
        ax.add_patch(Rectangle((x, -h / 2), w, h, facecolor=["#56B4E9", "#E69F00", "#009E73"][i],
                               edgecolor="black", linewidth=1.5))
        ax.text(x + w / 2, -h / 2 - 1.0, f"{name}\n[{rows} × {cols}]", ha="center", va="top", fontsize=12)
        if i < 2:
            ax.text(x + w + 2.5, 0, "·" if i == 0 else "=", ha="center", va="center", fontsize=26)
        x += w + 5.0
    ax.set_xlim(-1, x - 4)
    ax.set_ylim(-np.sqrt(max(n, k)) / 2 - 6, np.sqrt(max(n, k)) / 2 + 1)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(title or f"[{n} × {k}] · [{k} × {m}] → [{n} × {m}]  (inner sizes must match)")
    describe(ax, captions.panels_words(title, [captions.matmul_words(left, right, names)]))
    return fig


def plot_recombination(steps, word: int, tokens: Sequence[str] | None = None, ax: Axes | None = None,
                       title: str | None = None) -> Figure:
    """Recombination as blocks, on a layer's real numbers for one word (steps: MultiHeadSteps):
    concat [1 × H·d] · W_O [H·d × D] = Σ_h z_h [1 × d] · W_O[h] [d × D], one row per head, each row's
    length beside it as the head's own update length times what its block does to it."""
    if not all(hasattr(steps, k) for k in ("z", "per_head", "concat", "recombination")):
        raise ValueError(f"plot_recombination needs a layer's steps (e.g. walk.steps()), got {type(steps).__name__}.")
    T = steps.z.shape[-2]
    if isinstance(word, bool) or not isinstance(word, int) or not 0 <= word < T:
        raise ValueError(f"word={word!r} is not a position in the sentence; choose 0..{T - 1}.")
    z = _as_array(steps.z, "steps.z", 3)[:, word]  # (H, d): each head's update for the word
    per_head = _as_array(steps.per_head, "steps.per_head", 3)[:, word]  # (H, D)
    n, d = z.shape
    D = per_head.shape[-1]
    total = _as_array(steps.concat, "steps.concat", 2)[word] @ _as_array(steps.recombination, "W_O", 2)  # (D,)
    own = ax is None
    if own:  # fixed placement: constrained layout would measure ~50 texts on every draw
        fig = new_figure(figsize=(13.3, 7.5))
        ax = fig.add_axes((0.155, 0.01, 0.745, 0.88))
    fig = ax.figure
    scaling = head_scaling(steps, word)  # (H,) each: |z_h|, the block's factor, |z_h · W_O[h]|
    limit = float(np.abs(per_head).max()) or 1.0
    strip = dict(cmap="coolwarm", vmin=-limit, vmax=limit, aspect="auto", interpolation="nearest")
    zlim = float(np.abs(z).max()) or 1.0  # the concatenation has its own scale (±zlim), said under it
    ax.imshow(z.reshape(-1, 1), cmap="coolwarm", vmin=-zlim, vmax=zlim, aspect="auto", interpolation="nearest",
              extent=(0, 0.7, n, 0))  # the concatenation, standing up: head h's 64 numbers beside block h
    for h in range(n):
        ax.add_patch(Rectangle((1.6, h + 0.04), 7, 0.92, facecolor="#E8E8E8" if h % 2 else "#D0D0D0",
                               edgecolor="black", linewidth=0.8))
        ax.text(5.1, h + 0.5, f"W_O[{h}]  [{d} × {D}]", ha="center", va="center", fontsize=FS)
        ax.imshow(per_head[h][None, :], extent=(10, 17, h + 0.85, h + 0.15), **strip)
        ax.text(17.2, h + 0.5, f"{np.linalg.norm(per_head[h]):5.1f}", ha="left", va="center", fontsize=FS)
        ax.text(19.0, h + 0.5, f"= {scaling['update'][h]:4.1f} × {scaling['scale'][h]:.2f}", ha="left",
                va="center", fontsize=FS)
    image = ax.imshow(total[None, :], extent=(10, 17, n + 1.9, n + 1.1), **strip)
    ax.text(17.2, n + 1.5, f"{np.linalg.norm(total):5.1f}", ha="left", va="center", fontsize=FS)
    ax.add_patch(Rectangle((0, 0), 0.7, n, fill=False, edgecolor="black", linewidth=0.8))
    for h in range(1, n):
        ax.plot([0, 0.7], [h, h], color="black", linewidth=0.6)
    ax.text(1.15, n / 2, "·", ha="center", va="center", fontsize=36)
    ax.text(9.3, n / 2, "=", ha="center", va="center", fontsize=18)
    ax.plot([10, 17], [n + 0.55, n + 0.55], color="black", linewidth=1)
    ax.text(9.3, n + 1.5, "Σ", ha="center", va="center", fontsize=16)
    gap = float(np.abs(per_head.sum(0) - total).max())
    ax.text(0.35, n + 0.3, f"concat\n[1 × {n * d}]\n(own scale:\n±{zlim:.1f})", ha="center", va="top", fontsize=FS)
    ax.text(5.1, n + 0.3, f"recombination\nW_O [{n * d} × {D}]\n= {n} blocks of {d} rows", ha="center", va="top",
            fontsize=FS)
    ax.text(14.5, n + 2.1, f"Σ of the {n} rows = concat · W_O [1 × {D}]\n(differs by {gap:.0e}; the layer then adds b_O)",
            ha="center", va="top", fontsize=FS)
    ax.text(13.5, -0.15, f"z · W_O[h] = [1 × {D}]", ha="center", va="bottom", fontsize=FS)
    ax.text(17.2, -0.15, "length", ha="left", va="bottom", fontsize=FS)
    ax.text(19.0, -0.15, "= |z| × block", ha="left", va="bottom", fontsize=FS)
    ax.set_yticks([h + 0.5 for h in range(n)], [f"head {h}: z [1 × {d}]" for h in range(n)], fontsize=FS)
    ax.tick_params(axis="y", length=0)
    ax.set_xticks([])
    ax.set_xlim(-0.1, 23)
    ax.set_ylim(n + 3.4, -0.9)
    for side in ax.spines.values():
        side.set_visible(False)
    bar = fig.colorbar(image, cax=fig.add_axes((0.925, 0.22, 0.012, 0.56))) if own else fig.colorbar(image, ax=ax)
    bar.set_label("value in the update", fontsize=FS)
    bar.ax.tick_params(labelsize=FS)
    label = tokens[word] if tokens is not None else f"word {word}"
    ax.set_title(title or f"Recombination for '{label}': [1 × {D}] · [{D} × {D}] = "
                          f"Σ over {n} heads of [1 × {d}] · [{d} × {D}]", fontsize=FS + 2)
    describe(ax, captions.panels_words(title, [captions.recombination_words(z, per_head, total, str(label))]))
    return fig

