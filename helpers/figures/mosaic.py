"""All heads of a model at once: one mosaic image of every (layer, head) map, with labels and a highlight."""

from __future__ import annotations

import matplotlib as mpl
import numpy as np
from matplotlib import transforms
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from matplotlib.transforms import Bbox

from ..analysis import captions
from ..core.arguments import whole_number
from .common import HIGHLIGHT, MIN_TOKEN_PT, as_maps, describe, new_figure
from .slide import current_cmap


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
    T = whole_number(T, "T", low=1)
    rows, cols = np.shape(mosaic)
    if (rows + 1) % (T + 1) or (cols + 1) % (T + 1):
        raise ValueError(f"A mosaic of {rows} × {cols} is not a grid of {T} × {T} maps; pass the T it was made with.")
    L, H = (rows + 1) // (T + 1), (cols + 1) // (T + 1)  # each map is followed by a 1-wide gap, but the last
    # a negative layer would slice a misaligned block and layer L an empty one: refuse both
    layer = whole_number(layer, "layer", 0, L - 1, valid=f"this grid has layers 0..{L - 1}")
    head = whole_number(head, "head", 0, H - 1, valid=f"this grid has heads 0..{H - 1}")
    r, c = layer * (T + 1), head * (T + 1)
    return mosaic[r:r + T, c:c + T]


