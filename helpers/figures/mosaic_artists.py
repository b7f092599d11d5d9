"""The two parts of the all-heads grid (mosaic.py) that it draws its own way, because matplotlib's
usual ones were much of the time of building and saving it: the mosaic image and the colour bar.
Every attention map (plots.plot_attention, the explorer's zoom) is a NearestImage too; it draws
the same pixels as `imshow` with nearest interpolation, without its resampling. bench/bench_views.py
times the grid.
"""

from __future__ import annotations

import matplotlib as mpl
import numpy as np
from matplotlib.colors import Normalize
from matplotlib.image import AxesImage, BboxImage
from matplotlib.lines import Line2D
from matplotlib.markers import TICKLEFT, TICKRIGHT
from matplotlib.patches import Rectangle
from matplotlib.text import Annotation, Text
from matplotlib.transforms import Affine2D, Bbox, BboxTransformTo, TransformedBbox, offset_copy

from .common import tick_label_colour


class NearestImage(AxesImage):
    """An image that enlarges its small array by numpy indexing instead of matplotlib's resampler.

    The same pixels as `imshow(..., interpolation="nearest")` (tests/test_mosaic_artists.py compares
    them), but matplotlib resamples the floats at screen size and colours every screen pixel; here the
    small array is coloured once and each screen pixel takes the colour of the cell under it.
    Interpolation "auto" (imshow's default) is drawn this way where matplotlib itself would pick
    nearest-neighbour: a map enlarged more than 3 times both ways; anything else goes to matplotlib."""

    def make_image(self, renderer, magnification=1.0, unsampled=False):
        A = self.get_array()
        left, right, bottom, top = self.get_extent()
        rows, cols = A.shape[:2]
        flip = Affine2D().translate(0, -rows).scale(1, -1) if self.origin == "upper" else Affine2D()
        to_px = (flip + Affine2D().scale((right - left) / cols, (top - bottom) / rows).translate(left, bottom)
                 + self.get_transform() + Affine2D().scale(magnification))  # array (column, row) -> pixels
        clip = (self.get_clip_box() or self.axes.bbox) if self.get_clip_on() else None
        extent = TransformedBbox(Bbox([[left, bottom], [right, top]]), self.get_transform())
        shown = Bbox.intersection(extent, clip) if clip is not None else None
        m = to_px.get_matrix() if to_px.is_affine else None
        if (unsampled or A.ndim != 2 or shown is None or m is None or m[0, 1] or m[1, 0]
                or self.get_alpha() is not None or not self._nearest(m)):
            return super().make_image(renderer, magnification, unsampled)  # rotated, log axes, unclipped...
        e = shown.extents * magnification  # rounded to whole pixels exactly as matplotlib rounds them
        x0, y0 = np.floor(e[0] + 0.5), np.ceil(e[1] - 0.5 - 1e-8)
        x1, y1 = np.floor(e[2] + 0.5 + 1e-8), np.ceil(e[3] - 0.5)
        if x1 <= x0 or y1 <= y0:
            return None, 0, 0, None
        col = np.floor((np.arange(x0, x1) + 0.5 - m[0, 2]) / m[0, 0]).astype(int)  # the cell under each
        row = np.floor((np.arange(y0, y1) + 0.5 - m[1, 2]) / m[1, 1]).astype(int)  # pixel's centre
        colours = self.to_rgba(A, bytes=True)  # (rows, cols, 4) uint8; NaN gaps get the "bad" colour
        out = colours.take(np.clip(row, 0, rows - 1), axis=0).take(np.clip(col, 0, cols - 1), axis=1)
        return out, x0 / magnification, y0 / magnification, to_px + Affine2D().translate(-x0, -y0)

    def _nearest(self, m) -> bool:
        """Whether matplotlib would sample this image nearest-neighbour: asked for, or "auto" on cells
        more than 3 pixels wide and tall, in the data stage (its rule in image._resample and _make_image)."""
        interpolation = self.get_interpolation()
        return interpolation == "nearest" or (
            interpolation in ("auto", "antialiased") and abs(m[0, 0]) > 3 and abs(m[1, 1]) > 3
            and self.get_interpolation_stage() in ("auto", "antialiased", "data"))


def nearest_imshow(ax, data: np.ndarray, cmap, vmax: float = 1.0, aspect: str = "equal",
                   interpolation: str | None = "nearest") -> NearestImage:
    """What `ax.imshow(data, cmap, vmin=0, vmax=vmax, aspect=aspect, interpolation=interpolation)` makes,
    as a NearestImage (interpolation=None: the rc default, "auto")."""
    image = NearestImage(ax, cmap=cmap, norm=Normalize(0, vmax), interpolation=interpolation)
    ax.set_aspect(aspect)
    image.set_data(data)
    image.set_clip_path(ax.patch)  # as imshow: inside the axes' rectangle
    image.set_extent(image.get_extent())  # also fits the axes' limits to the image
    ax.add_image(image)
    return image


class ColourBar:
    """A vertical colour bar for `image`, drawn as artists of the image's own axes at `box`
    (figure fractions; the grid's layout sets it before every draw). It looks like
    `fig.colorbar(image, cax=..., label=label)` with `ticks` (same rc sizes and colours) but
    needs no second Axes. `artists` lists its parts."""

    def __init__(self, image, label: str, ticks=(0.0, 0.5, 1.0)):
        ax, rc = image.axes, mpl.rcParams
        fig = ax.figure
        self.box = Bbox.unit()
        on_figure = TransformedBbox(self.box, fig.transFigure)  # follows every change of `box`
        to_bar = BboxTransformTo(on_figure)  # (0, 0) .. (1, 1): the bar's corners
        lo, hi = image.norm.vmin, image.norm.vmax
        solids = BboxImage(on_figure, cmap=image.get_cmap(), norm=image.norm, interpolation="nearest",
                           origin="lower")
        solids.set_data(np.linspace(lo, hi, image.get_cmap().N)[:, None])  # one colour per level, bottom up
        outline = Rectangle((0, 0), 1, 1, transform=to_bar, fill=False, linewidth=rc["axes.linewidth"],
                            edgecolor=rc["axes.edgecolor"], zorder=2.5)
        heights = [(t - lo) / (hi - lo) for t in ticks]
        inward = rc["ytick.direction"] == "in"
        marks = Line2D([1] * len(ticks), heights, transform=to_bar, linestyle="none", color=rc["ytick.color"],
                       marker=TICKLEFT if inward else TICKRIGHT, markersize=rc["ytick.major.size"],
                       markeredgewidth=rc["ytick.major.width"])
        gap = rc["ytick.major.pad"] + (0 if inward else rc["ytick.major.size"])
        beside = offset_copy(to_bar, fig=fig, x=gap, y=0, units="points")
        self.tick_texts = [Text(1, y, f"{t:.1f}", transform=beside, ha="left", va="center_baseline",
                                fontsize=rc["ytick.labelsize"], color=tick_label_colour("y"))
                           for t, y in zip(ticks, heights)]
        widest = max(self.tick_texts, key=lambda t: len(t.get_text()))
        # the label's x: just right of the tick labels, as matplotlib puts a y label, measured when drawn
        self.label = Annotation(label, xy=(1, 0.5), xycoords=(widest, to_bar), xytext=(rc["axes.labelpad"], 0),
                                textcoords="offset points", rotation=90, ha="left", va="center",
                                fontsize=rc["axes.labelsize"], color=rc["axes.labelcolor"])
        self.artists = [solids, outline, marks, *self.tick_texts, self.label]
        for artist in self.artists:
            artist.set_clip_on(False)  # outside the axes' rectangle
            ax.add_artist(artist)
