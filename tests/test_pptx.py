"""The PowerPoint deck: one slide per figure with title, picture, speaker notes and alt text; reopened with python-pptx."""

import builtins
import shutil
import subprocess

import pypdf
import pytest
from PIL import Image

from helpers.core.catalog import shipped_models
from helpers.figures import deck

pptx = pytest.importorskip("pptx")

from test_deck import SMALL  # noqa: E402  (the small fake slides the PDF tests use)

CAPTIONED = [deck.Slide(s.name, s.make, f"Title of {s.name}", lambda m, n=s.name: f"Caption of {n}, from the data.")
             for s in SMALL]


def reopen(path):
    return pptx.Presentation(str(path))


def test_one_16_9_slide_per_figure_with_title_picture_notes_and_alt_text(tmp_path):
    path, pngs = deck.export_deck(tmp_path / "deck", slides=CAPTIONED, format="pptx", animations=False)
    assert path.name == "deck.pptx"
    prs = reopen(path)
    assert prs.slide_width / prs.slide_height == pytest.approx(16 / 9, rel=1e-3)
    assert len(prs.slides) == len(CAPTIONED)
    for slide, s in zip(prs.slides, CAPTIONED):
        assert slide.shapes.title.text == s.title
        pictures = [sh for sh in slide.shapes if sh.shape_type == 13]  # MSO_SHAPE_TYPE.PICTURE
        assert len(pictures) == 1
        picture = pictures[0]
        assert picture._element.nvPicPr.cNvPr.get("descr") == f"Caption of {s.name}, from the data."
        assert slide.notes_slide.notes_text_frame.text == f"Caption of {s.name}, from the data."
        # inside the slide, below the title, at full scale (a 13.33-in wide picture is not shrunk)
        assert picture.left >= 0 and picture.top >= slide.shapes.title.top + slide.shapes.title.height - 1
        assert picture.left + picture.width <= prs.slide_width + 1
        assert picture.top + picture.height <= prs.slide_height + 1
        assert picture.width == pytest.approx(prs.slide_width, rel=0.01)
    # beside the deck: the 16:9 PNGs and each caption as .txt
    assert all(Image.open(p).size == (1920, 1080) for p in pngs)
    assert (tmp_path / "deck" / "01_line.txt").read_text(encoding="utf-8") == "Caption of 01_line, from the data.\n"
    assert not [p for p in (tmp_path / "deck").iterdir() if p.name.startswith(".")]


def test_the_same_deck_gives_the_same_pptx_bytes(tmp_path):
    a, _ = deck.export_deck(tmp_path / "a", slides=CAPTIONED[:1], format="pptx", animations=False)
    b, _ = deck.export_deck(tmp_path / "b", slides=CAPTIONED[:1], format="pptx", animations=False)
    assert a.read_bytes() == b.read_bytes()


def test_unknown_format_is_refused_before_any_work(tmp_path):
    with pytest.raises(ValueError, match="format='ppt'"):
        deck.export_deck(tmp_path / "deck", slides=CAPTIONED, format="ppt")
    assert not (tmp_path / "deck").exists()


def test_without_python_pptx_the_error_says_how_to_install_it(tmp_path, monkeypatch):
    real_import = builtins.__import__

    def no_pptx(name, *args, **kwargs):
        if name == "pptx" or name.startswith("pptx."):
            raise ImportError("No module named 'pptx'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pptx)
    with pytest.raises(ImportError, match=r"pip install -e \"\.\[slides\]\"") as err:
        deck.export_deck(tmp_path / "deck", slides=CAPTIONED, format="pptx")
    assert "\n" not in str(err.value)
    assert not (tmp_path / "deck").exists()


@pytest.mark.skipif("classroom" not in shipped_models(), reason="the classroom model is not in data/ yet")
@pytest.mark.slow  # builds both animations
def test_the_animations_play_inside_the_pptx_after_the_slide_they_animate(tmp_path):
    chosen = [s for s in deck.SLIDES if s.name in ("01_where_draw_looks", "02_shrunk_query")]
    path, _ = deck.export_deck(tmp_path / "deck", slides=chosen, format="pptx", models=deck.Models(n_stories=8))
    prs = reopen(path)
    titles = [s.shapes.title.text for s in prs.slides]
    assert titles[0] == "Where 'draw' looks" and titles[1].startswith("One head, step by step")
    gifs = [sh for s in prs.slides for sh in s.shapes if sh.shape_type == 13 and sh.image.content_type == "image/gif"]
    assert len(gifs) == 2
    for gif in gifs:
        from io import BytesIO
        with Image.open(BytesIO(gif.image.blob)) as image:
            assert image.is_animated and image.n_frames >= 5
    assert (tmp_path / "deck" / "one_head_steps.gif").exists()
    assert len(list((tmp_path / "deck" / "twelve_heads_recombining_frames").glob("frame_*.png"))) == 13


@pytest.mark.skipif(shutil.which("soffice") is None, reason="LibreOffice is not installed (optional: apt-get install "
                                                             "--no-install-recommends libreoffice-impress)")
def test_libreoffice_opens_the_pptx_and_renders_every_slide(tmp_path):
    path, _ = deck.export_deck(tmp_path / "deck", slides=CAPTIONED, format="pptx", animations=False)
    profile = (tmp_path / "lo-profile").as_uri()  # a private profile: no clash with a running LibreOffice
    subprocess.run(["soffice", f"-env:UserInstallation={profile}", "--headless", "--convert-to", "pdf",
                    "--outdir", str(tmp_path), str(path)], check=True, capture_output=True, timeout=180)
    pages = pypdf.PdfReader(tmp_path / "deck.pdf").pages
    assert len(pages) == len(CAPTIONED)
    assert float(pages[0].mediabox.width) / float(pages[0].mediabox.height) == pytest.approx(16 / 9, rel=1e-2)
    assert "Title of 01_line" in pages[0].extract_text()
