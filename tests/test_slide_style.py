"""One slide style for every export: legible under any matplotlib style, the same pixels under any rc."""

import matplotlib

matplotlib.use("Agg")

import hashlib

import matplotlib as mpl
import matplotlib.style
import numpy as np
import pytest
import torch
from matplotlib.backends.backend_agg import RendererAgg
from matplotlib.figure import Figure
from PIL import Image
from pypdf import PdfReader

from helpers.figures import deck, export, plots, slide
from helpers.figures.slide import check_slide

ADVERSE_RC = {"savefig.bbox": "tight", "savefig.pad_inches": 1.0, "savefig.transparent": True,
              "savefig.dpi": 37, "figure.dpi": 41, "savefig.facecolor": "red"}


def titled(title="Attention heads", **kwargs) -> Figure:
    fig = Figure(figsize=slide.SIZES["16:9"], layout="constrained", **kwargs)
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, 1])
    ax.set_title(title, fontsize=40)
    ax.tick_params(labelsize=16)
    return fig


def luminance(png_path) -> np.ndarray:
    with Image.open(png_path) as png:
        return np.asarray(png.convert("L"), dtype=float)


@pytest.mark.parametrize("how", ["context", "use"])
def test_a_dark_style_exports_legible_text(tmp_path, how):
    with mpl.rc_context():  # style.use changes the global rc: put it back after the test
        if how == "use":
            mpl.style.use("dark_background")
            fig = titled()
        else:
            with mpl.style.context("dark_background"):
                fig = titled()
        png = export.save_for_slides(fig, "dark", folder=tmp_path, formats=("png",), dpi=100)[0]
    pixels = luminance(png)
    with slide.slide_sized(fig, slide.SIZES["16:9"]):  # where the export drew the title, in its 100-dpi pixels
        box = fig.axes[0].title.get_window_extent(RendererAgg(fig.bbox.width, fig.bbox.height, fig.dpi)).transformed(
            fig.dpi_scale_trans.inverted())
    H = pixels.shape[0]
    title = pixels[int(H - box.y1 * 100): int(H - box.y0 * 100), int(box.x0 * 100): int(box.x1 * 100)]
    assert title.size > 5000
    assert (title > 200).sum() > 500, "no light pixels where the title is: its text is not drawn"
    assert (title < 60).sum() > 500, "no dark pixels around the title: white text was saved on white"
    assert pixels[2, 2] < 60  # the figure's own black background was kept
    assert check_slide(fig).ok, check_slide(fig).problems


def test_a_transparent_figure_is_saved_on_the_white_slide(tmp_path):
    fig = titled()
    fig.set_facecolor("none")
    assert slide.export_facecolor(fig) == (1.0, 1.0, 1.0, 1.0)
    png = export.save_for_slides(fig, "clear", folder=tmp_path, formats=("png",), dpi=100)[0]
    with Image.open(png) as image:
        assert image.convert("RGBA").getpixel((2, 2)) == (255, 255, 255, 255)
    assert check_slide(fig).ok


def test_white_text_on_a_white_figure_is_reported():
    fig = titled("ghost title")
    fig.axes[0].title.set_color("white")
    problems = check_slide(fig).problems
    assert "title 'ghost title' is nearly invisible (contrast 1.0:1 against its background, needs >= 3:1)" in problems
    fig.axes[0].set_xlabel("pale label", color="#f4f4f4")
    assert any(p.startswith("'pale label' is nearly invisible") for p in check_slide(fig).problems)


def test_contrast_is_measured_against_what_the_text_is_drawn_on():
    fig = titled()
    ax = fig.axes[0]
    ax.set_facecolor("black")
    ax.text(0.5, 0.5, "white on the black axes", color="white", fontsize=20, transform=ax.transAxes, ha="center")
    ax.text(0.2, 0.8, "boxed", color="black", fontsize=20, transform=ax.transAxes,
            bbox={"facecolor": "yellow", "edgecolor": "none"})
    assert check_slide(fig).ok, check_slide(fig).problems
    ax.text(0.5, 0.2, "black on the black axes", color="black", fontsize=20, transform=ax.transAxes, ha="center")
    assert [p for p in check_slide(fig).problems if "nearly invisible" in p] == [
        "'black on the black axes' is nearly invisible (contrast 1.0:1 against its background, needs >= 3:1)"]


def test_the_notebook_figures_pass_the_contrast_rule():
    with slide.slide_style():
        fig = plots.plot_attention(torch.tensor([[1.0, 0], [0.4, 0.6]]), ["I", "draw"])
    assert check_slide(fig).ok, check_slide(fig).problems


def test_rc_settings_do_not_change_the_exported_png(tmp_path):
    def figure():
        with slide.slide_style():
            return plots.plot_attention(torch.tensor([[1.0, 0], [0.4, 0.6]]), ["I", "draw"])

    plain = export.save_for_slides(figure(), "map", folder=tmp_path / "plain")
    with mpl.rc_context(ADVERSE_RC):
        built_inside = export.save_for_slides(figure(), "map", folder=tmp_path / "built", formats=("png",))[0]
    fig = figure()
    with mpl.rc_context(ADVERSE_RC):
        pinned = export.save_for_slides(fig, "map", folder=tmp_path / "pinned")
    with Image.open(built_inside) as png:
        assert png.size == (2560, 1440)  # a figure made under figure.dpi=41 is still saved at dpi=200
    with Image.open(pinned[0]) as png:
        assert png.size == (2560, 1440)  # 12.8 × 7.2 in at 200 dpi, not cropped by bbox="tight"
        assert png.convert("RGBA").getpixel((2, 2)) == (255, 255, 255, 255)  # opaque, not transparent
    for a, b in zip(plain, pinned):
        assert hashlib.sha256(a.read_bytes()).digest() == hashlib.sha256(b.read_bytes()).digest(), b.name


def test_rc_settings_do_not_change_the_deck_pdf_pages(tmp_path):
    with mpl.rc_context(ADVERSE_RC):
        deck._write_pdf([("a", titled())], tmp_path / "deck.pdf")
    page = PdfReader(tmp_path / "deck.pdf").pages[0]
    assert (float(page.mediabox.width), float(page.mediabox.height)) == pytest.approx(
        (slide.SLIDE_INCHES[0] * 72, slide.SLIDE_INCHES[1] * 72))
