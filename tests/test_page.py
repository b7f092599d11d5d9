"""The offline web page (H.export_page): its data are the model's maps, it is small, and bad input
is refused with one line before anything is written."""

from __future__ import annotations

import base64
import re

import numpy as np
import pytest
import torch

from matplotlib.figure import Figure

import helpers as H
from helpers.core.gpt2 import load_gpt2
from helpers.core.language import vocabulary
from helpers.core.model import GPT, GPTConfig, LanguageModel
from helpers.core.tokenizer import WordTokenizer
from helpers.figures import deck, webpage
from helpers.figures.page import PRECISION, export_page, page_data, page_html, quantise, read_page
from helpers.widgets.explorer import Explorer
from test_gpt2_fakes import fake_gpt2_folder

SENTENCES = ["I like to draw my picture . the cat near these big dogs is tired .",  # 17 tokens with <bos>
             "list : red mat old fox . again : red mat old fox .",
             "the girl sat on the mat because she was tired . the boy"]


def one_line(_models) -> Figure:
    fig = Figure(figsize=(8, 4.5), layout="constrained")
    fig.add_subplot().plot([0, 1], [1, 0])
    return fig


@pytest.fixture(scope="module")
def classroom():
    return H.load_model("classroom")


@pytest.fixture(scope="module")
def page(classroom, tmp_path_factory):
    return H.export_page(classroom, SENTENCES, folder=tmp_path_factory.mktemp("page"))


@pytest.fixture(scope="module")
def tiny():
    torch.manual_seed(0)
    config = GPTConfig(vocab_size=len(vocabulary()), n_ctx=12, n_layer=3, n_head=2, n_embd=16)
    return LanguageModel("tiny", GPT(config).eval(), WordTokenizer(vocabulary()))


def test_every_map_on_the_page_is_the_models_to_the_stated_precision(classroom, page):
    data = read_page(page)
    assert (data["model"], data["layers"], data["heads"]) == ("classroom", 12, 12)
    assert [s["text"] for s in data["sentences"]] == SENTENCES
    for sentence, text in zip(data["sentences"], SENTENCES):
        run = H.run_sentence(classroom, text)
        assert sentence["tokens"] == run.tokens
        assert sentence["weights"].shape == tuple(run.attentions.shape)
        error = np.abs(sentence["weights"] - run.attentions.numpy()).max()
        assert error <= PRECISION + 1e-6, f"{text!r}: a stored weight is {error:.4f} away from the model's"
        assert len(sentence["head_captions"]) == 144 and sentence["head_captions"][0].startswith("Layer 0, head 0: ")
    assert data["precision"] == pytest.approx(0.5 / 255)


def test_three_classroom_sentences_fit_in_5_mb_with_the_model_and_load_nothing(classroom, page, tmp_path):
    twenty = ["I like to draw my picture . the cat near these big dogs is tired . the girl sat",
              "list : red mat old fox . again : red mat old fox . list : red mat old",
              "the girl sat on the mat because she was tired . the boy sat on the mat because"]
    longest = H.export_page(classroom, twenty, folder=tmp_path)
    assert [len(s["tokens"]) for s in read_page(longest)["sentences"]] == [20, 20, 19]
    assert 3_700_000 <= longest.stat().st_size <= 4_100_000  # the README's "about 3.9 MB"; the bound is 5 MB
    weights = webpage.read_script_json(longest.read_text(encoding="utf-8"), "model-data")[0]["weights"]
    assert 3_550_000 <= len(weights) <= 3_650_000  # "3.6 MB of the file": the 16-bit weights in base64
    maps_only = H.export_page(classroom, twenty, name="maps_only", folder=tmp_path, live=False)
    assert maps_only.stat().st_size <= 320_000  # about 0.30 MB
    text = page.read_text(encoding="utf-8")
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text)  # no script, style or font from a host
    assert "@import" not in text and "url(" not in text
    assert "default-src 'none'" in text  # and the browser is told to refuse any request


