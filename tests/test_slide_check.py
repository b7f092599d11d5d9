"""The slide layout check catches what a class would see: cut, overlapping, tiny or squeezed text."""

import pytest
from matplotlib.figure import Figure

from helpers.figures.slide import SLIDE_INCHES, slide_scale
from helpers.figures.slide import SlideLayoutWarning, check_layout, check_slide


def slide(**kwargs) -> tuple[Figure, object]:
    fig = Figure(figsize=SLIDE_INCHES, layout="constrained")
    ax = fig.add_subplot(**kwargs)
    ax.plot([0, 1], [0, 1])
    ax.set_title("a fine slide", fontsize=20)
    ax.tick_params(labelsize=16)
    return fig, ax


def test_a_plain_slide_passes():
    report = check_slide(slide()[0])
    assert report.ok, report.problems
    assert report.min_pt == 16 and report.span > 0.9


def test_text_outside_the_figure_is_caught():
    fig, ax = slide()
    fig.text(0.98, 0.5, "cut off at the right edge", fontsize=20)
    assert any("sticks out" in p for p in check_slide(fig).problems)


def test_overlapping_texts_are_caught():
    fig, ax = slide()
    ax.text(0.5, 0.5, "first label", fontsize=20)
    ax.text(0.52, 0.5, "second label", fontsize=20)
    assert any("'first label' overlaps 'second label'" == p for p in check_slide(fig).problems)


def test_rotated_labels_are_compared_as_rotated_boxes():
    """45° labels whose upright bounding boxes overlap, but whose glyph boxes do not, pass; crowded ones fail."""
    fig, ax = slide()
    ax.set_xticks(range(6), [f"word{i}" for i in range(6)], rotation=45, ha="right", rotation_mode="anchor")
    ax.set_xlim(-0.5, 5.5)
    assert check_slide(fig).ok, check_slide(fig).problems
    ax.set_xticks(range(60), [f"word{i}" for i in range(60)], rotation=45, ha="right", rotation_mode="anchor")
    ax.set_xlim(-0.5, 59.5)
    assert any("overlaps" in p for p in check_slide(fig).problems)


def test_animated_texts_are_checked_as_a_save_draws_them():
    """A widget's Frame marks its words animated (blitted); a plain draw skips them, a save does not."""
    fig, ax = slide()
    word = fig.text(0.98, 0.5, "a blitted word cut at the edge", fontsize=20, animated=True)
    report = check_slide(fig)
    assert any("'a blitted word cut at the edge' sticks out" in p for p in report.problems)
    assert word.get_animated()  # given back


def test_tick_labels_beyond_the_view_are_not_counted():
    fig, ax = slide()
    ax.set_xticks([0, 1, 50], ["0", "1", "far away"])  # 50 is outside the view: never drawn
    ax.set_xlim(0, 1)
    assert check_slide(fig).ok


def test_fonts_are_judged_on_the_slide_not_in_the_figure():
    fig = Figure(figsize=(19.2, 10.8), layout="constrained")  # 14 pt here is 9.7 pt on a 13.33-in slide
    ax = fig.add_subplot()
    ax.set_xticks([0.5, 1])  # the corner's two "0.0" labels would touch at 20 pt
    ax.tick_params(labelsize=14)
    ax.set_title("title", fontsize=14)
    with pytest.warns(SlideLayoutWarning, match="9.7 pt on the slide"):
        report = check_layout(fig, "big")  # the figure as it is
    assert report.min_pt == pytest.approx(14 * 13.333 / 19.2, abs=0.05)
    exported = check_slide(fig, size=None)  # as save_for_slides(size=None) writes it: text enlarged to ~20 pt
    assert exported.ok and exported.min_pt >= 14
    assert ax.title.get_fontsize() == 14  # and given back
    assert slide_scale((12.8, 7.2)) == pytest.approx(1920 / 144 / 12.8)


def test_a_narrow_slide_fails():
    fig = Figure(figsize=SLIDE_INCHES)
    ax = fig.add_axes((0.05, 0.1, 0.3, 0.8))
    ax.set_xticks([0.5, 1])  # the corner's two "0.0" labels would touch
    ax.tick_params(labelsize=16)
    assert any("spans" in p for p in check_slide(fig).problems)


def test_off_centre_content_is_caught():
    fig = Figure(figsize=SLIDE_INCHES)
    ax = fig.add_axes((0.35, 0.1, 0.62, 0.8))
    ax.tick_params(labelsize=16)
    assert any("off-centre" in p for p in check_slide(fig).problems)


def test_small_text_is_enlarged_as_the_export_does_then_given_back():
    fig, ax = slide()
    ax.set_xlabel("small", fontsize=8)
    report = check_slide(fig)
    assert report.min_pt >= 14 and ax.xaxis.label.get_fontsize() == 8


def test_not_a_figure():
    with pytest.raises(ValueError, match="Figure"):
        check_slide("slide.png")


def test_a_square_grid_as_tall_as_the_slide_is_not_squeezed():
    # 144 heads in a square: the slide's height bounds it, so its 57 % of the width is as wide as it can be
    fig = Figure(figsize=SLIDE_INCHES)
    ax = fig.add_axes((0.25, 0.07, 0.5, 0.86))
    ax.set_aspect("equal", adjustable="box")
    ax.tick_params(labelsize=16)
    fig.suptitle("a title", fontsize=20)
    report = check_slide(fig)
    assert report.span < 0.6 and not any("spans" in p for p in report.problems), report.problems
