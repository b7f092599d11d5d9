"""The grid's own image and colour bar (figures/mosaic_artists.py): they must look exactly like
matplotlib's imshow and colorbar, which they replace because those were slow."""

import matplotlib as mpl
import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from helpers.figures.mosaic import AllHeadsView, head_mosaic
from helpers.figures.mosaic_artists import NearestImage, nearest_imshow
from helpers.figures.slide import slide_style


def _pixels(fig) -> np.ndarray:
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return np.asarray(canvas.buffer_rgba()).copy()


def _one_image(ours: bool, data, size, dpi, limits=None) -> np.ndarray:
    fig = Figure(figsize=size, dpi=dpi)
    ax = fig.add_axes((0.1, 0.07, 0.8, 0.85))
    cmap = mpl.colormaps["viridis"].with_extremes(bad="white")
    if ours:
        assert isinstance(nearest_imshow(ax, data, cmap), NearestImage)
    else:
        ax.imshow(data, cmap=cmap, vmin=0, vmax=1, interpolation="nearest")
    if limits:
        ax.set_xlim(*limits[0])
        ax.set_ylim(*limits[1])
    return _pixels(fig)


@pytest.mark.parametrize("shape, size, dpi, limits", [
    ((12, 12, 17, 17), (12, 12), 100, None),  # bench_views.py's grid
    ((12, 12, 4, 4), (7.5, 6.8), 72, None),  # the explorer's
    ((2, 5, 9, 9), (13.33, 7.5), 144, None),  # a wide strip on a slide
    ((3, 4, 5, 5), (5, 4), 100, ((3.2, 17.7), (12.4, 1.1))),  # zoomed in: the image is cut by the axes
])
def test_the_grid_image_has_exactly_the_pixels_of_imshow_nearest(shape, size, dpi, limits):
    mosaic = head_mosaic(np.random.default_rng(1).random(shape))  # NaN gaps between the cells
    np.testing.assert_array_equal(_one_image(True, mosaic, size, dpi, limits),
                                  _one_image(False, mosaic, size, dpi, limits))


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


def _attention_pixels(ours: bool, T: int, size, dpi, rc=None) -> np.ndarray:
    """plot_attention's figure as drawn, with its NearestImage or as plain imshow would draw it."""
    from matplotlib.image import AxesImage

    from helpers.figures.plots import plot_attention
    weights = np.random.default_rng(T).dirichlet(np.ones(T), size=T)
    with mpl.rc_context(rc or {}):
        fig = plot_attention(weights, [f"w{i}" for i in range(T)], annotate=False, title="t")
        fig.set_size_inches(*size)
        fig.set_dpi(dpi)
        image = fig.axes[0].images[0]
        assert isinstance(image, NearestImage) and image.get_interpolation() == mpl.rcParams["image.interpolation"]
        if not ours:
            image.__class__ = AxesImage  # matplotlib's own make_image on the same artist
        return _pixels(fig)


@pytest.mark.parametrize("T, size, dpi, rc", [
    (4, (5.6, 4.6), 72, None),  # the explorer's zoom, "I like to draw"
    (15, (5.6, 4.6), 72, None),  # a long sentence: cells of about 15 px
    (15, (13.33, 7.5), 144, None),  # on a slide
    (120, (4, 3), 72, None),  # cells under 3 px: matplotlib's antialiasing, not nearest
    (15, (5.6, 4.6), 72, {"image.interpolation": "bilinear"}),  # another rc: matplotlib's resampler
    (15, (5.6, 4.6), 72, {"image.interpolation_stage": "rgba"}),
])
def test_every_attention_map_has_exactly_the_pixels_matplotlib_draws(T, size, dpi, rc):
    np.testing.assert_array_equal(_attention_pixels(True, T, size, dpi, rc), _attention_pixels(False, T, size, dpi, rc))
