"""Slide export: PNG at 16:9 and >= 200 dpi, SVG and PDF that parse, atomic writes, clear errors."""

import matplotlib

matplotlib.use("Agg")

import os
import warnings
import xml.etree.ElementTree as ET

import matplotlib as mpl
import pytest
import torch
from matplotlib.figure import Figure
from PIL import Image
from pypdf import PdfReader

from helpers.figures import export, plots, slide
from helpers.figures.slide import SlideLayoutWarning


def figure():
    return plots.plot_attention(torch.tensor([[1.0, 0], [0.4, 0.6]]), ["I", "draw"])


def test_writes_png_svg_pdf_at_16_9(tmp_path):
    fig = figure()
    size_before = tuple(fig.get_size_inches())
    paths = export.save_for_slides(fig, "map", folder=tmp_path / "figures")
    assert [p.name for p in paths] == ["map.png", "map.svg", "map.pdf"]
    with Image.open(paths[0]) as png:
        assert png.size == (2560, 1440)  # 12.8 × 7.2 in at 200 dpi: exactly 16:9
        assert round(png.info["dpi"][0]) == 200
    assert ET.parse(paths[1]).getroot().tag.endswith("svg")
    page = PdfReader(paths[2]).pages[0]
    assert abs(float(page.mediabox.width) / float(page.mediabox.height) - 16 / 9) < 1e-3
    assert tuple(fig.get_size_inches()) == size_before  # the figure is given back as it was
    assert not [p for p in os.listdir(tmp_path / "figures") if p.endswith(".tmp")]


def test_other_sizes_and_formats(tmp_path):
    with pytest.warns(SlideLayoutWarning, match="small: 'query: the word being updated' sticks out"):
        paths = export.save_for_slides(figure(), "small", folder=tmp_path, formats=("png",), size=(4, 3), dpi=100)
    with Image.open(paths[0]) as png:
        assert png.size == (400, 300)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a two-token map at its own size keeps its labels inside
        paths = export.save_for_slides(figure(), "keep", folder=tmp_path, formats=["PNG"], size=None, dpi=100)
    assert paths[0].name == "keep.png"


