"""The lecture deck: one 16:9 PDF page per slide, 1920 × 1080 PNGs, legible text, atomic files."""

import numpy as np
import pypdf
import pytest
from matplotlib.figure import Figure
from PIL import Image

from helpers.core.catalog import shipped_models
from helpers.figures import deck
from helpers.figures.mosaic import plot_all_heads
from helpers.figures.deck import PICTURE_INCHES
from helpers.figures.slide import MIN_FONT_PT, slide_sized
from helpers.figures.slide import check_slide


def tiny_figure(_models) -> Figure:
    fig = Figure(figsize=(4, 3), layout="constrained")
    ax = fig.add_subplot()
    ax.plot([0, 1, 2], [1, 0, 2])
    ax.tick_params(labelsize=6)  # too small for a projector: the deck must enlarge it
    return fig


def mosaic_figure(_models) -> Figure:
    maps = np.tril(np.ones((12, 12, 5, 5)))
    return plot_all_heads(maps / maps.sum(-1, keepdims=True), tokens=list("abcde"))


SMALL = [deck.Slide("01_line", tiny_figure), deck.Slide("05_grid", mosaic_figure), deck.Slide("06_line", tiny_figure)]


def test_deck_has_one_16_9_page_per_slide_and_a_png_each(tmp_path):
    pdf, pngs = deck.export_deck(tmp_path / "deck", slides=SMALL)
    pages = pypdf.PdfReader(pdf).pages
    assert len(pages) == len(SMALL)
    for page in pages:
        assert float(page.mediabox.width) / float(page.mediabox.height) == pytest.approx(16 / 9, rel=1e-3)
    assert [p.name for p in pngs] == ["01_line.png", "05_grid.png", "06_line.png"]
    assert all(Image.open(p).size == (1920, 1080) for p in pngs)
    captions = sorted(p.with_suffix(".txt").name for p in pngs)  # each slide's caption (here: its name)
    assert sorted(x.name for x in (tmp_path / "deck").iterdir()) == sorted([pdf.name] + [p.name for p in pngs] + captions)
    assert pypdf.PdfReader(pdf).metadata.subject.startswith("3 slides")


def test_a_failing_slide_leaves_no_partial_deck(tmp_path):
    def broken(_models):
        raise ValueError("this slide cannot be drawn")

    with pytest.raises(ValueError, match="cannot be drawn"):
        deck.export_deck(tmp_path, slides=SMALL[:1] + [deck.Slide("02_broken", broken)])
    assert list(tmp_path.iterdir()) == []


def test_an_empty_deck_is_refused(tmp_path):
    with pytest.raises(ValueError, match="No slides"):
        deck.export_deck(tmp_path, slides=[])


def test_registry_covers_every_notebook_with_unique_names():
    names = [s.name for s in deck.SLIDES]
    assert len(set(names)) == len(names)
    assert {n[:2] for n in names} >= {"01", "02", "03", "04", "05", "06"}


needs_classroom = pytest.mark.skipif("classroom" not in shipped_models(),
                                     reason="the classroom model is not in data/ yet")


@pytest.fixture(scope="module")
def deck_figures() -> dict:
    """Every registered slide's figure, built once for the whole module (8 stories keep it quick)."""
    return dict(deck.build_figures(models=deck.Models(n_stories=8)))


@needs_classroom
@pytest.mark.parametrize("slide", deck.SLIDES, ids=[s.name for s in deck.SLIDES])
def test_every_deck_slide_passes_the_layout_check_at_1920x1080(deck_figures, slide):
    """Texts inside, no overlaps, >= 14 pt on the slide, content >= 60 % wide:
    as a full 16:9 page (PDF, PNG) and in the picture area under a pptx slide's title."""
    fig = deck_figures[slide.name]
    for size in (deck.SIZE, PICTURE_INCHES):
        report = check_slide(fig, size)
        print(slide.name, size, report.summary())
        assert report.ok, f"{slide.name} at {size}: {report.problems}"
        assert report.n_texts > 0 and report.min_pt >= MIN_FONT_PT


@needs_classroom
def test_every_slide_has_a_one_sentence_caption_from_the_data():
    captions = deck.build_captions(models=deck.Models(n_stories=8))
    assert list(captions) == [s.name for s in deck.SLIDES]
    for name, text in captions.items():
        assert text.endswith(".") and "\n" not in text and len(text) < 260, (name, text)
        assert any(ch.isdigit() for ch in text), (name, text)  # it states a measured number


@needs_classroom
def test_tick_labels_reach_the_slide_minimum(deck_figures):
    for name, fig in deck_figures.items():
        with slide_sized(fig, deck.SIZE):
            assert tuple(fig.get_size_inches()) == pytest.approx((1920 / 144, 1080 / 144))
            for ax in fig.axes:
                for label in ax.get_xticklabels() + ax.get_yticklabels():
                    if label.get_visible() and label.get_text():
                        assert label.get_fontsize() >= MIN_FONT_PT, (name, label.get_text())


def test_the_shrunk_query_slide_draws_768_and_64_to_scale():
    from matplotlib.patches import Rectangle

    from helpers.figures import slides

    fig = slides.shrunk_query(768, 64, "draw")
    boxes = [p for p in fig.axes[0].patches if isinstance(p, Rectangle)]
    assert [round(b.get_width()) for b in boxes] == [768, 64, 64]  # the word, W_Q's columns, the query
    assert round(boxes[1].get_height()) == 768  # W_Q's rows: as long as the word
    assert fig.axes[0].get_aspect() == 1.0  # one unit is one number both ways
