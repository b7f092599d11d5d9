"""Text drawn from kept glyphs: the same pixels as matplotlib's Agg renderer, at a fraction of the cost.

Most of a widget's redraw is words (the explorer's zoom, links and grid: 80 words a new sentence),
and matplotlib 3.11's Agg draws each word from scratch: it finds the font, lays the string out with
libraqm, and renders every glyph through FreeType. All three are pure functions of what they are
given, so `GlyphCachingCanvas` keeps their results:
- the layout of a string (glyph indices and offsets), keyed by the string and everything that picks
  its font (the font properties, the rcParams findfont reads, dpi);
- each glyph's bitmap, keyed by font, size, angle and the glyph's position *within its pixel* (1/64s).
  A glyph moved by whole pixels is the same bitmap moved: FreeType rasterizes in 26.6 fixed point,
  so a shift of 64 units shifts every cell (tests/test_glyph_cache.py compares every pixel with
  the stock renderer, for sizes, angles, weights, fallback fonts, mathtext, dpi and antialiasing).
Both caches are bounded and shared by every canvas: a figure resized gets a new renderer, not new glyphs.

Where matplotlib lacks the private FreeType calls this uses (another version), the stock renderer draws.
"""

from __future__ import annotations

import math

import matplotlib as mpl
import numpy as np
from matplotlib import font_manager
from matplotlib.backends import backend_agg
from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg
from matplotlib.ft2font import FT2Font
from matplotlib.text import Text

try:
    from matplotlib.ft2font import RenderMode
except ImportError:  # matplotlib before 3.10: no per-glyph rendering to cache
    RenderMode = None

CACHEABLE = (RenderMode is not None and hasattr(Text, "get_fontfeatures")
             and all(hasattr(FT2Font, name) for name in ("_layout", "_render_glyph", "_set_transform")))
MAX_ENTRIES = 50_000  # each cache is emptied when it grows past this: a few MB at most
FONT_RC = ("font.family", "font.style", "font.variant", "font.weight", "font.stretch", "font.size", "font.serif",
           "font.sans-serif", "font.cursive", "font.fantasy", "font.monospace", "text.hinting",
           "text.hinting_factor", "text.kerning_factor")

_layouts: dict = {}  # (string, font key) -> [(FT2Font, glyph index, dx, dy)], or (w, h, d) for metrics
_glyphs: dict = {}  # (font, size, dpi, glyph, angle, mode, flags, x % 64, y % 64) -> (bitmap, left, top, font)


def _font_key(prop, dpi: float) -> tuple:
    """Everything that decides which font file a FontProperties finds, and at what size."""
    rc = tuple(tuple(v) if isinstance(v, list) else v for v in (mpl.rcParams[k] for k in FONT_RC))
    manager = font_manager.fontManager
    return (tuple(prop.get_family()), prop.get_slant(), prop.get_variant(), prop.get_weight(), prop.get_stretch(),
            prop.get_size(), prop.get_file(), dpi, rc, id(manager), len(manager.ttflist))


def _kept(cache: dict, key, compute):
    """cache[key], computed once; a full cache starts again empty."""
    value = cache.get(key)
    if value is None:
        if len(cache) >= MAX_ENTRIES:
            cache.clear()
        value = cache[key] = compute()
    return value


class GlyphCachingRenderer(RendererAgg):
    """RendererAgg whose plain (not math, not TeX) text reuses kept layouts and glyph bitmaps."""

    def get_text_width_height_descent(self, s, prop, ismath):
        if ismath or not CACHEABLE:
            return super().get_text_width_height_descent(s, prop, ismath)
        return _kept(_layouts, ("metrics", s, _font_key(prop, self.dpi)),
                     lambda: super(GlyphCachingRenderer, self).get_text_width_height_descent(s, prop, ismath))

    def draw_text(self, gc, x, y, s, prop, angle, ismath=False, mtext=None):
        if ismath or not CACHEABLE:
            return super().draw_text(gc, x, y, s, prop, angle, ismath, mtext)
        features = mtext.get_fontfeatures() if mtext is not None else None
        language = mtext.get_language() if mtext is not None else None
        flags = backend_agg.get_hinting_flag()
        key = ("layout", s, _font_key(prop, self.dpi), None if features is None else tuple(features), language, flags)

        def layout():
            items = self._prepare_font(prop)._layout(s, flags=flags, features=features, language=language)
            return [(item.ft_object, item.glyph_index, item.x, item.y) for item in items]
        self._draw_glyphs(gc, x, y, angle, prop.get_size_in_points(), _kept(_layouts, key, layout), flags)

    def _draw_glyphs(self, gc, x, y, angle, size, glyphs, flags) -> None:
        """RendererAgg._draw_text_glyphs_and_boxes for a string's glyphs (no boxes), each bitmap rendered once
        per position within a pixel. x, y: the string's origin, y downwards as matplotlib passes it."""
        cos, sin = math.cos(math.radians(angle)), math.sin(math.radians(angle))
        matrix = (0x10000 * np.array([[cos, -sin], [sin, cos]])).round().astype(int)
        antialiased = gc.get_antialiased()
        mode = RenderMode.NORMAL if antialiased else RenderMode.MONO
        for font, glyph, dx, dy in glyphs:  # dy is upwards
            gx = round(0x40 * (x + dx * cos - dy * sin))  # the glyph's origin in 1/64 px, FreeType's y upwards
            gy = round(0x40 * (self.height - y + dx * sin + dy * cos))

            def render(font=font, glyph=glyph, gx=gx, gy=gy):
                font.set_size(size, self.dpi)
                font._set_transform(matrix, [gx & 63, gy & 63])  # placed within its first pixel
                bitmap = font._render_glyph(glyph, flags, mode)
                buffer = np.array(bitmap.buffer)  # a copy: FreeType reuses its own
                if not antialiased:
                    buffer *= 0xff
                return buffer, bitmap.left, bitmap.top, font  # the font is kept so its id is not reused
            buffer, left, top, _ = _kept(_glyphs, (id(font), size, self.dpi, glyph, angle, mode, flags, gx & 63, gy & 63),
                                         render)
            # then moved by the whole pixels left out; draw_text_image's y is downwards, at the bitmap's bottom
            self._renderer.draw_text_image(buffer, left + (gx >> 6), int(self.height) - top - (gy >> 6)
                                           + buffer.shape[0], 0, gc)


class GlyphCachingCanvas(FigureCanvasAgg):
    """FigureCanvasAgg drawing with GlyphCachingRenderer (a figure's canvas: savefig and widgets use it)."""

    def get_renderer(self):
        w, h = self.get_width_height(physical=True)
        key = w, h, self.figure.dpi
        if self._lastKey != key:  # as FigureCanvasAgg: a new renderer only for a new size
            self.renderer = GlyphCachingRenderer(w, h, self.figure.dpi)
            self._lastKey = key
        return self.renderer
