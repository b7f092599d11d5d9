"""Notebook 07's key/value-head slider, driven headless, its figures and its deck slide."""

import io

import numpy as np
import PIL.Image
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

import helpers as H
from helpers.analysis.kvheads import load_kv_variant
from helpers.figures import kv_plots
from helpers.figures.kv_plots import kv_slide


@pytest.fixture(scope="module")
def explorer():
    return H.KVHeadExplorer(kv_heads=3)


def snapshot(e):
    return {"maps": e.maps_view.image.get_array().copy(), "png": bytes(e.maps_image.value), "info": e.info.value,
            "caption": e.caption.value, "plot": bytes(e.plot_image.value), "n": e.kv_heads, "sentence": e.sentence}


def test_the_slider_offers_every_shipped_setting(explorer):
    assert explorer.counts == list(H.KV_COUNTS) and tuple(explorer.kv_slider.options) == H.KV_COUNTS


def test_moving_the_slider_redraws_maps_numbers_and_plot_together(explorer):
    e = explorer
    assert e.set_kv_heads(3)
    before = snapshot(e)
    assert e.set_kv_heads(1)
    after = snapshot(e)
    assert after["png"] != before["png"] and after["plot"] != before["plot"] and after["png"].startswith(b"\x89PNG")
    r = H.kv_results()[1]
    assert "1 key/value head" in after["info"] and f"{r['held_out_loss']:.3f}" in after["info"]
    assert f"{r['list_accuracy']:.0%}" in after["info"] and f"{r['params_per_layer']:,}" in after["info"]
    assert "= <b>64 bytes</b>" in after["info"] and "12× less than with 12" in after["info"]
    assert [list(m.get_xdata()) for m, _ in e.plot.markers] == [[1], [1]]
    e.kv_slider.value = 6  # what the browser does
    assert e.kv_heads == 6 and "6 key/value heads" in e.info.value and "groups of 2" in e.info.value


def test_each_setting_frames_its_groups(explorer):
    """Maps grouped visibly: one frame per key/value head per layer, labels coloured by group."""
    e = explorer
    for n in H.KV_COUNTS:
        assert e.set_kv_heads(n)
        view, frame = e._grid(n)
        boxes = [a for a in frame.moving if type(a).__name__ == "Rectangle"]
        assert len(boxes) == (0 if n == 12 else 2 * n)  # 2 layers
        colours = {t.get_color() for t in view.head_texts}
        assert len(colours) == (1 if n in (1, 12) else 2)
        assert ("each frame is one key/value head" in e.caption.value) == (n < 12)


def test_redraws_reuse_each_settings_grid(explorer):
    e = explorer
    assert e.set_kv_heads(2)
    fig = e.maps_view.fig
    for n in (4, 12, 2):
        assert e.set_kv_heads(n)
    assert e.maps_view.fig is fig and len(fig.axes[0].images) == 1


def test_image_is_shown_at_its_own_size(explorer):
    e = explorer
    assert e.set_kv_heads(4)
    png = PIL.Image.open(io.BytesIO(bytes(e.maps_image.value)))
    assert png.size == e.maps_frame.canvas.get_width_height()
    assert e.maps_image.layout.width == f"{png.size[0]}px" and e.maps_image.layout.height == "auto"


def test_a_blitted_redraw_matches_a_full_draw(explorer, full_draw_of):
    """The live image pastes a cached background and draws the maps and the group frames on top:
    it must look exactly like drawing the whole figure from scratch."""
    e = explorer
    for n in (1, 12, 3):
        assert e.set_kv_heads(n)
    assert np.array_equal(*full_draw_of(e.maps_frame))
    assert e.set_kv_heads(6) and np.array_equal(*full_draw_of(e.maps_frame))


@pytest.mark.parametrize("action, value", [("set_kv_heads", 5), ("set_kv_heads", "three"), ("set_kv_heads", 0),
                                           ("set_sentence", "the zebra flies"), ("set_sentence", "")])
def test_bad_input_shows_one_line_and_keeps_the_last_good_view(explorer, action, value):
    e = explorer
    assert e.set_kv_heads(4)
    before = snapshot(e)
    assert getattr(e, action)(value) is False
    assert "⚠" in e.status.value and "\n" not in e.status.value and "still showing 4 key/value heads" in e.status.value
    assert snapshot(e)["png"] == before["png"] and e.sentence_box.value == e.sentence
    assert e.set_kv_heads(2) and e.status.value == ""


def test_a_new_sentence_redraws(explorer):
    e = explorer
    before = bytes(e.maps_image.value)
    assert e.set_sentence("the cat near the dogs is tired .")
    assert e.run.tokens[1:3] == ["the", "cat"] and bytes(e.maps_image.value) != before
    assert e.set_kv_heads(1) and e.run.tokens[1:3] == ["the", "cat"]
    assert e.set_sentence(H.SENTENCE)


@pytest.mark.slow  # every slide of the widget drawn and checked
def test_export_writes_slides_that_pass_the_slide_check(explorer, tmp_path):
    e = explorer
    assert e.set_kv_heads(3)
    png = bytes(e.maps_image.value)
    paths = e.export(tmp_path / "figs")
    names = {p.name for p in paths}
    assert {"kv_heads_3_and_12.png", "kv_heads_3_and_12.svg", "kv_heads_3_and_12.pdf", "kv_heads_results.png",
            "kv_heads_3_and_12.txt"} <= names and all(p.stat().st_size > 0 for p in paths)
    assert "Saved 8 files" in e.status.value and bytes(e.maps_image.value) == png
    for n in (12, 1, 3):
        assert e.set_kv_heads(n)
        for name, (fig, _) in e.slide_figures().items():
            report = H.check_slide(fig)
            assert report.ok, f"{name}: {report.problems}"


def test_export_into_an_unwritable_place_shows_one_line(explorer, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    assert explorer.export(blocker / "figs") == [] and "⚠" in explorer.status.value


# --- the deck slide and the notebook's figures ------------------------------------------------------------
def test_deck_slide_shows_two_settings_with_loss_and_cache():
    fig = kv_slide((12, 1))
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    assert len(titles) == 2 and "12 key/value heads (multi-head)" in titles[0] and "1 key/value head (multi-query)" in titles[1]
    assert all("loss" in t and "bytes/token" in t for t in titles)
    assert H.check_slide(fig).ok, H.check_slide(fig).problems


@pytest.mark.parametrize("plot", [H.plot_kv_cache, H.plot_kv_results, H.plot_group_similarity, H.plot_pooled])
def test_figures_are_figures_that_write_nothing(plot, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    fig = plot()
    FigureCanvasAgg(fig).draw()
    assert fig.axes and not list(tmp_path.iterdir())


def test_mark_groups_refuses_a_count_that_does_not_divide():
    run = H.run_sentence(load_kv_variant(12), H.SENTENCE)
    view = kv_plots.AllHeadsView(run.attentions, run.tokens)
    with pytest.raises(ValueError, match="does not divide the 12 query heads"):
        kv_plots.mark_groups(view, 5)