def test_the_page_opens_at_the_chosen_head(tiny, tmp_path):
    path = export_page(tiny, "I like to draw", name="start.html", folder=tmp_path, layer=2, head=1)
    assert path == tmp_path / "start.html" and read_page(path)["start"] == [2, 1]


def test_quantise_rounds_to_bytes():
    assert quantise(np.array([0.0, 0.5, 1.0, 1 / 255 * 0.49, -0.1, 1.2])).tolist() == [0, 128, 255, 0, 0, 255]


def test_a_sentence_cannot_close_the_script(tiny, tmp_path):
    """Words are data, never markup: '</script>' in a token stays inside the JSON."""
    data = page_data(tiny, ["I like to draw"])
    data["sentences"][0]["tokens"][1] = "</script><b>"
    text = page_html(data)
    assert text.count("</script>") == 6 and "\\u003c/script>\\u003cb>" in text  # 2 data blocks, 4 scripts


@pytest.mark.parametrize("sentences, words", [
    ([], "not a list of sentences"),
    ("", "not a list of sentences"),
    (["I like to draw", "   "], "not a list of sentences"),
    (["I like zebras"], "Sentence 1 of 1"),
    (["I like to draw", "the cat " * 10], "Sentence 2 of 2"),
    (None, "not a list of sentences"),
    (b"I like to draw", "not a list of sentences"),
    ([b"I like to draw"], "not a list of sentences"),
])
def test_bad_sentences_are_refused_in_one_line_and_nothing_is_written(tiny, tmp_path, sentences, words):
    with pytest.raises(ValueError) as err:
        export_page(tiny, sentences, folder=tmp_path / "out")
    assert words in str(err.value) and "\n" not in str(err.value)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("name", ["../escape", "sub/page", "a/../b", "", ".hidden", 3])
def test_a_name_with_a_folder_is_refused(tiny, tmp_path, name):
    with pytest.raises(ValueError, match="plain file name") as err:
        export_page(tiny, ["I like to draw"], name=name, folder=tmp_path / "out")
    assert "\n" not in str(err.value)
    assert not (tmp_path / "out").exists() and not (tmp_path / "escape.html").exists()


@pytest.mark.parametrize("layer, head, words", [(3, 0, "layers 0..2"), (0, 2, "heads 0..1"), (1.0, 0, "whole number")])
def test_a_missing_head_is_refused(tiny, tmp_path, layer, head, words):
    with pytest.raises(ValueError, match=re.escape(words)):
        export_page(tiny, ["I like to draw"], folder=tmp_path, layer=layer, head=head)
    assert list(tmp_path.iterdir()) == []


def test_not_a_model_is_refused(tmp_path):
    with pytest.raises(ValueError, match="is not a model"):
        export_page("classroom", ["I like to draw"], folder=tmp_path)


