"""What every figure of the package shares: the attention colour map, the highlight colour,
the smallest readable token label, maps as numpy arrays, a new figure when no axes is given, and
its words: a sentence computed from its data, shown as the picture's alt text.

    H.show_figure(H.plot_head(maps, tokens))   # a screen reader reads 'This head: 93 % of the attention ...'
"""

from __future__ import annotations

import base64
import html
import io
import sys

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


# --- the words a figure carries: describe(fig or ax, text) attaches them; save_for_slides stores them ---
WORDS = "helpers_words"  # the attribute a Figure keeps its words in: {the figure or one of its axes: text}


def describe(target: Figure | Axes, text: str) -> Figure:
    """Attach one sentence to a figure (replacing its words) or to one of its axes (one panel's words)."""
    fig = target.get_figure(root=True)
    if target is fig:
        setattr(fig, WORDS, {fig: text.strip()})
    else:
        getattr(fig, WORDS, None) or setattr(fig, WORDS, {})
        getattr(fig, WORDS)[target] = text.strip()
    return fig


def description(fig: Figure) -> str | None:
    """The figure's words: its own sentence, then each described panel's in the figure's order."""
    parts = getattr(fig, WORDS, {})
    texts = [parts[key] for key in [fig, *fig.axes] if key in parts]
    return " ".join(texts) or None


class ShownFigure:
    """A figure as a notebook shows it: the PNG, with its words as alt text.

    JupyterLab 4.6 ignores `alt` in an image's metadata (measured: its <img> has no alt), so the same
    picture also comes as an HTML <img alt=...>, which JupyterLab, Voilà and nbconvert prefer and draw."""

    def __init__(self, png: bytes, alt: str, mime: str = "image/png"):
        self.png, self.alt, self.mime = png, alt, mime

    def _repr_mimebundle_(self, include=None, exclude=None):
        data = base64.b64encode(self.png).decode("ascii")
        tag = f'<img src="data:{self.mime};base64,{data}" alt="{html.escape(self.alt)}">'
        return ({self.mime: data, "text/html": tag, "text/plain": self.alt}, {self.mime: {"alt": self.alt}})


def show_figure(fig: Figure, alt: str | None = None) -> ShownFigure:
    """The figure for a notebook cell to show, with its words (or `alt`) as the image's alt text."""
    if not isinstance(fig, Figure):
        raise ValueError(f"show_figure needs a matplotlib Figure, got {type(fig).__name__}; pass what a plot "
                         f"function returned.")
    alt = alt or description(fig)
    if not alt:
        raise ValueError("This figure carries no words for a screen reader; pass alt='one sentence saying what "
                         "it shows' (helpers' figure functions attach one themselves).")
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", bbox_inches="tight", facecolor=fig.get_facecolor(),
                metadata={"Description": alt, "Software": None})
    pyplot = sys.modules.get("matplotlib.pyplot")  # only if the notebook itself imported it
    if pyplot is not None and pyplot.fignum_exists(getattr(fig, "number", -1)):
        pyplot.close(fig)  # else pyplot shows the figure again at the end of the cell, without words
    return ShownFigure(buffer.getvalue(), alt)
