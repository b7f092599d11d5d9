"""The canvas every figure of the package draws on (common.new_figure, and a widget's Frame).

It is matplotlib's Agg canvas with two of its slow steps replaced by equivalents:
- words are drawn from kept glyphs (glyph_cache.py: the stock renderer's pixels);
- savefig's PNG is written by png.py (the same pixels and metadata chunks as PIL's file; for the
  144-head grid at the default level in about half the time, a tenth fewer bytes: png.py has the figures).
"""

from __future__ import annotations

import matplotlib as mpl
from matplotlib import cbook
from matplotlib.backends.backend_agg import FigureCanvasAgg

from .glyph_cache import GlyphCachingCanvas
from .png import png_file


class Canvas(GlyphCachingCanvas):
    """GlyphCachingCanvas whose PNG files come from png.png_file."""

    def print_png(self, filename_or_obj, *, metadata=None, pil_kwargs=None, **applied):
        """As FigureCanvasAgg.print_png (matplotlib's default "Software" entry, then `metadata`; the
        figure's dpi). PIL options other than compress_level 0-9 go to PIL, which knows them.
        `applied`: dpi, facecolor … that print_figure passes a canvas not of matplotlib's own and has
        already set on the figure while it saves."""
        level = (pil_kwargs or {}).get("compress_level", 6)
        if set(pil_kwargs or {}) - {"compress_level"} or not (isinstance(level, int) and 0 <= level <= 9):
            return super().print_png(filename_or_obj, metadata=metadata, pil_kwargs=pil_kwargs)
        FigureCanvasAgg.draw(self)
        text = {"Software": f"Matplotlib version{mpl.__version__}, https://matplotlib.org/", **(metadata or {})}
        data = png_file(self.buffer_rgba(), level, self.figure.dpi, text)
        with cbook.open_file_cm(filename_or_obj, "wb") as fh:
            fh.write(data)
