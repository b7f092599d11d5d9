"""Plots for the walkthrough notebooks: attention maps, one word's weights, shapes, blocks.

Every function takes `ax=None` (a new figure is made) and returns the Figure; none
calls plt.show() or writes files (`helpers.export.save_for_slides` does that).
Rows of an attention map are queries (the word being updated), columns are keys
(the words it looks at), and every map says so on its axes.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from .export import SLIDE_CMAP

QUERY_LABEL = "query: the word being updated"
KEY_LABEL = "key: the word looked at"
ANNOTATE_UP_TO = 12  # tokens; bigger maps get no numbers in the cells


def _new_axes(ax: Axes | None, size: tuple[float, float]) -> tuple[Figure, Axes]:
    if ax is not None:
        return ax.figure, ax
    fig = Figure(figsize=size, layout="constrained")  # not pyplot: no global state, no leaks
    return fig, fig.add_subplot()


def _as_array(values, name: str, ndim: int) -> np.ndarray:
    array = np.asarray(values.detach().cpu() if hasattr(values, "detach") else values, dtype=float)
    if array.ndim != ndim:
        raise ValueError(f"{name} has shape {list(array.shape)} but must have {ndim} dimension(s); "
                         f"select one map, e.g. attentions[layer, head].")
    return array


def plot_attention(weights, tokens: Sequence[str], ax: Axes | None = None, title: str | None = None,
                   key_tokens: Sequence[str] | None = None, annotate: bool | None = None,
                   cmap: str = SLIDE_CMAP, colorbar: bool = True) -> Figure:
    """Heatmap of an attention map (T_query, T_key) with the tokens on both axes."""
    w = _as_array(weights, "weights", 2)
    keys = list(tokens if key_tokens is None else key_tokens)
    if w.shape != (len(tokens), len(keys)):
        raise ValueError(f"weights has shape {list(w.shape)} but there are {len(tokens)} query and "
                         f"{len(keys)} key tokens; pass the tokens the map was computed from.")
    fig, ax = _new_axes(ax, (1.2 + 0.75 * len(keys), 0.8 + 0.65 * len(tokens)))
    image = ax.imshow(w, cmap=cmap, vmin=0.0, vmax=max(1.0, float(w.max())), aspect="auto")
    ax.set_xticks(range(len(keys)), keys, rotation=45 if len(keys) > 6 else 0, ha="right" if len(keys) > 6 else "center")
    ax.set_yticks(range(len(tokens)), list(tokens))
    ax.set_xlabel(KEY_LABEL)
    ax.set_ylabel(QUERY_LABEL)
    if title:
        ax.set_title(title)
    if annotate if annotate is not None else max(w.shape) <= ANNOTATE_UP_TO:
        _annotate_cells(ax, w)
    if colorbar:
        fig.colorbar(image, ax=ax, label="attention weight", shrink=0.8)
    return fig


def plot_heads(weights, tokens: Sequence[str], ncols: int = 6, title: str | None = None,
               annotate: bool = False) -> Figure:
    """Small multiples: one attention map (H, T, T) per head, in a grid, with shared labels."""
    w = _as_array(weights, "weights", 3)
    n = w.shape[0]
    nrows = -(-n // ncols)
    fig = Figure(figsize=(2.5 * min(n, ncols) + 0.5, 2.6 * nrows + 0.6), layout="constrained")
    axes = fig.subplots(nrows, min(n, ncols), squeeze=False)
    for k, ax in enumerate(axes.flat):
        if k >= n:
            ax.set_visible(False)
            continue
        plot_attention(w[k], tokens, ax=ax, title=f"head {k}", annotate=annotate, colorbar=False)
        ax.tick_params(axis="x", labelrotation=90)  # small panels: upright labels would collide
        ax.set_xlabel("")
        ax.set_ylabel("")
    fig.supxlabel(KEY_LABEL)
    fig.supylabel(QUERY_LABEL)
    if title:
        fig.suptitle(title)
    return fig


def _annotate_cells(ax: Axes, w: np.ndarray) -> None:
    """Write each weight in its cell, dark text on light cells and light text on dark ones."""
    for (row, col), value in np.ndenumerate(w):
        colour = "black" if value > 0.55 else "white"
        ax.text(col, row, f"{value:.2f}", ha="center", va="center", color=colour, fontsize=11)


def plot_word_weights(weights, tokens: Sequence[str], word: str | int, ax: Axes | None = None,
                      title: str | None = None) -> Figure:
    """Bar chart of how much one word (the query) attends to every word (the keys)."""
    w = _as_array(weights, "weights", 1)
    if len(w) != len(tokens):
        raise ValueError(f"weights has {len(w)} values but there are {len(tokens)} tokens; "
                         f"pass one row of the attention map and its tokens.")
    label = tokens[word] if isinstance(word, int) else str(word)
    fig, ax = _new_axes(ax, (1.5 + 1.0 * len(tokens), 3.6))
    bars = ax.bar(range(len(tokens)), w, color="#0072B2")
    ax.bar_label(bars, [f"{v:.2f}" for v in w], padding=3)
    ax.set_xticks(range(len(tokens)), list(tokens))
    ax.set_ylim(0, max(1.0, float(w.max())) * 1.12)
    ax.set_xlabel(KEY_LABEL)
    ax.set_ylabel(f"weight from '{label}'")
    ax.set_title(title or f"Where '{label}' looks (the weights sum to {w.sum():.2f})")
    return fig


def plot_matmul(left: tuple[int, int], right: tuple[int, int], names: Sequence[str] = ("A", "B", "A·B"),
                ax: Axes | None = None, title: str | None = None) -> Figure:
    """Shape diagram of a matrix product: [n × k]·[k × m] → [n × m], boxes drawn to scale (square-root)."""
    (n, k), (k2, m) = left, right
    if k != k2:
        raise ValueError(f"Cannot multiply [{n} × {k}] by [{k2} × {m}]: the inner sizes {k} and {k2} differ; "
                         f"transpose one matrix or pick matching shapes.")
    fig, ax = _new_axes(ax, (10, 4))
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
    return fig


def plot_recombination(W_O, ax: Axes | None = None, highlight: int | None = None,
                       title: str | None = None) -> Figure:
    """The recombination matrix as its per-head row blocks: W_O (n_heads, d_head, d_model) stacked."""
    w = _as_array(W_O, "W_O", 3)
    n_heads, d_head, d_model = w.shape
    fig, ax = _new_axes(ax, (7, 6.5))
    stacked = np.abs(w.reshape(n_heads * d_head, d_model))  # (H·d, D): the d_model × d_model matrix
    pooled = _pool(stacked, d_head)  # at most ~256 px a side keeps SVG and PDF small
    ax.imshow(pooled, cmap="cividis", aspect="auto", vmin=0, vmax=float(np.quantile(pooled, 0.99)) or 1.0,
              extent=(-0.5, d_model - 0.5, n_heads * d_head - 0.5, -0.5), interpolation="nearest")
    for h in range(1, n_heads):
        ax.axhline(h * d_head - 0.5, color="white", linewidth=1.2)
    ax.set_yticks([h * d_head + d_head / 2 - 0.5 for h in range(n_heads)], [f"head {h}" for h in range(n_heads)])
    if highlight is not None:
        if not 0 <= highlight < n_heads:
            raise ValueError(f"highlight={highlight} is not a head; choose 0..{n_heads - 1}.")
        ax.add_patch(Rectangle((-0.5, highlight * d_head - 0.5), d_model, d_head, fill=False,
                               edgecolor="#D55E00", linewidth=3))
    ax.set_xlabel(f"output feature (0 … {d_model - 1})")
    ax.set_ylabel(f"rows: {n_heads} blocks of {d_head}")
    ax.set_title(title or f"Recombination [{n_heads * d_head} × {d_model}]: |weight| per entry")
    return fig


def _pool(matrix: np.ndarray, block_rows: int, limit: int = 256) -> np.ndarray:
    """Mean over f × f tiles, f the smallest factor that divides the head size and gets under `limit`."""
    factor = next((f for f in range(1, block_rows + 1) if block_rows % f == 0 and matrix.shape[0] // f <= limit
                   and matrix.shape[1] % f == 0), 1)
    rows, cols = matrix.shape[0] // factor, matrix.shape[1] // factor
    return matrix[:rows * factor, :cols * factor].reshape(rows, factor, cols, factor).mean(axis=(1, 3))


def plot_vectors(vectors: dict, ax: Axes | None = None, title: str | None = None) -> Figure:
    """Each vector as a coloured strip on a common length axis, so 64 next to 768 is plain to see."""
    arrays = {name: _as_array(v, f"vector {name!r}", 1) for name, v in vectors.items()}
    if not arrays:
        raise ValueError("plot_vectors got no vectors; pass a dict such as {'update': u}.")
    longest = max(len(a) for a in arrays.values())
    fig, ax = _new_axes(ax, (10, 0.9 + 0.7 * len(arrays)))
    limit = max(float(np.abs(a).max()) for a in arrays.values()) or 1.0
    for row, (name, a) in enumerate(arrays.items()):
        ax.imshow(a[None, :], cmap="coolwarm", vmin=-limit, vmax=limit, aspect="auto",
                  extent=(0, len(a), row + 0.4, row - 0.4))
    ax.set_xlim(0, longest)
    ax.set_ylim(len(arrays) - 0.5, -0.5)
    ax.set_yticks(range(len(arrays)), [f"{n} ({len(a)})" for n, a in arrays.items()])
    ax.set_xlabel("feature index")
    ax.set_title(title or "Vector lengths")
    return fig
