"""The all-heads grid's own colour bar (figures/mosaic.py ColourBar): drawn as artists of the grid's
axes, it must look like matplotlib's colorbar in the same place and style."""

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from helpers.figures.mosaic import AllHeadsView
from helpers.figures.slide import slide_style


def _pixels(fig) -> np.ndarray:
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return np.asarray(canvas.buffer_rgba()).copy()


def test_the_colour_bar_sits_right_of_the_grid_inside_the_figure_with_its_ticks_and_label():
    view = AllHeadsView(np.random.default_rng(0).random((4, 6, 5, 5)), highlight=(1, 2))
    fig = view.fig
    assert fig.axes == [view.ax]  # no second Axes
    pixels = _pixels(fig)
    renderer = fig.canvas.get_renderer()
    grid, bar = view.ax.get_window_extent(renderer), view.bar.box.transformed(fig.transFigure)
    assert grid.x1 < bar.x0 and bar.x1 < fig.bbox.x1 and grid.y0 <= bar.y0 < bar.y1 <= grid.y1 + 1
    ticks = {t.get_text(): t.get_window_extent(renderer) for t in view.bar.tick_texts}
    assert list(ticks) == ["0.0", "0.5", "1.0"]
    assert [b.y0 + b.height / 2 for b in ticks.values()] == pytest.approx([bar.y0, bar.y0 + bar.height / 2, bar.y1],
                                                                          abs=2)
    label = view.bar.label.get_window_extent(renderer)
    assert view.bar.label.get_text() == "attention weight" and view.bar.label.get_rotation() == 90
    assert max(b.x1 for b in ticks.values()) < label.x0 and label.x1 < fig.bbox.x1
    cmap, height, x = view.image.get_cmap(), pixels.shape[0], int((bar.x0 + bar.x1) / 2)
    for y, value in ((bar.y0 + 3, 0.0), ((bar.y0 + bar.y1) / 2, 0.5), (bar.y1 - 3, 1.0)):  # the map's colours
        np.testing.assert_allclose(pixels[int(height - y), x] / 255, cmap(value), atol=0.03)  # rows from the top


def test_the_colour_bar_takes_the_slide_style_it_was_made_in():
    """Its texts have the sizes of slide_style's tick labels (16 pt) and axis labels (18 pt), as a
    matplotlib colour bar made inside the same `with` block."""
    with slide_style():
        view = AllHeadsView(np.random.default_rng(0).random((2, 3, 4, 4)))
    assert {t.get_fontsize() for t in view.bar.tick_texts} == {16} and view.bar.label.get_fontsize() == 18
