"""The head-count slider: the shapes and counts notebook 04 states, merging heads, the widget headless."""

from __future__ import annotations

import io
import json
import math
import shutil

import numpy as np
import PIL.Image
import pytest
import torch

import helpers as H
from helpers.analysis import headcount as S
from helpers.analysis.headcount import available_head_counts, head_shapes, merged_model
from helpers.core import catalog
from helpers.core.attention import multi_head_from
from helpers.core.language import vocabulary
from helpers.figures import headcount_plots
from helpers.figures.headcount_plots import plot_loss_vs_heads


@pytest.fixture(scope="module")
def explorer():
    return H.HeadCountExplorer(heads=4)


# --- shapes and parameter counts ------------------------------------------------------------
@pytest.mark.parametrize("n_heads", H.HEAD_COUNTS)
def test_head_shapes_match_what_the_trained_layer_computes(n_heads):
    lm = H.load_variant(n_heads)
    assert lm.config.n_head == n_heads and lm.config.n_embd == H.WIDTH == 96 and lm.config.n_layer == 2
    run = H.run_sentence(lm, H.SENTENCE)
    tokens, inputs = run.tokens, run.attention_inputs
    steps = multi_head_from(inputs[0], H.head_weights(lm.model, 0), causal=True)
    shapes = head_shapes(H.WIDTH, n_heads, len(tokens))
    d = H.WIDTH // n_heads
    assert shapes["Q, K, V (per head)"] == tuple(steps.Q.shape[1:]) == (len(tokens), d)
    assert shapes["scores (per head)"] == tuple(steps.scores.shape[1:]) == (len(tokens), len(tokens))
    assert shapes["head output (per head)"] == tuple(steps.z.shape[1:])
    assert shapes["concatenation"] == tuple(steps.concat.shape) == (len(tokens), H.WIDTH)
    assert shapes["recombination W_O"] == tuple(steps.recombination.shape) == (H.WIDTH, H.WIDTH)
    assert shapes["W_Q, W_K, W_V (per head)"] == tuple(H.head_weights(lm.model, 0)["W_Q"].shape[1:])
    assert steps.weights.shape[0] == n_heads


def test_head_shapes_rejects_a_head_count_that_does_not_divide_the_width():
    with pytest.raises(ValueError, match="divide"):
        head_shapes(96, 5, 4)
    with pytest.raises(ValueError):
        head_shapes(96, 4, 0)


@pytest.mark.parametrize("n_heads", H.HEAD_COUNTS)
def test_attention_parameters_are_the_same_for_every_head_count(n_heads):
    counted = sum(p.numel() for p in H.load_variant(n_heads).model.h[0].attn.parameters())
    assert H.attention_param_count(96, n_heads) == counted == 4 * 96 ** 2 + 4 * 96 == 37_248  # notebook 04, §3


def test_every_slider_model_is_shipped_and_has_a_held_out_loss():
    losses = H.loss_by_heads()
    assert sorted(losses) == list(H.HEAD_COUNTS) == available_head_counts()
    for h, loss in losses.items():
        assert loss == pytest.approx(H.load_variant(h).info["held_out_loss"])
        assert 0 < loss < math.log(len(vocabulary()))  # better than guessing uniformly


def test_load_variant_is_cached_and_rejects_untrained_head_counts():
    assert H.load_variant(3) is H.load_variant(3)
    for bad in (5, 0, "4", True):
        with pytest.raises(ValueError, match="choose one of"):
            H.load_variant(bad)


def test_loss_plot_marks_the_current_head_count():
    losses = {1: 2.0, 2: 1.5, 4: 1.2}
    plot = headcount_plots.LossPlot(losses, current=2)
    assert list(plot.marker.get_xdata()) == [2] and list(plot.marker.get_ydata()) == [1.5]
    plot.update(4)
    assert list(plot.marker.get_ydata()) == [1.2]
    assert plot_loss_vs_heads(losses).axes[0].get_xlabel().startswith("heads")
    with pytest.raises(ValueError):
        plot_loss_vs_heads({})


