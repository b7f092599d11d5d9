"""What every figure of the package shares: the attention colour map, the highlight colour,
the smallest readable token label, maps as numpy arrays, and a new figure when no axes is given."""

from __future__ import annotations

import matplotlib as mpl
import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..core.arrays import to_numpy
from .slide import SLIDE_CMAP


def as_maps(attentions, ndim: int) -> np.ndarray:
    """A tensor or array of attention weights as a float numpy array with `ndim` dims."""
    a = to_numpy(attentions)
    if a.ndim != ndim or a.shape[-1] != a.shape[-2]:
        want = "(layers, heads, T, T)" if ndim == 4 else "(T, T)"
        raise ValueError(f"Expected attention of shape {want}, got {a.shape}; rows are queries, columns keys.")
    return a


def new_figure(**kwargs) -> Figure:
    """Every figure of the package: a plain Figure on matplotlib's Agg canvas, not pyplot (no global
    state, nothing leaks between cells); savefig writes its PNG files through Pillow."""
    fig = Figure(**kwargs)
    FigureCanvasAgg(fig)
    return fig


def new_axes(ax: Axes | None, size: tuple[float, float]) -> tuple[Figure, Axes]:
    """The given axes and their figure, or a new constrained figure of `size` inches with one axes."""
    if ax is not None:
        return ax.figure, ax
    fig = new_figure(figsize=size, layout="constrained")
    return fig, fig.add_subplot()


def tick_label_colour(axis: str = "x"):
    """The colour the style gives tick labels of `axis` ('inherit' means the tick colour): for texts
    drawn where tick labels would be."""
    colour = mpl.rcParams[f"{axis}tick.labelcolor"]
    return mpl.rcParams[f"{axis}tick.color"] if colour == "inherit" else colour


CMAP = SLIDE_CMAP  # the project's attention colour map; NaN gaps are drawn white


HIGHLIGHT = "#D55E00"  # Okabe–Ito vermillion: stands out on viridis


MIN_TOKEN_PT = 7.0  # token labels of a grid smaller than this are hidden: 4-5 px words are unreadable
