"""The explorer driven headless: no browser, only its plain methods and widget values."""

import io

import numpy as np
import PIL.Image
import pytest
import torch

import helpers as H
from helpers.core.language import vocabulary
from helpers.core.model import GPT, GPTConfig, LanguageModel
from helpers.core.tokenizer import WordTokenizer
from helpers.figures.mosaic import head_mosaic
from helpers.widgets.explorer import Explorer


@pytest.fixture(scope="module")
def lm():
    """A small random model of the classroom language: 3 layers × 2 heads, context 12."""
    torch.manual_seed(0)
    config = GPTConfig(vocab_size=len(vocabulary()), n_ctx=12, n_layer=3, n_head=2, n_embd=16)
    return LanguageModel("tiny", GPT(config).eval(), WordTokenizer(vocabulary()))


@pytest.fixture
def explorer(lm, tmp_path):
    return Explorer(lm, "I like to draw", layer=1, head=0, folder=tmp_path)


def shown(explorer):
    """What the explorer currently plots: the grid's data, the zoomed map, the PNG bytes."""
    grid = explorer.grid.image.get_array().filled(np.nan)
    zoom = np.asarray(explorer.zoom.image.get_array())
    return grid, zoom, [bytes(image.value) for image in explorer.images]


def test_first_view_plots_the_run(lm, explorer):
    run = H.run_sentence(lm, "I like to draw")
    grid, zoom, pngs = shown(explorer)
    np.testing.assert_allclose(grid, head_mosaic(run.attentions), equal_nan=True)
    np.testing.assert_allclose(zoom, run.attentions[1, 0].numpy())
    assert all(png.startswith(b"\x89PNG") for png in pngs)
    assert explorer.error == ""


def test_every_picture_is_shown_at_its_own_pixel_size(explorer):
    for frame, image in zip(explorer.frames, explorer.images):
        width, _ = frame.canvas.get_width_height()
        assert (image.layout.width, image.layout.height, image.layout.flex) == (f"{width}px", "auto", "none")


def test_each_picture_is_exactly_what_its_canvas_drew(explorer):
    """The PNG bytes (Pillow's, from the blitted canvas) decode to the canvas's own pixels."""
    explorer.set_sentence("the cat is tired .")
    for frame, image in zip(explorer.frames, explorer.images):
        shown = PIL.Image.open(io.BytesIO(bytes(image.value)))
        assert shown.size == frame.canvas.get_width_height()
        np.testing.assert_array_equal(np.asarray(shown.convert("RGBA")), np.asarray(frame.canvas.buffer_rgba()))
        assert (np.asarray(shown.convert("RGBA"))[..., 3] == 255).all()  # opaque, as the figure


def test_another_head_redraws_only_the_highlight_and_new_sizes_decode_exactly(explorer):
    """Another head changes the grid's pixels only where the highlight was and now is (the maps and
    labels stay blitted), and after a longer sentence (a new size) every picture still decodes to
    exactly its canvas's pixels."""
    assert explorer.select(0, 0)  # a move from (1, 0): the grid is drawn
    before = np.asarray(explorer.frames[0].canvas.buffer_rgba()).copy()
    assert explorer.select(0, 1)  # the highlight moves along the top row of maps only
    after = np.asarray(explorer.frames[0].canvas.buffer_rgba())
    rows = np.flatnonzero((after != before).any(axis=(1, 2)))
    assert 0 < len(rows) <= len(before) // 2  # the lower layers' rows are untouched
    for sentence in ("the cat is tired . the dog is tired", "the cat is tired ."):  # 11 tokens (context 12), 6
        assert explorer.set_sentence(sentence) and explorer.select(2, 1)
        for frame, image in zip(explorer.frames, explorer.images):
            shown = PIL.Image.open(io.BytesIO(bytes(image.value)))
            np.testing.assert_array_equal(np.asarray(shown.convert("RGBA")), np.asarray(frame.canvas.buffer_rgba()))


def test_select_changes_the_zoom_and_the_highlight(lm, explorer):
    before = shown(explorer)
    assert explorer.select(2, 1) is True
    grid, zoom, pngs = shown(explorer)
    np.testing.assert_allclose(zoom, explorer.run.attentions[2, 1].numpy())
    assert (explorer.layer_slider.value, explorer.head_slider.value) == (2, 1)
    T = len(explorer.run.tokens)
    assert (explorer.grid.rect.get_x() + 0.5, explorer.grid.rect.get_y() + 0.5) == ((T + 1) * 1, (T + 1) * 2)
    assert pngs[0] != before[2][0] and pngs[1] != before[2][1]  # the pictures were redrawn


def full_draw(frame):
    """(blitted, full): a Frame's last picture, and the same figure drawn whole from scratch
    (its middle and moving artists drawn in place). Blitting must not change a single pixel."""
    blitted = np.asarray(frame.canvas.buffer_rgba()).copy()
    for artist in frame.middle + frame.moving:
        artist.set_animated(False)
    try:
        frame.fig.set_layout_engine("none")  # the layout the frame drew with, not a new one
        frame.canvas.draw()
        return blitted, np.asarray(frame.canvas.buffer_rgba()).copy()
    finally:
        frame.fig.set_layout_engine(frame.engine)
        for artist in frame.middle + frame.moving:
            artist.set_animated(True)
        frame.invalidate()