# --- merging heads ------------------------------------------------------------------------------
def test_merging_in_groups_of_one_reproduces_the_trained_maps():
    lm = H.load_variant(12)
    weights = H.head_weights(lm.model, 1)
    merged = H.merge_head_groups(weights, 1)
    assert all(torch.equal(merged[k], weights[k]) for k in weights)
    tokens, maps = H.merged_maps(lm, H.SENTENCE, 1)
    run = H.run_sentence(lm, H.SENTENCE)
    assert tokens == run.tokens
    assert torch.allclose(maps, run.attentions, atol=1e-6)


@pytest.mark.parametrize("g", [2, 3, 4, 6, 12])
def test_merging_only_moves_the_cuts_between_heads(g):
    """Merged weights are the same numbers read by a model with 12 / g heads (notebook 04, §6)."""
    lm = H.load_variant(12)
    wider = merged_model(lm, g)
    assert wider.config.n_head == 12 // g and wider.config.d_head == 8 * g
    for layer in range(2):
        merged = H.merge_head_groups(H.head_weights(lm.model, layer), g)
        direct = H.head_weights(wider, layer)
        assert all(torch.equal(merged[k], direct[k]) for k in direct)
        assert merged["W_Q"].shape == (12 // g, 96, 8 * g) and merged["W_O"].shape == (12 // g, 8 * g, 96)


def test_a_merged_head_scores_with_the_sum_of_its_members_scores():
    """The notebook's claim: merged score = sum of member scores, scaled by 1/√(g·d) instead of 1/√d."""
    lm, g, layer = H.load_variant(12), 3, 1
    inputs = H.run_sentence(lm, H.SENTENCE).attention_inputs
    members = multi_head_from(inputs[layer], H.head_weights(lm.model, layer), causal=True)
    raw = members.scores.reshape(4, g, *members.scores.shape[1:]).sum(1)  # (4, T, T) summed raw scores
    T = raw.shape[-1]
    expected = (raw / math.sqrt(8 * g)).masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), -math.inf).softmax(-1)
    _, maps = H.merged_maps(lm, H.SENTENCE, g)
    assert torch.allclose(maps[layer], expected, atol=1e-5)
    assert maps.shape == (2, 4, T, T)


def test_merge_rejects_a_group_size_that_does_not_divide_the_heads():
    weights = H.head_weights(H.load_variant(12).model, 0)
    for bad in (5, 0, 24, 1.5):
        with pytest.raises(ValueError, match="group_size"):
            H.merge_head_groups(weights, bad)


def test_merged_loss_in_groups_of_one_is_the_trained_loss():
    assert H.merged_loss(1) == pytest.approx(H.loss_by_heads()[12], abs=0.01)  # fp16 weights on disk


def test_recorded_merged_losses_are_what_the_shipped_file_measures():
    """Notebook 04 reads the six merged losses from data/models.json: each must be what an evaluation
    of the shipped heads-12 file gives now, to the 4 decimals evaluate reports."""
    recorded = catalog.manifest()["heads-12"]["merged_held_out_loss"]
    assert sorted(map(int, recorded)) == [g for g in H.HEAD_COUNTS if 12 % g == 0]
    lm = H.load_variant(12)
    for g, loss in recorded.items():
        assert S.measure_merged_loss(lm, int(g)) == pytest.approx(loss, abs=1e-4), f"groups of {g}"
        assert H.merged_loss(int(g)) == loss


def test_record_merged_losses_writes_them_beside_the_file_and_a_retrained_file_is_measured_live(tmp_path,
                                                                                                  monkeypatch):
    shutil.copy(catalog.DATA_DIR / "heads-12.safetensors", tmp_path)
    entries = catalog.manifest()
    del entries["heads-12"]["merged_held_out_loss"]  # what record_model leaves after a retrain
    (tmp_path / "models.json").write_text(json.dumps(entries))
    monkeypatch.setattr(catalog.manifest, "__defaults__", (tmp_path / "models.json", True))
    monkeypatch.setattr(S, "measure_merged_loss", lambda lm, g: 10.0 + g)  # a live measurement, recognisable
    S._live_merged_loss.cache_clear()
    assert H.merged_loss(3) == 13.0  # nothing recorded: measured
    S._live_merged_loss.cache_clear()
    written = S.record_merged_losses(tmp_path / "heads-12.safetensors")
    assert written == {"1": 11.0, "2": 12.0, "3": 13.0, "4": 14.0, "6": 16.0, "12": 22.0}
    assert json.loads((tmp_path / "models.json").read_text())["heads-12"]["merged_held_out_loss"] == written
    assert H.merged_loss(4) == 14.0  # recorded: read