def test_small_text_is_enlarged_for_the_slide_and_restored(tmp_path, monkeypatch):
    fig = figure()
    ax = fig.axes[0]
    ax.set_title("tiny", fontsize=6)
    seen = []
    real_savefig = Figure.savefig

    def spy(self, *args, **kwargs):
        seen.append(ax.title.get_fontsize())
        return real_savefig(self, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", spy)
    export.save_for_slides(fig, "t", folder=tmp_path, formats=("svg",))
    assert seen == [slide.MIN_FONT_PT] and ax.title.get_fontsize() == 6


def test_slide_style_sets_large_fonts_and_a_colour_blind_safe_map():
    with slide.slide_style():
        assert mpl.rcParams["xtick.labelsize"] >= 14 and mpl.rcParams["ytick.labelsize"] >= 14
        assert mpl.rcParams["image.cmap"] in ("viridis", "cividis")
        fig = figure()
    assert fig.axes[0].xaxis.get_ticklabels()[0].get_fontsize() >= 14
    assert mpl.rcParams["xtick.labelsize"] != 16 or mpl.rcParamsDefault["xtick.labelsize"] == 16  # restored


def test_a_failing_write_leaves_no_file(tmp_path, monkeypatch):
    real_savefig = Figure.savefig

    def fail_on_pdf(self, fname, *args, **kwargs):
        if kwargs.get("format") == "pdf":
            fname.write(b"%PDF-half")  # a half-written file …
            raise OSError("disk full")
        return real_savefig(self, fname, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", fail_on_pdf)
    with pytest.raises(OSError, match="broken.pdf .*disk full"):
        export.save_for_slides(figure(), "broken", folder=tmp_path)
    assert os.listdir(tmp_path) == []  # … and no PNG or SVG either: every file is drawn before one is written


def test_a_disk_that_fills_part_way_changes_nothing(tmp_path, disk_full_at):
    """The PDF, written third, failed: the PNG and SVG were new and the PDF the last export's. Now every
    file is written to a temporary first, and none is moved into place until all are written."""
    (tmp_path / "map.pdf").write_bytes(b"last export")
    disk_full_at(3)
    with pytest.raises(OSError) as err:
        export.save_for_slides(figure(), "map", folder=tmp_path)
    assert "free some disk space" in str(err.value) and "Nothing was changed there" in str(err.value)
    assert os.listdir(tmp_path) == ["map.pdf"] and (tmp_path / "map.pdf").read_bytes() == b"last export"


def test_a_file_that_cannot_be_replaced_after_the_others_says_which_were(tmp_path):
    (tmp_path / "map.pdf").mkdir()  # a folder where the PDF goes: only the last step, the rename, finds out
    with pytest.raises(OSError) as err:
        export.save_for_slides(figure(), "map", folder=tmp_path)
    assert "2 of 3 files were replaced (map.png, map.svg)" in str(err.value)
    assert sorted(os.listdir(tmp_path)) == ["map.pdf", "map.png", "map.svg"]  # and no temporary left
    with Image.open(tmp_path / "map.png") as png:
        assert png.size == (2560, 1440)


def test_unwritable_folder_gives_a_clear_error_and_no_file(tmp_path):
    blocker = tmp_path / "not_a_folder"
    blocker.write_text("a file where the folder should be")
    with pytest.raises(ValueError) as err:  # refused before anything is made, saying what is in the way
        export.save_for_slides(figure(), "map", folder=blocker / "figures")
    assert f"{blocker} is a file, not a folder" in str(err.value) and "\n" not in str(err.value)
    assert sorted(os.listdir(tmp_path)) == ["not_a_folder"]


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root may write into read-only folders")
def test_read_only_folder_gives_a_clear_error(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        with pytest.raises(PermissionError, match="permission denied"):
            export.save_for_slides(figure(), "map", folder=folder)
        assert os.listdir(folder) == []
    finally:
        folder.chmod(0o700)


@pytest.mark.parametrize("kwargs", [dict(name="../escape"), dict(name="map.png"), dict(name=""),
                                    dict(formats=("jpg",)), dict(formats=()), dict(size="21:9"), dict(dpi=0)])
def test_bad_arguments(tmp_path, kwargs):
    args = dict(name="map", folder=tmp_path) | kwargs
    with pytest.raises(ValueError) as err:
        export.save_for_slides(figure(), **args)
    assert "\n" not in str(err.value)
    assert os.listdir(tmp_path) == []


def test_not_a_figure(tmp_path):
    with pytest.raises(ValueError, match="Figure"):
        export.save_for_slides("figure.png", "map", folder=tmp_path)


def test_saved_slides_follow_the_slide_rules_even_with_6_pt_ticks(tmp_path):
    """Inside slide_style, a figure whose plot set 6 pt ticks is still written with >= 14 pt ticks."""
    from helpers.figures.slide import check_slide

    with slide.slide_style():
        fig = Figure(figsize=(6, 4), layout="constrained")
        ax = fig.add_subplot()
        ax.plot(range(5), [3, 1, 4, 1, 5])
        ax.tick_params(labelsize=6)
    seen = []
    real_savefig = Figure.savefig

    def spy(self, *args, **kwargs):
        seen.append(min(t.get_fontsize() for t in ax.get_xticklabels() + ax.get_yticklabels()))
        return real_savefig(self, *args, **kwargs)

    Figure.savefig = spy
    try:
        export.save_for_slides(fig, "ticks", folder=tmp_path, formats=("png",))
    finally:
        Figure.savefig = real_savefig
    assert seen and min(seen) >= slide.MIN_FONT_PT
    assert check_slide(fig, slide.SIZES["16:9"]).ok


def test_a_big_figure_kept_at_its_size_gets_fonts_that_are_14_pt_on_the_slide():
    assert slide.min_figure_pt((19.2, 10.8)) == pytest.approx(14 * 19.2 / (1920 / 144), abs=0.1)
    assert slide.min_figure_pt((12.8, 7.2)) == slide.MIN_FONT_PT


def test_an_unreadable_layout_warns_in_one_line(tmp_path):
    from helpers.figures.slide import SlideLayoutWarning

    fig = figure()
    fig.axes[0].text(0, 0, "a note on top of another note", fontsize=20)
    fig.axes[0].text(0, 0, "another note under it", fontsize=20)
    with pytest.warns(SlideLayoutWarning, match="overlaps") as caught:
        export.save_for_slides(fig, "crowded", folder=tmp_path, formats=("png",))
    assert "\n" not in str(caught[0].message)
    assert (tmp_path / "crowded.png").exists()  # the file is still written: a warning, not a refusal


def test_a_caption_is_written_beside_the_figure_and_kept_in_every_file(tmp_path):
    caption = "Layer 4, head 3: 91 % of the attention rests on <bos> or a full stop."
    paths = export.save_for_slides(figure(), "head", folder=tmp_path, caption=caption)
    assert [p.name for p in paths] == ["head.png", "head.svg", "head.pdf", "head.txt"]
    assert (tmp_path / "head.txt").read_text(encoding="utf-8") == caption + "\n"
    assert PdfReader(paths[2]).metadata.subject == caption
    with Image.open(paths[0]) as png:
        assert png.info["Description"] == caption
    assert "91 % of the attention" in paths[1].read_text(encoding="utf-8")


@pytest.mark.parametrize("caption", ["", "two\nlines", 3])
def test_a_bad_caption_is_refused_before_anything_is_written(tmp_path, caption):
    with pytest.raises(ValueError, match="caption="):
        export.save_for_slides(figure(), "head", folder=tmp_path, caption=caption)
    assert os.listdir(tmp_path) == []
