"""Words for every figure: a sentence computed from its data, carried by the Figure and shown as alt text.

A figure function attaches its sentence with `describe(fig, text)` (or `describe(ax, text)` for one
panel of several). `show_figure(fig)` shows the picture in a notebook with those words as the image's
alt text; `save_for_slides` stores them in the PNG, SVG and PDF it writes::

    H.show_figure(H.plot_head(maps, tokens))   # a screen reader reads 'This head: 93 % of the attention ...'
"""

from __future__ import annotations

import base64
import html
import io
import sys

from matplotlib.axes import Axes
from matplotlib.figure import Figure

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