def test_plot_merge_example_is_labelled_a_thought_experiment():
    fig = H.plot_merge_example(H.SENTENCE, layer=1, first=3, group_size=3)
    assert "Thought experiment" in fig.get_suptitle()
    assert len([ax for ax in fig.axes if ax.images]) == 4  # three trained heads and their merge
    with pytest.raises(ValueError):
        H.plot_merge_example(H.SENTENCE, first=2, group_size=3)


# --- exercise checks ----------------------------------------------------------------------------
def test_head_size_check_passes_the_reference_and_names_mistakes(capsys):
    H.check_head_size_and_params(lambda w, n: (w // n, H.attention_param_count(w, n)))
    assert capsys.readouterr().out.startswith("✓")  # checks print one line and return None
    H.check_head_size_and_params(lambda w, n: (w // n, 4 * w * w))
    assert "biases" in capsys.readouterr().out
    H.check_head_size_and_params(lambda w, n: (n, H.attention_param_count(w, n)))
    assert "the head size is width // heads" in capsys.readouterr().out
    H.check_head_size_and_params(lambda w, n: None)
    assert "not attempted" in capsys.readouterr().out


def test_concat_check_passes_the_reference_and_names_mistakes(capsys):
    H.check_concat_shape(lambda T, w, n: (T, w))
    assert capsys.readouterr().out.startswith("✓")
    H.check_concat_shape(lambda T, w, n: (T, w // n))
    assert "one head's output" in capsys.readouterr().out
    H.check_concat_shape(lambda T, w, n: (n, T, w // n))
    assert "stacking" in capsys.readouterr().out
    H.check_concat_shape(lambda T, w, n: 1 / 0)
    assert "raised ZeroDivisionError" in capsys.readouterr().out


# --- the widget, driven headless ---------------------------------------------------------------
def snapshot(e):
    return {"maps": e.maps_view.image.get_array().copy(), "png": bytes(e.maps_image.value),
            "merge": e.merge_view.image.get_array().copy(), "merge_png": bytes(e.merge_image.value),
            "info": e.info.value, "loss_png": bytes(e.loss_image.value), "heads": e.heads, "sentence": e.sentence,
            "merge_k": e.merge}


def same_array(a, b) -> bool:
    return a.shape == b.shape and np.array_equal(np.ma.filled(a, -1), np.ma.filled(b, -1))


def test_moving_the_head_slider_redraws_the_maps(explorer):
    e = explorer
    assert e.set_heads(4)
    before = snapshot(e)
    assert e.set_heads(12)
    after = snapshot(e)
    T = len(e.run.tokens)
    assert after["maps"].shape == (2 * (T + 1) - 1, 12 * (T + 1) - 1) != before["maps"].shape
    assert after["png"] != before["png"] and after["png"].startswith(b"\x89PNG")
    assert "12 heads" in after["info"] and "96 / 12 = <b>8</b>" in after["info"] and "37,248" in after["info"]
    assert e.heads_slider.value == 12
    assert list(e.loss_plot.marker.get_xdata()) == [12]
    e.heads_slider.value = 2  # what the browser does
    assert e.heads == 2 and "2 heads" in e.info.value and not same_array(e.maps_view.image.get_array(), after["maps"])


def test_redraws_reuse_the_same_figure_and_artists(explorer):
    """One grid per head count, laid out once: coming back to a head count reuses it."""
    e = explorer
    assert e.set_heads(1)
    fig, image = e.maps_fig, e.maps_view.image
    for h in (6, 3, 1):
        assert e.set_heads(h)
    assert e.maps_fig is fig and e.maps_view.image is image and len(fig.axes[0].images) == 1


def test_maps_grow_when_there_are_fewer_heads_and_carry_the_words(explorer):
    """Few heads: big maps with their words. Twelve: 4-pt words would be noise, so the grid drops them
    and the caption says where the words are (the rows and columns follow the sentence; the export zooms)."""
    e = explorer
    sizes = {}
    for h in (1, 6, 12):
        assert e.set_heads(h)
        grid = e.maps_view._place()
        sizes[h] = grid.height * e.maps_fig.get_figheight() / 2  # inches of one map (2 layers)
        texts = e.maps_view.token_texts
        words = [t.get_text() for t in texts]
        assert words[:len(e.run.tokens)] == e.run.tokens and words[-len(e.run.tokens):] == e.run.tokens
        shown = h < 12
        assert e.maps_view.words_shown == shown and all(t.get_visible() == shown for t in texts)
        assert not shown or min(t.get_fontsize() for t in texts) >= 7
        assert ("Too many maps to label each word" in e.maps_caption.value) == (not shown)
        png = PIL.Image.open(io.BytesIO(bytes(e.maps_image.value)))
        assert png.size == e.maps_frame.canvas.get_width_height()  # shown as rendered
        assert all(abs(a - b * e.DPI) < 1 for a, b in zip(png.size, e.maps_fig.get_size_inches()))
        assert e.maps_image.layout.width == f"{png.size[0]}px" and e.maps_image.layout.height == "auto"
    assert sizes[1] > 2 * sizes[12]
    for group_size, shown in ((1, False), (3, True)):  # 12 merged maps as trained, or 4 wide ones
        assert e.set_merge(group_size)
        assert ("Too many maps to label each word" in e.merge_caption.value) == (not shown)
    figures = e.slide_figures()
    slide, _ = figures["heads_12_maps"]
    zoom = next(ax for ax in slide.axes if "up close" in ax.get_title())  # 24 maps: the words go on the close-up
    assert [t.get_text() for t in zoom.get_yticklabels()] == e.run.tokens
    assert [t.get_text() for t in zoom.get_xticklabels()] == e.run.tokens


def test_exported_maps_pass_the_slide_check_at_every_head_count(explorer, tmp_path):
    """The reported 12-head export: 6-pt words and the bottom half blank. Now every export passes."""
    e = explorer
    for heads, merge in ((1, 12), (12, 1), (4, 3)):
        assert e.set_heads(heads) and e.set_merge(merge)
        for name, (fig, size) in e.slide_figures().items():
            report = H.check_slide(fig)
            assert report.ok, f"{name}: {report.problems}"


def test_the_merge_control_redraws_the_thought_experiment(explorer):
    e = explorer
    assert e.set_merge(1)
    before = snapshot(e)
    assert e.set_merge(3)
    T = len(e.merge_tokens)
    assert e.merge_view.image.get_array().shape == (2 * (T + 1) - 1, 4 * (T + 1) - 1)
    assert bytes(e.merge_image.value) != before["merge_png"]
    assert "4 heads of 24" in e.merge_info.value and e.merge_slider.value == 3
    assert "THOUGHT EXPERIMENT" in e.merge_caption.value and "groups of 3 → 4 heads of 24" in e.merge_caption.value


def test_a_new_sentence_redraws_both_views(explorer):
    e = explorer
    before = snapshot(e)
    assert e.set_sentence("the cat near the dogs is tired .")
    assert e.run.tokens[1:3] == ["the", "cat"] and e.merge_tokens == e.run.tokens
    assert bytes(e.maps_image.value) != before["png"] and bytes(e.merge_image.value) != before["merge_png"]
    assert bytes(e.loss_image.value) == before["loss_png"]  # the loss curve is the same for every sentence
    # the live line (shown above the grids, read out by a screen reader) speaks of the grid at the top
    assert e.heads_title() in e.live.value and "THOUGHT EXPERIMENT" not in e.live.value
    assert e.set_sentence(H.SENTENCE)


def test_each_new_picture_reaches_the_browser_in_one_message_with_its_words(explorer, monkeypatch):
    """The browser's Image view decodes its picture again on every message, so a picture and its words
    (the tooltip, its accessible name) sent apart cost a second decode of a 1280-px PNG."""
    e, sent = explorer, []
    for image in (e.maps_image, e.merge_image, e.loss_image):
        monkeypatch.setattr(image, "send_state",  # a copy: hold_sync clears the set it passes
                            lambda key=None, image=image: sent.append((image, {key} if isinstance(key, str) else set(key))))
    assert e.set_sentence("the cat near the dogs is tired .") and e.set_heads(6) and e.set_merge(2)
    keys = [key for _, key in sent if key]  # hold_sync sends an empty set when nothing changed
    assert keys and all("value" in key for key in keys), keys  # never the words alone (the same words send nothing)
    assert any("tooltip" in key for key in keys), keys  # new words went with their picture
    assert e.set_sentence(H.SENTENCE) and e.set_heads(4) and e.set_merge(1)


@pytest.mark.parametrize("heads, merge", [(2, 3), (12, 1)])  # big maps with words; a strip of 24 without
def test_a_new_sentence_keeps_each_grid_and_draws_what_a_new_one_would(explorer, heads, merge):
    """The grids are kept across sentences (a new figure costs more than new words): after a shorter and
    a longer sentence each picture is, pixel for pixel, that of a grid built for the sentence shown."""
    from helpers.widgets.frame import live_grid
    e = explorer
    assert e.set_heads(heads) and e.set_merge(merge)
    figures = (e.maps_fig, e.merge_fig)
    for sentence in ("the cat is tired .", "the cat near the dogs is tired .", H.SENTENCE):
        assert e.set_sentence(sentence)
        assert (e.maps_fig, e.merge_fig) == figures
        for image, maps, tokens in ((e.maps_image, e.run.attentions, e.run.tokens),
                                    (e.merge_image, e.merge_maps, e.merge_tokens)):
            shown = np.asarray(PIL.Image.open(io.BytesIO(bytes(image.value))).convert("RGBA"))
            view, frame = live_grid(maps, tokens, e.DPI)
            frame.png()
            assert [t.get_text() for t in view.token_texts] == [t for t in tokens] * 3  # 2 layers + the keys
            np.testing.assert_array_equal(shown, np.asarray(frame.canvas.buffer_rgba()))


@pytest.mark.parametrize("action, value", [("set_heads", 5), ("set_heads", "twelve"), ("set_merge", 5),
                                           ("set_sentence", "the zebra flies"), ("set_sentence", ""),
                                           ("set_sentence", " ".join(["cat"] * 80))])
def test_bad_input_shows_one_line_and_keeps_the_last_good_view(explorer, action, value):
    e = explorer
    assert e.set_heads(6) and e.set_merge(2)
    before = snapshot(e)
    assert getattr(e, action)(value) is False
    assert "⚠" in e.status.value and "\n" not in e.status.value and "Traceback" not in e.status.value
    assert "still showing heads-6, merged in groups of 2" in e.status.value
    assert e.sentence_box.value == e.sentence  # the box shows the sentence the pictures show
    after = snapshot(e)
    assert same_array(after["maps"], before["maps"]) and same_array(after["merge"], before["merge"])
    assert {k: after[k] for k in ("png", "merge_png", "info", "heads", "sentence", "merge_k")} == \
        {k: before[k] for k in ("png", "merge_png", "info", "heads", "sentence", "merge_k")}
    assert e.set_heads(4) and e.status.value == ""  # the next good move clears the message


def test_export_writes_slides_and_leaves_the_view_as_it_was(explorer, tmp_path):
    e = explorer
    assert e.set_heads(3) and e.set_merge(4)
    png = bytes(e.maps_image.value)
    paths = e.export(tmp_path / "figs")
    names = sorted(p.name for p in paths)
    assert len(paths) == 12 and all(p.is_file() and p.stat().st_size > 0 for p in paths)
    assert {"heads_3_maps.png", "heads_3_maps.svg", "heads_3_maps.pdf", "loss_vs_heads.pdf",
            "heads_12_merged_by_4.png", "loss_vs_heads.txt"} <= set(names)
    assert (tmp_path / "figs" / "loss_vs_heads.txt").read_text(encoding="utf-8").startswith("Held-out loss is lowest")
    assert "Saved 12 files" in e.status.value
    assert e.set_heads(1) and e.set_heads(3) and bytes(e.maps_image.value) == png  # the live view is unchanged


def test_exported_figures_carry_the_titles_the_captions_show(explorer):
    e = explorer
    assert e.set_heads(6) and e.set_merge(2)
    figures = e.slide_figures()
    maps, _ = figures["heads_6_maps"]
    merged, _ = figures["heads_12_merged_by_2"]
    title, merged_title = (" ".join(fig.get_suptitle().split()) for fig in (maps, merged))  # wrapped for a slide
    assert "heads-6: 6 heads of 16 numbers" in title and "reading: <bos> list" in title
    assert "THOUGHT EXPERIMENT" in merged_title and "6 heads of 16" in merged_title
    assert "heads-6: 6 heads of 16 numbers" in e.maps_caption.value


def test_a_blitted_redraw_matches_a_full_draw(explorer, full_draw_of):
    """The live image pastes a cached background and draws only the maps' axes: it must look
    exactly like drawing the whole figure from scratch."""
    e = explorer
    for h in (12, 1, 4):
        assert e.set_heads(h)
    blitted, full = full_draw_of(e.maps_frame)
    assert np.array_equal(blitted, full)
    assert e.set_merge(6) and np.array_equal(*full_draw_of(e.merge_frame))


def test_export_into_an_unwritable_place_shows_one_line(explorer, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    assert explorer.export(blocker / "figs") == []
    assert "⚠" in explorer.status.value


# --- the claims notebook 04's prose makes about the trained models ----------------------------
def test_one_head_per_layer_is_clearly_worst_and_two_to_twelve_are_close():
    losses = H.loss_by_heads()
    repeats = {h: H.load_variant(h).info["accuracy_induction"] for h in losses}
    more = [h for h in losses if h > 1]
    assert losses[1] > max(losses[h] for h in more) + 0.03
    assert repeats[1] < 0.5 < 0.8 < min(repeats[h] for h in more)
    assert max(losses[h] for h in more) - min(losses[h] for h in more) < 0.05  # "within a few hundredths"


def test_the_two_head_model_has_a_layer_1_head_that_finds_the_word_after_the_earlier_copy():
    run = H.run_sentence(H.load_variant(2), H.SENTENCE)
    tokens = run.tokens
    second = tokens.index("again") + 2  # the second copy of the list starts after "again :"
    pairs = [(q, tokens.index(tokens[q]) + 1) for q in range(second, len(tokens) - 1)]
    stripe = [sum(run.attentions[1, h, q, k].item() for q, k in pairs) / len(pairs) for h in range(2)]
    assert max(stripe) > 0.5


def test_merging_raises_the_loss_more_as_groups_grow_and_training_beats_it():
    losses = H.loss_by_heads()
    merged = [H.merged_loss(g) for g in H.HEAD_COUNTS]
    assert merged == sorted(merged) and merged[0] < merged[1]
    assert all(H.merged_loss(g) > losses[12 // g] for g in H.HEAD_COUNTS[1:])


def test_in_the_notebooks_merge_example_the_merged_head_keeps_one_members_stripe():
    lm, sentence = H.load_variant(12), H.SENTENCE
    members = H.run_sentence(lm, sentence).attentions[1, 0:3]  # (3, T, T): the example's L1 H0-H2
    merged = H.merged_maps(lm, sentence, 3)[1][1, 0]  # (T, T)
    distance = (members - merged).abs().sum(-1).mean(-1)  # (3,) how far the merged map is from each member
    assert distance[2] < 0.5 * min(distance[0], distance[1])  # it follows L1 H2 and drops the others' jobs
