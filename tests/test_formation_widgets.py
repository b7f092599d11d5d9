"""Notebook 08's widgets and figures, driven headless: the training-step slider, the live training cell,
the curves, the knock-out plot and the GIF of the maps forming."""

import dataclasses
import io

import numpy as np
import PIL.Image
import pytest
from matplotlib.figure import Figure

import helpers as H
from helpers import train
from helpers.figures import formation_plots as P


@pytest.fixture(scope="module")
def explorer():
    return H.TrainingStepExplorer()


def test_a_move_redraws_the_maps_the_marker_and_the_scores(explorer):
    e = explorer
    assert e.set_step(1953)
    before = bytes(e.maps_image.value), bytes(e.curve_image.value), e.scores.value
    assert e.set_step(648) and e.slider.value == 648
    after = bytes(e.maps_image.value), bytes(e.curve_image.value), e.scores.value
    assert all(a != b for a, b in zip(before, after))
    assert np.array_equal(e.view.image.get_array().filled(np.nan)[:10, :10],
                          P.AllHeadsView(e.maps[648], e.tokens).image.get_array().filled(np.nan)[:10, :10],
                          equal_nan=True)
    assert e.plot.markers[0].get_xdata()[0] == 648 and "step 648 (1,327,104 tokens)" in e.caption.value
    assert "<b>0.60</b>" in e.scores.value  # L1 H0's induction score at 648, the best of that step, in bold


def test_a_blitted_move_matches_a_full_draw(explorer, full_draw_of):
    for step in (0, 648, 1953):
        assert explorer.set_step(step)
        assert np.array_equal(*full_draw_of(explorer.frame))
        assert np.array_equal(*full_draw_of(explorer.curve_frame))


def test_images_are_shown_at_their_own_size(explorer):
    for image, frame in ((explorer.maps_image, explorer.frame), (explorer.curve_image, explorer.curve_frame)):
        png = PIL.Image.open(io.BytesIO(bytes(image.value)))
        assert png.size == frame.canvas.get_width_height() and image.layout.width == f"{png.size[0]}px"


@pytest.mark.parametrize("value", [649, "648", -1, True, None])
def test_a_bad_step_shows_one_line_and_keeps_the_view(explorer, value):
    assert explorer.set_step(624)
    png = bytes(explorer.maps_image.value)
    assert explorer.set_step(value) is False
    assert "⚠" in explorer.status.value and "\n" not in explorer.status.value and "still showing step 624" in \
        explorer.status.value and bytes(explorer.maps_image.value) == png and explorer.slider.value == 624


def test_export_writes_the_step_shown_and_passes_the_slide_check(explorer, tmp_path):
    assert explorer.set_step(648)
    paths = explorer.export(tmp_path / "figs")
    names = {p.name for p in paths}
    assert {"maps_at_step_648.png", "maps_at_step_648.pdf", "formation_curves.svg", "formation_curves.txt"} <= names
    for name, (fig, _) in explorer.slide_figures().items():
        report = H.check_slide(fig)
        assert report.ok, (name, report.problems)


def test_the_live_cell_trains_draws_and_stops_cleanly():
    short = dataclasses.replace(train.RECIPES["tiny"], tokens=16 * 64 * 8)  # 8 steps
    calls = []

    def fake_train(name, seed, on_step):
        calls.append((name, seed))
        return train.train(name, progress=False, recipe=dataclasses.replace(short, seed=seed), on_step=on_step)

    live = H.LiveTraining(fake_train, "tiny", seed=3, n_stories=4)
    assert live.start() and live.wait(300)["steps"] == list(range(8))
    assert calls == [("tiny", 3)] and live.redraws == 8 and live.status.value.startswith("finished after 8 steps")
    assert live.image.value and not live.train_button.disabled and live.stop_button.disabled
    live.stop()  # a stop asked before the next run is forgotten when it starts
    live.seed_box.value = 4
    stopper = live._on_step

    def stop_at_3(step, steps, loss, model):
        if step == 3:
            live.stop()
        stopper(step, steps, loss, model)

    live._on_step = stop_at_3
    drawn = None
    assert live.start()
    result = live.wait(300)
    drawn = bytes(live.image.value)
    assert result["steps"] == [0, 1, 2] and live.status.value.startswith("stopped at step 3 of 8")
    assert drawn and live.error == "" and calls[-1] == ("tiny", 4)


def test_a_failing_run_shows_one_line():
    def broken(name, seed, on_step):
        raise ValueError("no such recipe\nsecond line")

    live = H.LiveTraining(broken, "tiny", n_stories=2)
    live.start()
    live.wait(60)
    assert live.error == "⚠ training failed: no such recipe" and not live.train_button.disabled


@pytest.fixture(scope="module")
def record():
    r = H.shipped_record()
    return r, H.formation(r["curves"])


def test_figures_are_figures_with_words_that_write_nothing(record, tmp_path, monkeypatch):
    r, found = record
    monkeypatch.chdir(tmp_path)
    k = r["knockouts"]
    figs = [H.plot_formation_curves(r["curves"], found),
            H.plot_knockout_along(k["needed"], k["heads"]["needed"], k["heads"]["watched"], found["step"])]
    for fig in figs:
        assert isinstance(fig, Figure) and getattr(fig, "helpers_words")
    assert list(tmp_path.iterdir()) == []
    words = P.curves_words(r["curves"], found)
    assert "falls from 5.19 to 1.71" in words and "L1 H0 reaches 0.5 at step 648" in words
    assert "the previous-word head L0 H0 reaches 0.5 at step 576" in words


def test_the_gif_has_a_frame_per_snapshot_and_holds_the_formation_step(record):
    r, found = record
    run = H.load_snapshots()
    anim = H.formation_animation()
    assert len(anim.frames) == len(run.steps) == 37 and "L1 H0 forms at step 648" in anim.caption
    assert anim.seconds[run.steps.index(648)] == 2.0 and anim.gif_bytes()[:6] == b"GIF89a"
