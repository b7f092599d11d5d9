"""Text contrast ≥ 4.5 : 1 (WCAG AA), measured by code on the colours the project puts text in."""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib as mpl
import numpy as np
import pytest
from matplotlib.text import Text

import helpers as H
from helpers.figures.kv_plots import LABEL_COLOURS
from helpers.figures.slide import CMAPS, SLIDE_RC, contrast_ratio, current_cmap, text_colour_on
from helpers.widgets.controls import WARNING

ROOT = Path(__file__).resolve().parent.parent
AA = 4.5


def test_the_ratio_matches_wcag():
    assert contrast_ratio("black", "white") == pytest.approx(21.0)
    assert contrast_ratio("#767676", "white") == pytest.approx(4.54, abs=0.01)  # WCAG's lightest AA grey


def test_slide_text_colours_on_the_slide_background():
    for key in ("text.color", "axes.labelcolor", "xtick.color", "ytick.color"):
        assert contrast_ratio(SLIDE_RC[key], SLIDE_RC["axes.facecolor"]) >= AA, key


@pytest.mark.parametrize("name", list(CMAPS))
def test_numbers_written_in_map_cells_read_on_every_colour(name):
    """plot_attention writes weights in the cells: black or white, whichever contrasts more, on any cell."""
    cmap = mpl.colormaps[CMAPS[name]]
    worst = min(contrast_ratio(text_colour_on(cmap(v)), cmap(v)) for v in np.linspace(0, 1, 256))
    print(f"{name}: worst cell-text contrast {worst:.2f} : 1")
    assert worst >= AA


def test_a_drawn_map_uses_those_colours():
    with H.slide_style(cmap="grey"):
        assert current_cmap() == "gray"
        fig = H.plot_attention(np.array([[1.0, 0.0], [0.45, 0.55]]), ["a", "b"])
    image = fig.axes[0].images[0]
    for text in (t for t in fig.axes[0].texts if isinstance(t, Text)):
        x, y = (round(v) for v in text.get_position())
        cell = image.cmap(image.norm(image.get_array()[y, x]))
        assert contrast_ratio(text.get_color(), cell) >= AA, text.get_text()


def test_an_unknown_colour_map_is_refused():
    with pytest.raises(ValueError, match="choose one of viridis, cividis, grey"):
        with H.slide_style(cmap="jet"):
            pass


def test_widget_text_colours_on_white():
    """Every colour a widget writes text in (style='color:…' in helpers/widgets) and the grouped-head labels."""
    colours = set(re.findall(r"color:\s*(#[0-9A-Fa-f]{6})", "".join(
        p.read_text() for p in (ROOT / "helpers" / "widgets").glob("*.py")))) | {WARNING, *LABEL_COLOURS}
    ratios = {c: round(contrast_ratio(c, "white"), 2) for c in colours}
    print("widget text colours on white:", ratios)
    assert all(r >= AA for r in ratios.values()), ratios
