"""The all-heads grid the slider widgets show live (notebooks 04, 07, 08), and the Frame that renders it.

The figure is as wide as a notebook and only as tall as its maps need, so one head gets big
maps and twelve a strip. Only the maps redraw; titles, words and the colour bar are background,
laid out once per head count and sentence.
"""

from __future__ import annotations

from ..figures.mosaic import AllHeadsView
from .frame import Frame

MAPS_WIDTH, MAPS_MAX_HEIGHT = 16.0, 6.5  # inches of a live grid; at 80 dpi at most 1280 × 520 px


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