@pytest.mark.parametrize("second", ["the cat is tired .", "the dog is tired ."])  # a new length, the same length
def test_a_blitted_redraw_matches_a_full_draw(explorer, second):
    """Selecting pastes a cached grid and draws only the highlight, the zoomed map and the
    links; a new sentence of the same length redraws the grid's maps over its kept labels and
    keeps the layout: each picture must equal the whole figure drawn from scratch."""
    explorer.set_sentence("the cat is tired .")
    explorer.select(2, 1, query=3)
    explorer.set_sentence(second)
    for layer, head, query in ((2, 1, None), (0, 0, 2), (1, 1, 4), (1, 1, 0)):
        assert explorer.select(layer, head, query)
    for frame in explorer.frames:
        blitted, full = full_draw(frame)
        assert np.array_equal(blitted, full)


def test_each_change_redraws_only_its_pictures(explorer):
    """Another query word: only the links; another head: zoom, links and grid; a new sentence of
    the same length: every picture, without a new layout."""
    def pictures():
        return [bytes(image.value) for image in explorer.images]
    before = pictures()
    explorer.select(1, 0, query=2)
    after = pictures()
    assert after[:2] == before[:2] and after[2] != before[2]
    explorer.select(2, 1, query=2)
    assert all(a != b for a, b in zip(pictures(), after))
    explorer.set_sentence("I like to sing")  # as long as "I like to draw"
    assert all(not frame.relayout for frame in explorer.frames)
    np.testing.assert_allclose(explorer.grid.image.get_array().filled(np.nan),
                               head_mosaic(explorer.run.attentions), equal_nan=True)


def test_moving_the_sliders_selects(explorer):
    explorer.head_slider.value = 1
    explorer.layer_slider.value = 0
    assert (explorer.layer, explorer.head) == (0, 1)
    np.testing.assert_allclose(shown(explorer)[1], explorer.run.attentions[0, 1].numpy())


def test_new_sentence_from_the_text_box_changes_every_view(lm, explorer):
    explorer.text.value = "the cat is tired ."
    run = H.run_sentence(lm, "the cat is tired .")
    assert explorer.run.tokens == run.tokens
    grid, zoom, _ = shown(explorer)
    assert grid.shape == head_mosaic(run.attentions).shape
    np.testing.assert_allclose(grid, head_mosaic(run.attentions), equal_nan=True)
    np.testing.assert_allclose(zoom, run.attentions[1, 0].numpy())
    assert [t.get_text() for t in explorer.zoom.query_words] == run.tokens  # the rows' words (Text artists)
    assert [t.get_text() for t in explorer.zoom.key_words] == run.tokens


def test_the_words_drawn_as_texts_pass_the_slide_rules(explorer):
    """The zoom's and the links' words are Text artists that the Frame blits; the slide check still
    sees every one of them (none cut, none overlapping, none too small), in both pictures."""
    for sentence in ("the cat is tired .", "I like to draw"):  # a new layout, then a kept one
        explorer.set_sentence(sentence)
        T = len(explorer.run.tokens)
        for fig in (explorer.zoom.fig, explorer.links.fig):
            report = H.check_slide(fig, size=None)
            assert report.ok, report.problems
            assert report.n_texts >= 2 * T + 2  # the words of both columns and their two labels


@pytest.mark.parametrize("bad, words", [
    ("I like zebras", "Unknown word"),
    ("   ", "empty"),
    ("the cat " * 10, "at most 12"),
])
def test_bad_sentence_shows_the_error_and_keeps_the_last_good_view(explorer, bad, words):
    grid, zoom, pngs = shown(explorer)
    tokens = explorer.run.tokens
    assert explorer.set_sentence(bad) is False  # no exception
    assert words in explorer.error and "\n" not in explorer.error
    assert words in explorer.status.value
    assert "still showing “I like to draw”" in explorer.status.value  # says what the pictures show
    assert explorer.text.value == "I like to draw"  # and the box shows the same sentence
    assert explorer.run.tokens == tokens
    after = shown(explorer)
    np.testing.assert_array_equal(after[0], grid)
    np.testing.assert_array_equal(after[1], zoom)
    assert after[2] == pngs
    assert explorer.set_sentence("I like to draw") and explorer.error == ""  # recovers


def test_bad_text_box_value_does_not_raise(explorer):
    explorer.text.value = "xyzzy"
    assert "Unknown word" in explorer.error


def test_selecting_a_missing_head_shows_an_error(explorer):
    assert explorer.select(3, 0) is False
    assert "does not exist" in explorer.error
    assert (explorer.layer, explorer.head) == (1, 0)


def test_query_word_shows_only_its_links(explorer):
    explorer.word.value = 2
    assert explorer.query == 2
    alphas = explorer.links.lines.get_colors()[:, 3]
    segments = explorer.links.lines.get_segments()
    assert all(a == 0 for s, a in zip(segments, alphas) if int(-s[1][1]) != 2)


