"""Views of many heads at once: the all-heads grid, one head up close, and token links.

The grid is ONE image (a mosaic), not 144 small plots: every head's T × T map is
copied into a big array with a one-pixel NaN gap between cells, and drawn with a
single imshow. That is what makes it fast enough to redraw inside a widget.

Every view is a small class whose `.update(...)` changes the existing artists
(`set_data`, `set_segments`), so a widget can redraw without building a new figure;
the `plot_*` functions build one and return its Figure.
"""

from __future__ import annotations

import io
import zlib

import matplotlib as mpl
import numpy as np
import PIL.Image
from matplotlib import transforms
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from matplotlib.transforms import Bbox

from .plots import plot_attention


def canvas_png(canvas) -> bytes:
    """What an Agg canvas holds, as PNG bytes for an ipywidgets Image.

    Read straight from the canvas's RGBA buffer (no copy), dropped to RGB (the figures are
    opaque) and lightly compressed: in the widgets this encoding is a large share of an
    update's time, and RGB at level 1 encodes in about 60 % of the time of RGBA."""
    rgba = canvas.buffer_rgba()  # (height, width, 4)
    height, width = np.asarray(rgba).shape[:2]
    image = PIL.Image.frombuffer("RGBA", (width, height), rgba, "raw", "RGBA", 0, 1).convert("RGB")
    buffer = io.BytesIO()
    image.save(buffer, format="png", compress_level=1, compress_type=zlib.Z_FILTERED)  # ~25 % faster, same size
    return buffer.getvalue()


class Frame:
    """Renders one figure to PNG bytes for an Image widget, redrawing only what moves.

    The first render draws everything except the `moving` artists and keeps that
    picture as the background; later renders paste the background back and draw only
    the moving artists on top (matplotlib's "blitting"), which skips all the text
    layout. Call `invalidate()` after changing anything that is not a moving artist.
    """

    def __init__(self, fig, moving=(), dpi: int = 72):
        fig.set_dpi(dpi)
        self.fig, self.canvas, self.moving = fig, FigureCanvasAgg(fig), list(moving)
        for artist in self.moving:
            artist.set_animated(True)
        self.background = None

    def invalidate(self) -> None:
        self.background = None

    def png(self) -> bytes:
        if self.background is None:
            self.canvas.draw()  # everything but the moving artists
            self.background = self.canvas.copy_from_bbox(self.fig.bbox)
        else:
            self.canvas.restore_region(self.background)
        for artist in self.moving:
            self.fig.draw_artist(artist)
        return canvas_png(self.canvas)


def show_png(image, frame: Frame, png: bytes | None = None) -> None:
    """Put a frame's picture into an ipywidgets Image shown at its own pixel size.

    Without a fixed width the browser stretches an image to fill its flex box (a 540-px grid
    was shown 1037 px tall); width in px, height auto and no flex stretching keep the
    picture's aspect ratio and never enlarge it (max-width may still shrink it to fit).
    `png`: a picture this frame rendered earlier (a widget may keep them); else it renders now."""
    png = frame.png() if png is None else png
    width, _ = frame.canvas.get_width_height()
    image.layout.width, image.layout.height = f"{width}px", "auto"
    image.layout.max_width, image.layout.flex, image.layout.align_self = "100%", "none", "flex-start"
    image.value = png


CMAP = "viridis"  # the project's attention colour map (export.SLIDE_CMAP); NaN gaps are drawn white
HIGHLIGHT = "#D55E00"  # Okabe–Ito vermillion: stands out on viridis
MIN_TOKEN_PT = 7.0  # token labels of a grid smaller than this are hidden: 4-5 px words are unreadable


def as_maps(attentions, ndim: int) -> np.ndarray:
    """A tensor or array of attention weights as a float numpy array with `ndim` dims."""
    if hasattr(attentions, "detach"):
        attentions = attentions.detach().cpu().float().numpy()
    a = np.asarray(attentions, dtype=float)
    if a.ndim != ndim or a.shape[-1] != a.shape[-2]:
        want = "(layers, heads, T, T)" if ndim == 4 else "(T, T)"
        raise ValueError(f"Expected attention of shape {want}, got {a.shape}; rows are queries, columns keys.")
    return a


def head_mosaic(attentions) -> np.ndarray:
    """(L, H, T, T) maps -> one (L·(T+1)-1, H·(T+1)-1) image; cell (l, h) holds map[l, h].

    Cell (l, h) starts at row l·(T+1) and column h·(T+1); inside it rows are queries
    and columns keys, exactly as in the map. The one-pixel gaps between cells are NaN.
    """
    a = as_maps(attentions, 4)  # (L, H, T, T)
    L, H, T, _ = a.shape
    grid = np.full((L, T + 1, H, T + 1), np.nan)  # layer, query row, head, key column
    grid[:, :T, :, :T] = a.transpose(0, 2, 1, 3)  # (L, T, H, T)
    return grid.reshape(L * (T + 1), H * (T + 1))[:-1, :-1]


