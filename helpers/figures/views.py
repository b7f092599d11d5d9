"""One head up close, and its token links: the `plot_*` functions for a notebook, and views whose
`.update(...)` changes the existing artists, so a widget redraws without building a new figure
(the all-heads grid is mosaic.py)."""

from __future__ import annotations

import matplotlib as mpl
import numpy as np
from matplotlib.collections import LineCollection
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure
from matplotlib.transforms import Bbox

from ..analysis import captions
from .common import HIGHLIGHT, as_maps, describe, new_axes, tick_label_colour
from .plots import plot_attention

WORD_PAD = 3.5  # points between a map's frame and its words: matplotlib's tick-label pad
MARKER_FILL = tuple(0.3 * c + 0.7 for c in to_rgb(HIGHLIGHT))  # the highlight at 30 % on white, opaque


# --- one head up close -------------------------------------------------------------------
def _check_tokens(a: np.ndarray, tokens) -> list[str]:
    tokens = [str(t) for t in tokens]
    if len(tokens) != a.shape[-1]:
        raise ValueError(f"{len(tokens)} tokens given for a {a.shape[-1]} × {a.shape[-1]} map; "
                         f"pass one token per row.")
    return tokens


def _word_fit(T: int) -> tuple[str | None, int]:
    """How a map's words fit a sentence of T tokens: their font size (smaller when the sentence is
    long; None: the style's) and the key words' rotation (upright past 6 words)."""
    return ("small" if T > 16 else None), (90 if T > 6 else 0)


def plot_head(attn, tokens, ax=None, title=None, annotate: bool | None = None) -> Figure:
    """One head's attention map with token labels (plots.plot_attention, sized for long sentences);
    annotate: numbers in the cells (default: when the map is small enough)."""
    a = as_maps(attn, 2)
    tokens = _check_tokens(a, tokens)
    T = len(tokens)
    side = float(np.clip(1.5 + 0.45 * T, 3.5, 9.0))  # a sensible size for long sentences too
    fig, ax = new_axes(ax, (side + 1.5, side))
    plot_attention(a, tokens, ax=ax, title=title, annotate=annotate)
    size, rotation = _word_fit(T)
    ax.set_xticks(range(T), tokens, rotation=rotation, fontsize=size)
    ax.set_yticks(range(T), tokens, fontsize=size)
    describe(ax, captions.head_words(a, tokens, title))
    return fig


