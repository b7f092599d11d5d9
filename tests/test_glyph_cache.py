"""The glyph cache draws exactly the pixels matplotlib's own Agg renderer draws.

Each case draws one figure twice, once on FigureCanvasAgg and once on GlyphCachingCanvas, and
compares every pixel; the caching canvas draws it twice more (kept glyphs, then kept glyphs at
positions moved by a fraction of a pixel) and must still match the stock drawing of the same figure.
"""

from __future__ import annotations

import matplotlib as mpl
import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from helpers.figures import glyph_cache
from helpers.figures.glyph_cache import GlyphCachingCanvas

WORDS = ["<bos>", "the", "cat", "near", "dogs", "is", "tired", ".", "I", "like", "to", "draw",
         "naïve", "√T → softmax", "Straße", "日本", "", "two\nlines", "  spaced  ", "W_O · x", "ffi fl"]


def words_figure(dpi: float, size: float, rotation: float, shift: float = 0.0, **text) -> Figure:
    fig = Figure(figsize=(6.3, 4.1), dpi=dpi)
    for i, word in enumerate(WORDS):
        fig.text(0.013 + 0.047 * i + shift, 0.05 + (0.041 * i * 1.37) % 0.9 + shift, word, fontsize=size,
                 rotation=rotation, **text)
    fig.text(0.5, 0.5, r"$\sqrt{d_k}\,\alpha_{ij}$ and $x^2$", fontsize=size)  # mathtext: the stock path
    return fig


def pixels(fig: Figure, canvas_class) -> np.ndarray:
    canvas = canvas_class(fig)
    canvas.draw()
    return np.asarray(canvas.buffer_rgba()).copy()


def assert_same_as_stock(make) -> None:
    for shift in (0.0, 0.00137, 0.0311):  # the second and third draw reuse glyphs at other sub-pixel places
        stock, cached = pixels(make(shift), FigureCanvasAgg), pixels(make(shift), GlyphCachingCanvas)
        assert stock.shape == cached.shape
        assert np.array_equal(stock, cached), f"{int((stock != cached).any(-1).sum())} pixels differ (shift {shift})"


pytestmark = [pytest.mark.skipif(not glyph_cache.CACHEABLE, reason="this matplotlib has no per-glyph rendering"),
              pytest.mark.filterwarnings("ignore:Glyph .* missing from font")]  # 日本: the missing-glyph box


@pytest.mark.parametrize("dpi", [72, 80, 100, 144, 217])
@pytest.mark.parametrize("rotation", [0, 90, 33.3, -71])
def test_plain_words_are_the_stock_pixels(dpi, rotation):
    assert_same_as_stock(lambda shift: words_figure(dpi, 10.5, rotation, shift))


@pytest.mark.parametrize("text", [
    {"fontweight": "bold"}, {"fontstyle": "italic", "color": "#D55E00"}, {"family": "serif", "alpha": 0.4},
    {"family": "monospace", "fontsize": 23.0}, {"fontsize": 5.2, "ha": "right", "va": "center"},
    {"antialiased": False}, {"bbox": {"facecolor": "#ffe08a", "linewidth": 0}},
])
def test_styled_words_are_the_stock_pixels(text):
    size = text.pop("fontsize", 12.0)
    assert_same_as_stock(lambda shift: words_figure(100, size, 0, shift, **text))


def test_a_style_change_between_draws_finds_the_new_font():
    """The layout cache is keyed by what findfont reads: the same Text under another rcParams font list
    (as slide_style() sets one) is laid out in the font that list names."""
    fig = words_figure(100, 12, 0)
    first = pixels(fig, GlyphCachingCanvas)
    with mpl.rc_context({"font.sans-serif": ["DejaVu Serif"]}):
        assert np.array_equal(pixels(fig, FigureCanvasAgg), pixels(fig, GlyphCachingCanvas))
        assert not np.array_equal(first, pixels(fig, GlyphCachingCanvas))
    assert np.array_equal(first, pixels(fig, GlyphCachingCanvas))


def test_the_widgets_figures_are_the_stock_pixels():
    """The explorer's three pictures after sentences of three lengths, as a student would type them."""
    import helpers as H
    explorer = H.Explorer(H.load_model("classroom"), "I like to draw")
    for sentence in ["the cat near the dogs is tired .", "list : red mat old fox . again : red mat old fox .", "I like"]:
        explorer.set_sentence(sentence)
        explorer.word.value = 1
        for frame in explorer.frames:
            frame.png()
            cached = np.asarray(frame.canvas.buffer_rgba()).copy()
            stock = FigureCanvasAgg(frame.fig)  # the same figure, laid out as the frame left it
            frame.fig.set_layout_engine("none")
            stock.draw()
            for artist in frame.middle + frame.moving:
                frame.fig.draw_artist(artist)
            frame.fig.set_layout_engine(frame.engine)
            frame.fig.canvas = frame.canvas
            assert np.array_equal(cached, np.asarray(stock.buffer_rgba())), sentence


def test_the_caches_stay_bounded(monkeypatch):
    monkeypatch.setattr(glyph_cache, "MAX_ENTRIES", 40)
    monkeypatch.setattr(glyph_cache, "_glyphs", {})
    monkeypatch.setattr(glyph_cache, "_layouts", {})
    assert_same_as_stock(lambda shift: words_figure(100, 12, 0, shift))
    assert len(glyph_cache._glyphs) <= 40 and len(glyph_cache._layouts) <= 40