def mosaic_cell(mosaic: np.ndarray, layer: int, head: int, T: int) -> np.ndarray:
    """The T × T block of the mosaic that holds head (layer, head)."""
    r, c = layer * (T + 1), head * (T + 1)
    return mosaic[r:r + T, c:c + T]


def _new_axes(figsize: tuple[float, float]):
    fig = Figure(figsize=figsize, layout="constrained")
    return fig, fig.add_subplot()


class AllHeadsView:
    """The all-heads grid: layers as rows, heads as columns, one shared colour bar."""

    def __init__(self, attentions, tokens=None, ax=None, highlight=None, title=None, labels=None,
                 token_labels: bool = False):
        self.token_texts: list = []  # query words left of each layer's first map, key words under the last
        self.words_shown = False  # whether the token labels are large enough to be drawn (set at layout)
        self.token_labels = token_labels and tokens is not None and ax is None  # room for them comes from _place
        if ax is None:  # placed by _place at every draw: no layout pass, right at any figure size
            fig = Figure(figsize=(9, 8))
            ax, cax = fig.add_axes((0, 0, 1, 1)), fig.add_axes((0, 0, 1, 1))
            ax.set_axes_locator(lambda *_: self._place()[0])
            cax.set_axes_locator(lambda *_: self._place()[1])
            self.title = fig.suptitle("", fontsize="large")
        else:
            cax, self.title = None, ax.set_title("", pad=16)  # room for the H0.. labels above the grid
        self.ax, self.fig = ax, ax.figure
        mosaic = head_mosaic(attentions)
        self.image = ax.imshow(mosaic, cmap=self._cmap(), vmin=0, vmax=1, interpolation="nearest")
        if cax is None:
            bar = self.fig.colorbar(self.image, ax=ax, shrink=0.8, label="attention weight")
        else:
            bar = self.fig.colorbar(self.image, cax=cax, label="attention weight")
        bar.set_ticks([0, 0.5, 1])  # three labels read as well on a slide, and draw in half the time
        self.gaps = ax.add_collection(LineCollection([], colors="white", linewidths=1.0))  # crisp at any size
        self.rect = Rectangle((0, 0), 1, 1, fill=False, edgecolor=HIGHLIGHT, linewidth=3, visible=False)
        ax.add_patch(self.rect)
        self.label_texts = []
        ax.set_xticks([])  # plain texts instead of ticks: much faster to draw, same look
        ax.set_yticks([])
        self.head_texts, self.layer_texts = [], []  # made in _set_shape, one per head and per layer
        self.shape = None
        self.update(attentions, highlight, tokens, title)
        self.set_labels(labels)

    def _place(self) -> tuple[Bbox, Bbox]:
        """Where the grid and its colour bar go (figure fractions): the grid as large as fits at
        equal aspect under the title, the bar just right of it, the pair centred. Computed from
        the figure's current size, so a 16:9 slide keeps the bar next to the grid."""
        W, H = self.fig.get_size_inches()
        L, Hn, T, _ = self.shape
        rows, cols = L * (T + 1) - 1, Hn * (T + 1) - 1
        pt = (self.layer_texts[0].get_fontsize() if self.layer_texts else 10) / 72  # a label's size in inches
        title = self.title.get_fontsize() / 72 * (self.title.get_text().count("\n") + 1)
        gap, bar, bar_text = 0.15, 0.2, 4.5 * pt  # inches: gaps, bar, its ticks + label
        top = 1.35 * title + 2.2 * pt + 0.1  # the title and the H0.. labels above the grid
        words = 0.0  # room for the token labels, once their size is known
        for _ in range(2):  # the words' size follows the map size, which follows the room they take
            labels, bottom = 2.4 * pt + words, 0.03 * H + words
            height = max(0.1, min(H - top - bottom, (W - labels - gap - bar - bar_text) * rows / cols))
            words = self._size_token_texts(height / rows * 72, pt * 72)
        width = height * cols / rows
        self._size_cell_labels(height / rows * T * 72, pt * 72)
        self.needed_height = top + height + bottom + 0.05  # inches: what fit_height shrinks the figure to
        left = (W - (labels + width + gap + bar + bar_text)) / 2 + labels
        y = H - top - height
        bar_height = min(max(height, 1.5), H - top - bottom)  # a one-layer grid still gets a readable bar
        return (Bbox.from_bounds(left / W, y / H, width / W, height / H),
                Bbox.from_bounds((left + width + gap) / W, (H - top - bar_height) / H, bar / W, bar_height / H))

    def fit_height(self, max_height: float) -> None:
        """Make the figure (its own, ax=None) only as tall as the grid needs at the figure's width,
        at most max_height inches: a few heads get big maps, many heads a short, wide strip."""
        width = self.fig.get_figwidth()
        self.fig.set_size_inches(width, max_height)
        self._place()
        self.fig.set_size_inches(width, min(max_height, self.needed_height))

    def _size_token_texts(self, row_pt: float, label_pt: float) -> float:
        """Give the token labels one map row's height (capped at the L0 labels' size); return the
        inches they take beside the grid. Rows under MIN_TOKEN_PT hide the words (0 inches):
        a label nobody can read is only noise, and `words_shown` tells the caller to say so."""
        if not self.token_texts:
            return 0.0
        size = min(0.85 * row_pt, label_pt)
        self.words_shown = size >= MIN_TOKEN_PT
        for text in self.token_texts:
            text.set_fontsize(size)
            text.set_visible(self.words_shown)
        longest = max(len(t.get_text()) for t in self.token_texts)
        margin = (0.6 * longest * size + 4) / 72 if self.words_shown else 0.0  # a word's rough width and a gap
        offset = transforms.offset_copy(self.ax.transData, fig=self.fig, x=-4 - margin * 72, y=0, units="points")
        for text in self.layer_texts:
            text.set_transform(offset)  # L0, L1 … move out past the words
        return margin

    def _size_cell_labels(self, cell_pt: float, label_pt: float) -> None:
        """The notes written into cells (set_labels) as large as fits a cell's width, up to the
        L0 labels' size: "subject 0.70" no longer has to be cut or drawn at 6 px."""
        lines = [line for text in self.label_texts for line in text.get_text().splitlines()]
        longest = max((len(line) for line in lines), default=1)  # one size for all: the longest must fit
        for text in self.label_texts:
            text.set_fontsize(float(np.clip(0.9 * cell_pt / (0.6 * max(longest, 1)), 4, label_pt)))

    def _set_tokens(self, tokens) -> None:
        """Query words left of the first map of every layer, key words under the last layer's first map."""
        for text in self.token_texts:
            text.remove()
        self.token_texts = []
        if not self.token_labels or tokens is None:
            return
        L, _, T, _ = self.shape
        left = transforms.offset_copy(self.ax.transData, fig=self.fig, x=-3, y=0, units="points")
        below = transforms.offset_copy(self.ax.transData, fig=self.fig, x=0, y=-3, units="points")
        bottom = (L - 1) * (T + 1) + T - 0.5
        for layer in range(L):
            self.token_texts += [self.ax.text(-0.5, layer * (T + 1) + q, word, ha="right", va="center",
                                              transform=left) for q, word in enumerate(tokens)]
        self.token_texts += [self.ax.text(k, bottom, word, ha="center", va="top", rotation=90, transform=below)
                             for k, word in enumerate(tokens)]

    @staticmethod
    def _cmap():
        return mpl.colormaps[CMAP].with_extremes(bad="white")  # the NaN gaps between cells

    def update(self, attentions=None, highlight=None, tokens=None, title=None) -> None:
        """New maps and/or a new highlighted (layer, head); changes the existing artists."""
        if attentions is not None:
            a = as_maps(attentions, 4)
            self.image.set_data(head_mosaic(a))
            if a.shape != self.shape:
                self._set_shape(a.shape)
        self._move_rect(highlight)
        if tokens is not None:
            self._set_tokens([str(t) for t in tokens])
        if title is not None or tokens is not None:
            self.title.set_text(title or _reading(tokens, self.shape))

    def _set_shape(self, shape) -> None:
        L, H, T, _ = shape
        self.shape = shape
        width, height = H * (T + 1) - 1, L * (T + 1) - 1
        self.image.set_extent((-0.5, width - 0.5, height - 0.5, -0.5))
        self.gaps.set_segments([[(h * (T + 1) - 1, -0.5), (h * (T + 1) - 1, height - 0.5)] for h in range(1, H)]
                               + [[(-0.5, l * (T + 1) - 1), (width - 0.5, l * (T + 1) - 1)] for l in range(1, L)])
        self._label_count(self.head_texts, H, "H", ha="center", va="bottom", dx=0, dy=3)
        self._label_count(self.layer_texts, L, "L", ha="right", va="center", dx=-4, dy=0)
        centre = (T - 1) / 2
        for h, text in enumerate(self.head_texts):
            text.set_position((h * (T + 1) + centre, -0.5))
        for l, text in enumerate(self.layer_texts):
            text.set_position((-0.5, l * (T + 1) + centre))

    def _label_count(self, texts: list, n: int, prefix: str, ha: str, va: str, dx: float, dy: float) -> None:
        """Keep exactly n edge labels (H0, H1 ... or L0, L1 ...): a new model may have more or fewer."""
        while len(texts) > n:
            texts.pop().remove()
        offset = transforms.offset_copy(self.ax.transData, fig=self.fig, x=dx, y=dy, units="points")
        while len(texts) < n:
            texts.append(self.ax.text(0, 0, f"{prefix}{len(texts)}", ha=ha, va=va, transform=offset))

    def _move_rect(self, highlight) -> None:
        if highlight is None:
            self.rect.set_visible(False)
            return
        L, H, T, _ = self.shape
        layer, head = highlight
        if not (0 <= layer < L and 0 <= head < H):
            raise ValueError(f"highlight={highlight} is outside the grid of {L} layers × {H} heads.")
        self.rect.set_bounds(head * (T + 1) - 0.5, layer * (T + 1) - 0.5, T, T)
        self.rect.set_visible(True)

    def set_labels(self, labels: dict | None) -> None:
        """Write a short label (e.g. a head type and score) into the corner of each listed cell."""
        for text in self.label_texts:
            text.remove()
        self.label_texts = []
        if not labels:
            return
        T = self.shape[2]
        for (layer, head), text in labels.items():
            self.label_texts.append(self.ax.text(
                head * (T + 1) - 0.4, layer * (T + 1) + T - 0.6, text, fontsize="xx-small", color="white",
                ha="left", va="bottom", bbox={"facecolor": "black", "alpha": 0.55, "pad": 0.5, "linewidth": 0}))