class AllHeadsView:
    """The all-heads grid: layers as rows, heads as columns, one shared colour bar."""

    def __init__(self, attentions, tokens=None, ax=None, highlight=None, title=None, labels=None,
                 token_labels: bool = False):
        self.token_texts: list = []  # query words left of each layer's first map, key words under the last
        self.words_shown = False  # whether the token labels are large enough to be drawn (set at layout)
        self.token_labels = token_labels and tokens is not None and ax is None  # room for them comes from _place
        own = ax is None  # then placed by _place at every draw: no layout pass, right at any figure size
        if own:
            ax = new_figure(figsize=(9, 8)).add_axes((0, 0, 1, 1))
            ax.set_axes_locator(lambda *_: self._place())
            self.title = ax.figure.suptitle("", fontsize="large")
        else:
            self.title = ax.set_title("", pad=16)  # room for the H0.. labels above the grid
        self.ax, self.fig = ax, ax.figure
        cmap = mpl.colormaps[current_cmap()].with_extremes(bad="white")  # the NaN gaps between cells
        self.image = ax.imshow(head_mosaic(attentions), cmap=cmap, vmin=0, vmax=1, interpolation="nearest")
        bar = dict(label="attention weight", ticks=[0, 0.5, 1])  # three ticks read as well on a slide
        self.own = own  # then _place puts the colour bar's Axes beside the grid, else the caller's layout does
        self.bar = (self.fig.colorbar(self.image, cax=self.fig.add_axes((0, 0, 1, 1)), **bar) if own
                    else self.fig.colorbar(self.image, ax=ax, shrink=0.8, **bar))
        self.gaps = ax.add_collection(LineCollection([], colors="white", linewidths=1.0))  # crisp at any size
        self.rect = Rectangle((0, 0), 1, 1, fill=False, edgecolor=HIGHLIGHT, linewidth=3, visible=False,
                              zorder=2.6)  # over the gap lines (2) and the frame (2.5), under the labels (3)
        ax.add_patch(self.rect)
        self.label_texts = []
        ax.set_xticks([])  # plain texts instead of ticks: much faster to draw, same look
        ax.set_yticks([])
        self.head_texts, self.layer_texts = [], []  # made in _set_shape, one per head and per layer
        self.shape = None
        self.update(attentions, highlight, tokens, title)
        self.set_labels(labels)

    def _place(self) -> Bbox:
        """Where the grid goes (figure fractions; its colour bar's box is set here too): the grid as
        large as fits at equal aspect under the title, the bar just right of it, the pair centred.
        Computed from the figure's current size, so a 16:9 slide keeps the bar next to the grid."""
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
        self._size_head_texts(width / Hn * 72, pt * 72)
        self.needed_height = top + height + bottom + 0.05  # inches: what fit_height shrinks the figure to
        left = (W - (labels + width + gap + bar + bar_text)) / 2 + labels
        y = H - top - height
        bar_height = min(max(height, 1.5), H - top - bottom)  # a one-layer grid still gets a readable bar
        if self.own:
            self.bar.ax.set_position(Bbox.from_bounds((left + width + gap) / W, (H - top - bar_height) / H, bar / W,
                                                      bar_height / H))
        return Bbox.from_bounds(left / W, y / H, width / W, height / H)

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

    def _size_head_texts(self, column_pt: float, label_pt: float) -> None:
        """H0, H1 … at the L0 labels' size, smaller where the columns are too narrow for 'H10' beside 'H11'
        ("H10" is about 2.1 times its font size wide)."""
        longest = max((len(t.get_text()) for t in self.head_texts), default=1)
        for text in self.head_texts:
            text.set_fontsize(min(label_pt, column_pt / (0.7 * longest)))

    def _size_cell_labels(self, cell_pt: float, label_pt: float) -> None:
        """The notes written into cells (set_labels) as large as fits a cell's width, up to the
        L0 labels' size: "subject 0.70" no longer has to be cut or drawn at 6 px."""
        lines = [line for text in self.label_texts for line in text.get_text().splitlines()]
        longest = max((len(line) for line in lines), default=1)  # one size for all: the longest must fit
        for text in self.label_texts:
            text.set_fontsize(float(np.clip(0.9 * cell_pt / (0.6 * max(longest, 1)), 4, label_pt)))

    def _set_tokens(self, tokens) -> None:
        """Query words left of the first map of every layer, key words under the last layer's first map.
        A new sentence changes the kept Text artists (making a Text costs more than changing one)."""
        L, _, T, _ = self.shape
        wanted = (L + 1) * T if self.token_labels and tokens is not None else 0
        while len(self.token_texts) > wanted:
            self.token_texts.pop().remove()
        while len(self.token_texts) < wanted:
            self.token_texts.append(self.ax.text(0, 0, ""))
        left = transforms.offset_copy(self.ax.transData, fig=self.fig, x=-3, y=0, units="points")
        below = transforms.offset_copy(self.ax.transData, fig=self.fig, x=0, y=-3, units="points")
        bottom = (L - 1) * (T + 1) + T - 0.5
        for i, text in enumerate(self.token_texts[:L * T]):
            layer, q = divmod(i, T)
            text.set(text=tokens[q], x=-0.5, y=layer * (T + 1) + q, ha="right", va="center", rotation=0,
                     transform=left)
        for k, text in enumerate(self.token_texts[L * T:]):
            text.set(text=tokens[k], x=k, y=bottom, ha="center", va="top", rotation=90, transform=below)

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
    view = AllHeadsView(attentions, tokens, ax, highlight, title, labels, token_labels)
    describe(view.ax, all_heads_words(attentions, tokens, highlight, title))
    return view.fig


def all_heads_words(attentions, tokens=None, highlight=None, title=None) -> str:
    """The grid's words: how many heads rest, and what the framed head does (captions.all_heads_caption)."""
    maps = np.nan_to_num(as_maps(attentions, 4))  # (L, H, T, T); a hidden first column (NaN) counts as 0
    L, H, T = maps.shape[:3]
    hidden = " (the first token's column is hidden)" if np.isnan(as_maps(attentions, 4)).any() else ""
    text = f"A grid of all {L * H} heads, {L} layers down and {H} heads across{hidden}"
    if tokens is None:  # without the words there is no resting token to name
        return captions.panels_words(title, [text + f", each a map of {T} words."])
    return captions.panels_words(title, [text + ": " + captions.all_heads_caption(maps, list(tokens), highlight)])