def test_export_writes_every_view_for_slides(explorer, tmp_path):
    explorer.select(2, 1)
    paths = explorer.export(tmp_path / "slides")
    assert {p.suffix for p in paths} == {".png", ".svg", ".pdf", ".txt"}  # .txt: each figure's caption
    assert len(paths) == 12 and all(p.is_file() and p.stat().st_size > 0 for p in paths)
    assert any("L2H1" in p.name for p in paths)
    head_caption = next(p for p in paths if p.name.endswith("L2H1_map.txt")).read_text(encoding="utf-8")
    assert head_caption.startswith("Layer 2, head 1: ") and "% of the attention" in head_caption
    note = explorer.export_note.value
    assert "Wrote 12 files" in note and str((tmp_path / "slides").resolve()) in note
    assert all(p.name in note for p in paths)


def test_export_into_an_unwritable_place_shows_the_error(explorer, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    assert explorer.export(blocker / "sub") == []
    assert explorer.error


def test_the_button_exports(explorer, tmp_path):
    explorer.button.click()
    assert len(list(tmp_path.glob("*.png"))) == 3


# --- notebook 05's exercise checks ----------------------------------------------------------
def planted_maps(L=3, H=4, T=6) -> torch.Tensor:
    """Maps with one clear previous-word head (1, 2), one self head (2, 0), the rest on <bos>."""
    maps = torch.zeros(L, H, T, T)
    maps[..., 0] = 1.0  # everyone rests on the first token
    maps[1, 2] = torch.diag(torch.ones(T - 1), -1)
    maps[1, 2, 0, 0] = 1.0
    maps[2, 0] = torch.eye(T)
    maps[0, 3] = 0.5 * maps[1, 2] + 0.5 * maps[0, 0]  # a half-hearted previous-word head
    return maps


def reference_previous_word_head(attentions):
    scores = attentions.diagonal(offset=-1, dim1=-2, dim2=-1).mean(-1)  # (L, H)
    return divmod(int(scores.argmax()), attentions.shape[1])


def test_previous_word_check_passes_the_reference_and_refuses_a_plain_answer(capsys):
    maps = planted_maps()
    assert reference_previous_word_head(maps) == (1, 2)
    H.check_previous_word_head(reference_previous_word_head, maps)
    assert capsys.readouterr().out.startswith("✓")
    H.check_previous_word_head((1, 2), maps)  # a fixed answer cannot be tried on a second set of maps
    assert "expected a function" in capsys.readouterr().out


def _diagonal_head(offset):
    return lambda a: divmod(int(a.diagonal(offset, -2, -1).mean(-1).argmax()), a.shape[1])


@pytest.mark.parametrize("answer, words", [
    (_diagonal_head(0), "itself"),
    (lambda a: tuple(reversed(reference_previous_word_head(a))), "swapped layer and head"),
    (_diagonal_head(1), "the word after (offset=+1)"),
    (lambda a: divmod(int(a.diagonal(-1, -2, -1).mean(-1).argmax()), a.shape[0]), "number of layers"),
    ((5, 0), "no head"),
    ("L1H2", "expected (layer, head)"),
    (lambda a: None, "not attempted"),
    (lambda a: 1 / 0, "ZeroDivisionError"),
])
def test_previous_word_check_names_the_mistake(capsys, answer, words):
    fn = answer if callable(answer) else (lambda a: answer)
    assert not H.check_previous_word_head(fn, planted_maps()).passed
    assert words in capsys.readouterr().out


def repeated_run(lm):
    return H.run_sentence(lm, "list : red mat . again : red mat .")  # 10 tokens: fits n_ctx=12


def test_induction_prediction_points_after_the_earlier_copy():
    tokens = ["<bos>", "a", "b", "c", "a", "b", "c"]
    pattern = H.induction_prediction(tokens)
    assert pattern.shape == (7, 7) and (pattern.sum(-1) == 1).all()
    assert [int(pattern[q].argmax()) for q in range(7)] == [0, 0, 0, 0, 2, 3, 4]


def test_induction_check_passes_the_reference(lm, capsys):
    run = repeated_run(lm)
    H.check_induction_prediction(H.induction_prediction, run)
    assert "✓" in capsys.readouterr().out


def test_induction_check_names_the_mistakes(lm, capsys):
    run = repeated_run(lm)

    def copy_itself(tokens):
        want = H.induction_prediction(tokens)
        return np.roll(want, -1, axis=1)  # one key earlier: the copy itself

    def previous(tokens):
        return np.eye(len(tokens), k=-1)

    H.check_induction_prediction(copy_itself, run)
    assert "earlier copy itself" in capsys.readouterr().out
    H.check_induction_prediction(previous, run)
    assert "previous word" in capsys.readouterr().out
    H.check_induction_prediction(lambda tokens: ..., run)
    assert "not attempted" in capsys.readouterr().out
    H.check_induction_prediction(lambda tokens: np.zeros((3, 3)), run)
    assert "shape" in capsys.readouterr().out