def _reading(tokens, shape) -> str:
    L, H = shape[:2]
    head = f"All {L * H} heads ({L} layers × {H} heads)"
    if tokens is None:
        return head
    words = " ".join(tokens)
    return f"{head} reading:\n{words if len(words) <= 80 else words[:79] + '…'}"


def plot_all_heads(attentions, tokens=None, ax=None, highlight=None, title=None, labels=None,
                   token_labels: bool = False) -> Figure:
    """Every head's map in one grid image; `highlight=(layer, head)` frames one cell,
    `labels={(layer, head): "prev .93"}` writes a note into cells, `token_labels=True` writes
    the words beside the first column (queries) and under the last row (keys)."""
    return AllHeadsView(attentions, tokens, ax, highlight, title, labels, token_labels).fig


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
    return _new_axes((side + 1.5, side))


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
    return fig


class HeadView:
    """One head's map, redrawn in place for widgets (no numbers in the cells, so it stays fast)."""

    def __init__(self, attn, tokens, ax=None, title=None):
        a = as_maps(attn, 2)
        if ax is None:
            _, ax = _new_axes((5.6, 4.6))
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
            fig, ax = _new_axes((4.5, links_height(a.shape[0])))
        self.ax, self.fig = ax, ax.figure
        self.lines = LineCollection([], capstyle="round")
        ax.add_collection(self.lines)
        ax.set_axis_off()
        self.texts: list = []
        self.words: tuple = (None, None)  # (tokens, query) the words are drawn for
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
        if self.words != (tokens, query):  # rewrite the words only when they change
            self._words(tokens, query)
            self.ax.set_xlim(-0.6, 1.6)
            self.ax.set_ylim(-T + 0.4, 1.0)
        if title is not None:
            self.ax.set_title(title)

    def _words(self, tokens, query) -> None:
        for text in self.texts:
            text.remove()
        self.words = (tokens, query)
        self.texts = [self.ax.text(-0.05, 0.7, "keys", ha="right", style="italic"),
                      self.ax.text(1.05, 0.7, "queries", ha="left", style="italic")]
        for i, word in enumerate(tokens):
            chosen = i == query
            self.texts.append(self.ax.text(-0.05, -i, word, ha="right", va="center"))
            self.texts.append(self.ax.text(
                1.05, -i, word, ha="left", va="center", fontweight="bold" if chosen else "normal",
                bbox={"facecolor": HIGHLIGHT, "alpha": 0.3, "linewidth": 0} if chosen else None))


def links_height(T: int) -> float:
    """Figure height in inches that gives each of T words room in the token-link view."""
    return float(np.clip(0.38 * T + 1, 3.0, 14.0))


def plot_token_links(attn, tokens, ax=None, query=None, title=None) -> Figure:
    """Each query word (right) joined to the key words (left); `query=i` shows only word i's lines."""
    return TokenLinksView(attn, tokens, ax, query, title).fig
