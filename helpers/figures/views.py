"""Views of many heads at once: the all-heads grid, one head up close, and token links.

The grid is ONE image (a mosaic), not 144 small plots: every head's T × T map is
copied into a big array with a one-pixel NaN gap between cells, and drawn with a
single imshow. That is what makes it fast enough to redraw inside a widget.

Every view is a small class whose `.update(...)` changes the existing artists
(`set_data`, `set_segments`), so a widget can redraw without building a new figure;
the `plot_*` functions build one and return its Figure.
"""

from __future__ import annotations

import numpy as np
from matplotlib.collections import LineCollection
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure

from ..analysis import descriptions as words
from .common import HIGHLIGHT, as_maps, new_axes
from .describe import describe
from .plots import plot_attention

MARKER_FILL = tuple(0.3 * c + 0.7 for c in to_rgb(HIGHLIGHT))  # the highlight at 30 % on white, opaque


# --- one head up close -------------------------------------------------------------------
def _check_tokens(a: np.ndarray, tokens) -> list[str]:
    tokens = [str(t) for t in tokens]
    if len(tokens) != a.shape[-1]:
        raise ValueError(f"{len(tokens)} tokens given for a {a.shape[-1]} × {a.shape[-1]} map; "
                         f"pass one token per row.")
    return tokens


def _head_axes(T: int):
    """A figure for one T × T map that stays a sensible size for long sentences."""
    side = float(np.clip(1.5 + 0.45 * T, 3.5, 9.0))
    return new_axes(None, (side + 1.5, side))


def _fit_ticks(ax, tokens) -> None:
    """Token tick labels on both axes; smaller words when the sentence is long."""
    T = len(tokens)
    small = "small" if T > 16 else None
    ax.set_xticks(range(T), tokens, rotation=90 if T > 6 else 0, fontsize=small)
    ax.set_yticks(range(T), tokens, fontsize=small)


def plot_head(attn, tokens, ax=None, title=None) -> Figure:
    """One head's attention map with token labels (plots.plot_attention, sized for long sentences)."""
    a = as_maps(attn, 2)
    tokens = _check_tokens(a, tokens)
    if ax is None:
        _, ax = _head_axes(len(tokens))
    fig = plot_attention(a, tokens, ax=ax, title=title)
    _fit_ticks(ax, tokens)
    describe(ax, words.head_words(a, tokens, title))
    return fig


class HeadView:
    """One head's map, redrawn in place for widgets (no numbers in the cells, so it stays fast)."""

    def __init__(self, attn, tokens, ax=None, title=None):
        a = as_maps(attn, 2)
        if ax is None:
            _, ax = new_axes(None, (5.6, 4.6))
        self.ax, self.fig = ax, ax.figure
        plot_attention(a, _check_tokens(a, tokens), ax=ax, title=title, annotate=False)
        self.image = ax.images[-1]
        self.tokens = None  # the words the ticks show
        self.update(a, tokens, title)

    def update(self, attn, tokens, title=None) -> None:
        a = as_maps(attn, 2)
        tokens = _check_tokens(a, tokens)
        T = len(tokens)
        self.image.set_data(a)
        if tokens != self.tokens:  # new words: new ticks (skipped when only the head changed)
            self.image.set_extent((-0.5, T - 0.5, T - 0.5, -0.5))
            _fit_ticks(self.ax, tokens)
            self.tokens = tokens
        if title is not None:
            self.ax.set_title(title)


# --- token links -------------------------------------------------------------------------
class TokenLinksView:
    """Words in two columns, keys left and queries right, joined by lines whose width and
    opacity follow the attention weight (like bertviz's head view)."""

    MAX_WIDTH = 6.0

    def __init__(self, attn, tokens, ax=None, query=None, title=None):
        a = as_maps(attn, 2)
        if ax is None:
            fig, ax = new_axes(None, (4.5, links_height(a.shape[0])))
        self.ax, self.fig = ax, ax.figure
        self.lines = LineCollection([], capstyle="round")
        ax.add_collection(self.lines)
        ax.set_axis_off()
        self.texts: list = []
        self.words = None  # the tokens the words are drawn for
        # The chosen query word: a bold copy on an opaque highlight over the plain word, moved
        # (not rewritten) when the query changes, so a widget redraws only it and the lines.
        self.marker = ax.text(1.05, 0, "", ha="left", va="center", fontweight="bold", visible=False, zorder=3.5,
                              bbox={"facecolor": MARKER_FILL, "linewidth": 0})  # drawn after the words (3)
        self.n_words = 0  # the sentence length the line segments are laid out for
        self.update(a, tokens, query, title)

    def update(self, attn, tokens, query=None, title=None) -> None:
        a = as_maps(attn, 2)
        tokens = _check_tokens(a, tokens)
        T = len(tokens)
        if query is not None and not 0 <= query < T:
            raise ValueError(f"query={query} is not a position of this {T}-token sentence (0..{T - 1}).")
        q, k = np.nonzero(np.ones((T, T), dtype=bool))  # every (query, key) pair, row by row
        w = a[q, k]
        if query is not None:
            w = np.where(q == query, w, 0.0)
        if T != self.n_words:  # the lines' ends depend only on the sentence length
            self.lines.set_segments(np.stack([np.stack([np.zeros(T * T), -k], 1),
                                              np.stack([np.ones(T * T), -q], 1)], 1))  # (T·T, 2, 2)
            self.n_words = T
        colours = np.zeros((T * T, 4))
        colours[:] = (0.0, 0.447, 0.698, 0.0)  # Okabe–Ito blue, alpha set below
        colours[:, 3] = np.clip(w, 0, 1)
        self.lines.set_color(colours)
        self.lines.set_linewidth(self.MAX_WIDTH * np.clip(w, 0, 1))
        if self.words != tokens:  # rewrite the words only when they change
            self._words(tokens)
            self.ax.set_xlim(-0.6, 1.6)
            self.ax.set_ylim(-T + 0.4, 1.0)
        self.marker.set_visible(query is not None)
        if query is not None:
            self.marker.set_text(tokens[query])
            self.marker.set_y(-query)
        if title is not None:
            self.ax.set_title(title)

    def _words(self, tokens) -> None:
        for text in self.texts:
            text.remove()
        self.words = tokens
        self.texts = [self.ax.text(-0.05, 0.7, "keys", ha="right", style="italic"),
                      self.ax.text(1.05, 0.7, "queries", ha="left", style="italic")]
        for i, word in enumerate(tokens):
            self.texts.append(self.ax.text(-0.05, -i, word, ha="right", va="center"))
            self.texts.append(self.ax.text(1.05, -i, word, ha="left", va="center"))


def links_height(T: int) -> float:
    """Figure height in inches that gives each of T words room in the token-link view."""
    return float(np.clip(0.38 * T + 1, 3.0, 14.0))


def plot_token_links(attn, tokens, ax=None, query=None, title=None) -> Figure:
    """Each query word (right) joined to the key words (left); `query=i` shows only word i's lines."""
    view = TokenLinksView(attn, tokens, ax, query, title)
    describe(view.ax, words.links_words(as_maps(attn, 2), list(tokens), query, title))
    return view.fig
