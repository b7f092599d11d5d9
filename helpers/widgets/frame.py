"""A figure shown as PNG bytes in an ipywidgets Image, redrawn fast by blitting what moved.

The sliders' live all-heads grid (notebooks 04, 07, 08) is one: as wide as a notebook and only as tall
as its maps need, so one head gets big maps and twelve a strip. Only the maps redraw; titles, words and
the colour bar are background, laid out once per head count and sentence.
"""

from __future__ import annotations

import io

import ipywidgets as W
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from PIL import Image
from traitlets import Unicode

from ..figures.mosaic import AllHeadsView

PNG_LEVEL = 1  # zlib's fastest level: a widget's picture is sent once and thrown away, so speed beats size
MAPS_WIDTH, MAPS_MAX_HEIGHT = 16.0, 6.5  # inches of a live grid; at 80 dpi at most 1280 × 520 px


class Frame:
    """Renders one figure to PNG bytes for an Image widget, redrawing only what moves.

    Three layers, each drawn only when it changed (matplotlib's "blitting"):
    - the background: everything but the artists below (text layout, ticks, labels), kept as pixels;
    - `middle` artists (a new sentence's maps, title or words): drawn over the background and kept;
    - `moving` artists (a highlight, the zoomed map): drawn over that on every render.
    Call `refresh()` after changing a middle artist (`refresh(artists)` when they are others now),
    `invalidate()` after changing anything else;
    `invalidate(layout=False)` keeps the last layout (a new sentence of the same shape) and
    skips the figure's layout engine, which is most of a full draw's time.
    """

    def __init__(self, fig, moving=(), dpi: int = 72, middle=()):
        fig.set_dpi(dpi)
        # matplotlib's Agg canvas: a figure from new_figure has it already, and blitting needs it
        self.fig, self.canvas = fig, fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
        self.middle, self.moving = list(middle), list(moving)
        for artist in self.middle + self.moving:
            artist.set_animated(True)
        self.engine = fig.get_layout_engine()
        self.background = self.filled = None
        self.relayout = True

    def invalidate(self, layout: bool = True) -> None:
        self.background = self.filled = None
        self.relayout = self.relayout or layout

    def refresh(self, middle=None) -> None:
        """Draw the middle layer again at the next png; `middle`: its artists from now on (a view made new words)."""
        if middle is not None:
            for artist in self.middle:
                artist.set_animated(False)  # a word the view removed, or kept: it is set again below
            self.middle = list(middle)
            for artist in self.middle:
                artist.set_animated(True)
        self.filled = None

    def png(self) -> bytes:
        if self.background is None:
            self._draw_background()
        if self.filled is None:
            self.canvas.restore_region(self.background)
            for artist in self.middle:
                self.fig.draw_artist(artist)
            self.filled = self.canvas.copy_from_bbox(self.fig.bbox)
        else:
            self.canvas.restore_region(self.filled)
        for artist in self.moving:
            self.fig.draw_artist(artist)
        return png_bytes(self.canvas)

    def _draw_background(self) -> None:
        """Everything but the middle and moving artists; the layout engine runs only when asked."""
        if self.relayout or self.engine is None:
            self.canvas.draw()
        else:
            self.fig.set_layout_engine("none")  # the axes keep the positions of the last layout
            try:
                self.canvas.draw()
            finally:
                self.fig.set_layout_engine(self.engine)
        self.relayout = False
        self.background = self.canvas.copy_from_bbox(self.fig.bbox)


def png_bytes(canvas: FigureCanvasAgg) -> bytes:
    """The canvas's pixels as it holds them now (blitted layers included, which savefig would redraw
    away), written by Pillow as an RGBA PNG."""
    buffer = io.BytesIO()
    Image.fromarray(np.asarray(canvas.buffer_rgba())).save(buffer, "PNG", compress_level=PNG_LEVEL)
    return buffer.getvalue()


class NamedImage(W.Image):
    """An Image whose `tooltip` (the words of its picture) becomes the <img> title, its accessible name.
    ipywidgets 8.1's view reads `description` to place a tooltip and Image has none: the view then
    fails ("Click to show javascript error"). An empty description fixes that."""

    description = Unicode("").tag(sync=True)


def show_png(image, frame: Frame, png: bytes | None = None, words: str | None = None) -> None:
    """Put a frame's picture, and its words (`tooltip`, the picture's accessible name), into an
    ipywidgets Image shown at its own pixel size.

    Without a fixed width the browser stretches an image to fill its flex box (a 540-px grid
    was shown 1037 px tall); width in px, height auto and no flex stretching keep the
    picture's aspect ratio and never enlarge it (max-width may still shrink it to fit).
    `png`: a picture this frame rendered earlier (a widget may keep them); else it renders now."""
    png = frame.png() if png is None else png
    width, _ = frame.canvas.get_width_height()
    image.layout.width, image.layout.height = f"{width}px", "auto"
    image.layout.max_width, image.layout.flex, image.layout.align_self = "100%", "none", "flex-start"
    # One message for picture and words: the browser's Image view decodes its picture again on every
    # change message, so words sent on their own cost a second decode of the picture.
    with image.hold_sync():
        if words is not None:
            image.tooltip = words
        image.value = png


def fit_to_notebook(view: AllHeadsView) -> None:
    """A notebook's width, and only as much height as the maps need at that width."""
    view.fig.set_size_inches(MAPS_WIDTH, MAPS_MAX_HEIGHT)
    view.fit_height(MAPS_MAX_HEIGHT)


def live_grid(maps, tokens, dpi: int) -> tuple[AllHeadsView, Frame]:
    """An all-heads grid with token labels for a widget, and the Frame that renders it."""
    view = AllHeadsView(maps, tokens, title=" ", token_labels=True)  # " ": the caption above is HTML
    fit_to_notebook(view)
    return view, Frame(view.fig, [view.image, view.gaps, *view.ax.spines.values()], dpi)  # spines go over the maps


def new_sentence_in(view: AllHeadsView, frame: Frame, maps, tokens) -> None:
    """A live grid reading another sentence: its figure and artists get the new maps and words, and it
    is fitted and laid out again (the words' size follows the maps'), as live_grid lays out a new one."""
    view.update(maps, tokens=tokens, title=" ")
    fit_to_notebook(view)
    frame.invalidate()
