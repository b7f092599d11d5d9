"""The all-heads grid's colour bar: matplotlib's own, in an Axes the grid places beside itself
(figures/mosaic.py AllHeadsView._place), so it follows the grid at any figure size."""

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg

from helpers.figures.mosaic import AllHeadsView
from helpers.figures.slide import slide_style


def test_the_colour_bar_sits_right_of_the_grid_inside_the_figure_with_its_ticks_and_label():
    view = AllHeadsView(np.random.default_rng(0).random((4, 6, 5, 5)), highlight=(1, 2))
    fig = view.fig
    FigureCanvasAgg(fig).draw()
    renderer = fig.canvas.get_renderer()
    grid, bar = view.ax.get_window_extent(renderer), view.bar.ax.get_window_extent(renderer)
    assert grid.x1 < bar.x0 and bar.x1 < fig.bbox.x1 and grid.y0 <= bar.y0 < bar.y1 <= grid.y1 + 1
    assert [t.get_text() for t in view.bar.ax.get_yticklabels()] == ["0.0", "0.5", "1.0"]
    label = view.bar.ax.yaxis.label
    assert label.get_text() == "attention weight" and label.get_window_extent(renderer).x1 < fig.bbox.x1


def test_the_colour_bar_takes_the_slide_style_it_was_made_in():
    """Its texts have the sizes of slide_style's tick labels (16 pt) and axis labels (18 pt)."""
    with slide_style():
        view = AllHeadsView(np.random.default_rng(0).random((2, 3, 4, 4)))
        FigureCanvasAgg(view.fig).draw()
    assert {t.get_fontsize() for t in view.bar.ax.get_yticklabels()} == {16}
    assert view.bar.ax.yaxis.label.get_fontsize() == 18