def test_an_unwritable_place_leaves_no_file(tiny, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(ValueError, match="is a file, not a folder") as err:
        export_page(tiny, ["I like to draw"], folder=blocker)
    assert "\n" not in str(err.value)
    with pytest.raises(ValueError) as err:  # a folder that cannot be made: refused before the model runs
        export_page(tiny, ["I like to draw"], folder=blocker / "sub")
    assert "\n" not in str(err.value) and f"{blocker} is a file, not a folder" in str(err.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def test_a_read_only_page_is_not_replaced(tiny, tmp_path):
    old = tmp_path / "all_heads.html"
    old.write_text("keep me")
    old.chmod(0o444)
    with pytest.raises(PermissionError, match="read-only"):
        export_page(tiny, ["I like to draw"], folder=tmp_path)
    assert old.read_text() == "keep me" and [p.name for p in tmp_path.iterdir()] == ["all_heads.html"]


def test_the_explorer_exports_the_sentences_it_showed(tiny, tmp_path):
    explorer = Explorer(tiny, "I like to draw", layer=1, head=1, folder=tmp_path)
    assert explorer.set_sentence("the cat is tired .")
    explorer.page_button.click()
    path = tmp_path / "tiny_all_heads.html"
    data = read_page(path)
    assert [s["text"] for s in data["sentences"]] == ["the cat is tired .", "I like to draw"]  # current first
    assert data["start"] == [1, 1] and "no internet needed" in explorer.export_note.value
    (tmp_path / "file").write_text("not a folder")
    assert explorer.export_web_page(tmp_path / "file") is None
    assert "is a file, not a folder" in explorer.error and "nothing was written" in explorer.status.value


def test_the_deck_can_include_the_page(classroom, tmp_path):
    models = deck.Models()
    models.classroom = classroom  # the cached model: no second load
    pdf, _ = deck.export_deck(tmp_path, slides=[deck.Slide("01_line", one_line)], models=models, page=True)
    data = read_page(tmp_path / "all_heads.html")
    assert pdf.is_file() and [s["text"] for s in data["sentences"]] == [deck.DRAW, deck.LIST]


def test_a_gpt2_page_shows_the_tokens_as_gpt2_writes_them(tmp_path, monkeypatch):
    """GPT-2's vocabulary and tokenizer with tiny random weights (no download): the page holds
    GPT-2's own token strings, <|endoftext|> first, and its maps are the model's."""
    monkeypatch.setenv("HELPERS_GPT2_VERIFY", "0")
    lm = load_gpt2(fake_gpt2_folder(tmp_path / "gpt2"))
    path = export_page(lm, ["I like to draw", "The cat sat."], folder=tmp_path)
    data = read_page(path)
    run = H.run_sentence(lm, "I like to draw")
    assert data["sentences"][0]["tokens"] == run.tokens == ["<|endoftext|>", "I", " like", " to", " draw"]
    assert np.abs(data["sentences"][0]["weights"] - run.attentions.numpy()).max() <= PRECISION + 1e-6


def test_a_classroom_page_carries_its_model_exactly(classroom, page):
    """The page's weights are the model's: 16 bits lose nothing, the shipped files are 16-bit."""
    text = page.read_text(encoding="utf-8")
    [spec] = webpage.read_script_json(text, "model-data")
    values = np.frombuffer(base64.b64decode(spec["weights"]), dtype="<f2").astype(np.float32)
    for name, tensor in classroom.model.state_dict().items():
        offset, shape = spec["tensors"][name]
        stored = values[offset:offset + tensor.numel()].reshape(shape)
        assert np.array_equal(stored, tensor.numpy()), name
    assert spec["vocab"] == classroom.tokenizer.vocab and spec["config"]["n_kv_head"] == 12
    assert spec["numbers"]["held_out_loss"] == classroom.info["held_out_loss"]
    assert "runs classroom itself" in read_page(page)["about"]
    # the loaded-whole check, model, live, viewer: each by its hash
    assert text.count("<script>") == 4 and "unsafe-eval" not in text
    assert len(webpage.script_hashes(text)) == 4 and all(h in text for h in webpage.script_hashes(text))


def test_a_gpt2_page_stays_precomputed_and_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("HELPERS_GPT2_VERIFY", "0")
    lm = load_gpt2(fake_gpt2_folder(tmp_path / "gpt2"))
    path = export_page(lm, ["I like to draw"], folder=tmp_path)
    assert webpage.read_script_json(path.read_text(encoding="utf-8"), "model-data") == []
    assert "does not run here" in read_page(path)["about"]
    with pytest.raises(ValueError, match="cannot run in a page") as err:
        export_page(lm, ["I like to draw"], name="live", folder=tmp_path, live=True)
    assert "\n" not in str(err.value) and not (tmp_path / "live.html").exists()


def test_a_slider_page_is_refused_for_an_unknown_slider(tmp_path):
    with pytest.raises(ValueError, match="choose 'heads'"):
        H.export_slider_page("layers", ["I like to draw"], folder=tmp_path)
    assert list(tmp_path.iterdir()) == []