class HeadView:
    """One head's map, redrawn in place for widgets (no numbers in the cells, so it stays fast).

    The words are plain Text artists, not tick labels, and the axis labels are placed just past
    them at every draw: a widget's Frame then redraws only these texts for a new sentence and
    keeps the axes and the colour bar as pixels (`word_texts`)."""

    def __init__(self, attn, tokens, ax=None, title=None):
        a = as_maps(attn, 2)
        if ax is None:
            _, ax = new_axes(None, (5.6, 4.6))
        self.ax, self.fig = ax, ax.figure
        plot_attention(a, _check_tokens(a, tokens), ax=ax, title=title, annotate=False)
        self.image = ax.images[-1]
        self.font = {"fontsize": mpl.rcParams["xtick.labelsize"], "color": tick_label_colour()}  # as tick labels
        ax.set_xticks([])
        ax.set_yticks([])
        self.key_words: list = []  # under the map, one per column
        self.query_words: list = []  # left of it, one per row
        label = {"fontsize": ax.xaxis.label.get_fontsize(), "color": ax.xaxis.label.get_color(),
                 "textcoords": "offset points", "ha": "center"}  # as the axis labels, labelpad past the words
        self.labels = [  # "key: …" under the key words, "query: …" left of the query words
            ax.annotate(ax.get_xlabel(), (0.5, 0), xycoords=self._below_words, xytext=(0, -ax.xaxis.labelpad),
                        va="top", **label),
            ax.annotate(ax.get_ylabel(), (0, 0.5), xycoords=self._left_of_words, xytext=(-ax.yaxis.labelpad, 0),
                        va="bottom", rotation=90, rotation_mode="anchor", **label)]
        ax.set_xlabel("")
        ax.set_ylabel("")
        self.tokens = None  # the words shown
        self.update(a, tokens, title)

    @property
    def word_texts(self) -> list:
        """The texts that move with the sentence: the key words, the query words, the two labels past them."""
        return [*self.key_words, *self.query_words, *self.labels]

    def update(self, attn, tokens, title=None) -> None:
        a = as_maps(attn, 2)
        tokens = _check_tokens(a, tokens)
        T = len(tokens)
        self.image.set_data(a)
        if tokens != self.tokens:  # new words (skipped when only the head changed)
            self.image.set_extent((-0.5, T - 0.5, T - 0.5, -0.5))
            self._words(tokens)
            self.tokens = tokens
        if title is not None:
            self.ax.set_title(title)

    def _words(self, tokens) -> None:
        """One key word under each column and one query word left of each row, WORD_PAD from the
        frame as tick labels would be; long sentences get smaller, upright key words."""
        T, ax = len(tokens), self.ax
        for texts, place in ((self.key_words, ax.get_xaxis_text1_transform),
                             (self.query_words, ax.get_yaxis_text1_transform)):  # where tick labels go
            while len(texts) > T:
                texts.pop().remove()
            transform, va, ha = place(WORD_PAD)
            while len(texts) < T:
                texts.append(ax.text(0, 0, "", transform=transform, va=va, ha=ha, **self.font))
        size, rotation = _word_fit(T)
        size = size or self.font["fontsize"]
        for i, (key, query) in enumerate(zip(self.key_words, self.query_words)):
            key.set(text=tokens[i], x=i, fontsize=size, rotation=rotation, ha="right" if rotation else "center")
            query.set(text=tokens[i], y=i, fontsize=size)

    def words_room(self, renderer) -> tuple[float, float]:
        """Pixels the words take below and left of the map: what a layout must leave them."""
        return self._room(self.key_words, renderer)[0], self._room(self.query_words, renderer)[1]

    def _room(self, texts, renderer) -> tuple[float, float]:
        """Pixels these texts reach below and left of the map's frame."""
        box = self.ax.get_window_extent(renderer)
        extents = [t.get_window_extent(renderer) for t in texts]
        return (max([box.y0 - e.y0 for e in extents], default=0.0),
                max([box.x0 - e.x0 for e in extents], default=0.0))

    def _below_words(self, renderer) -> Bbox:
        """The map's box, stretched down past its key words: the key label hangs under it."""
        box = self.ax.get_window_extent(renderer)
        return Bbox.from_extents(box.x0, box.y0 - self._room(self.key_words, renderer)[0], box.x1, box.y1)

    def _left_of_words(self, renderer) -> Bbox:
        """The map's box, stretched left past its query words: the query label stands beside them."""
        box = self.ax.get_window_extent(renderer)
        return Bbox.from_extents(box.x0 - self._room(self.query_words, renderer)[1], box.y0, box.x1, box.y1)


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
        self.headers = [ax.text(-0.05, 0.7, "keys", ha="right", style="italic"),
                        ax.text(1.05, 0.7, "queries", ha="left", style="italic")]
        self.word_texts: list = []  # a key and a query word per row, in that order
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
        w = np.clip(a[q, k], 0, 1)
        if query is not None:
            w = np.where(q == query, w, 0.0)
        if T != self.n_words:  # the lines' ends depend only on the sentence length
            self.ends = np.stack([np.stack([np.zeros(T * T), -k], 1), np.stack([np.ones(T * T), -q], 1)], 1)
            self.n_words = T  # (T·T, 2, 2): every pair's line, row by row
        # A weight of 0 is a line of no width and no colour (the causal mask's half, the other queries'
        # lines): it is left out, which changes no pixel and draws half the lines or fewer.
        drawn = w > 0
        colours = np.zeros((int(drawn.sum()), 4))
        colours[:] = (0.0, 0.447, 0.698, 0.0)  # Okabe–Ito blue, alpha set below
        colours[:, 3] = w[drawn]
        self.lines.set_segments(self.ends[drawn])
        self.lines.set_color(colours)
        self.lines.set_linewidth(self.MAX_WIDTH * w[drawn])
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
        """The two columns of words. Their Text artists are kept and changed for the new words
        (making a Text costs more than changing one), so a widget can keep them as one layer."""
        self.words = tokens
        texts = self.word_texts
        while len(texts) > 2 * len(tokens):  # a shorter sentence: drop the last rows
            texts.pop().remove()
        while len(texts) < 2 * len(tokens):  # a longer one: a key and a query word per row
            texts += [self.ax.text(-0.05, 0, "", ha="right", va="center"),
                      self.ax.text(1.05, 0, "", ha="left", va="center")]
        for i, word in enumerate(tokens):
            for text in texts[2 * i:2 * i + 2]:
                text.set_text(word)
                text.set_y(-i)

    def set_height(self, inches: float, renderer) -> bool:
        """Make the view's own figure `inches` tall for a new number of words; False if a text would
        stick out of the axes, so its layout engine must place them again. Else the axes get what that
        engine would give them, its pads from each edge, without its run (most of a redraw's time)."""
        self.fig.set_size_inches(self.fig.get_figwidth(), inches)
        pads, (W, H) = self.fig.get_layout_engine().get(), self.fig.get_size_inches()
        x, y = pads["w_pad"] / W, pads["h_pad"] / H  # figure fractions
        self.ax.set_position((x, y, 1 - 2 * x, 1 - 2 * y))
        self.ax.set_in_layout(True)  # set_position leaves the axes out of the layout; a later one still places it
        box = self.ax.get_window_extent(renderer)
        texts = Bbox.union([t.get_window_extent(renderer) for t in self.headers + self.word_texts])
        return box.x0 <= texts.x0 and texts.x1 <= box.x1 and box.y0 <= texts.y0 and texts.y1 <= box.y1


def links_height(T: int) -> float:
    """Figure height in inches that gives each of T words room in the token-link view."""
    return float(np.clip(0.38 * T + 1, 3.0, 14.0))


def plot_token_links(attn, tokens, ax=None, query=None, title=None) -> Figure:
    """Each query word (right) joined to the key words (left); `query=i` shows only word i's lines."""
    view = TokenLinksView(attn, tokens, ax, query, title)
    if query is not None:  # one word, not two stacked: the bold marker's opaque box covers the plain one anyway
        view.word_texts[2 * query + 1].set_visible(False)  # (a live view keeps it: its words are cached pixels)
    describe(view.ax, captions.links_words(as_maps(attn, 2), list(tokens), query, title))
    return view.fig
