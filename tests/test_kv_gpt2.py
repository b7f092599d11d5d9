"""Notebook 07 §5 with MODEL = "gpt2": GPT-2 small's key and value heads mean-pooled, measured on a paragraph.

No GPT-2 weights are here, so the numbers are not asserted: the stand-in GPT-2 of test_gpt2_fakes (GPT-2's
vocabulary and 12 × 12 heads, width 24) checks shapes, that pooling to 12 changes nothing, that the loss is
finite, and that what §5's GPT-2 paragraph says about the measurement holds.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import nbformat
import pytest
import torch
from matplotlib.figure import Figure
from test_gpt2_fakes import fake_gpt2_folder

import helpers as H
from helpers.analysis import kvheads
from helpers.core import gpt2

pytest.importorskip("tokenizers")
NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"


@pytest.fixture(scope="module")
def fake_dir(tmp_path_factory):
    return fake_gpt2_folder(tmp_path_factory.mktemp("fake-gpt2"))


@pytest.fixture(scope="module")
def stand_in(fake_dir):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(gpt2.VERIFY_ENV, "0")  # lets the stand-in past the checksum meant for the real file
        return gpt2.load_gpt2(fake_dir)


@pytest.fixture(scope="module")
def pooling(stand_in):
    return H.pooling_on_text(stand_in)


def test_every_count_that_divides_the_heads_is_measured(pooling, stand_in):
    L, n_head = stand_in.config.n_layer, stand_in.config.n_head
    assert list(pooling) == [1, 2, 3, 4, 6, 12] == list(H.KV_COUNTS)
    for r in pooling.values():
        assert r["map_change"].shape == (L, n_head) and math.isfinite(r["loss"]) and r["loss"] > 0
        assert ((r["map_change"] >= -1e-6) & (r["map_change"] <= 1 + 1e-6)).all()
        assert r["mean_change"] == pytest.approx(r["map_change"].mean().item())


def test_pooling_to_12_changes_nothing(pooling, stand_in):
    assert torch.equal(pooling[12]["map_change"], torch.zeros(12, 12))
    assert pooling[12]["loss"] == kvheads.text_loss(stand_in, kvheads.POOL_TEXT)[0]
    ids = torch.tensor([stand_in.tokenizer.encode(kvheads.POOL_SENTENCE)])
    assert torch.equal(H.pooled_model(stand_in, 12)(ids).logits, stand_in.model(ids).logits)


def test_pooling_moves_the_maps_of_a_model_whose_heads_differ(pooling):
    assert all(pooling[n]["map_change"].max() > 0 for n in (1, 2, 3, 4, 6))


def test_the_loss_is_the_mean_next_token_cross_entropy(stand_in):
    ids = stand_in.tokenizer.encode(kvheads.POOL_TEXT)
    logits = stand_in.model(torch.tensor([ids])).logits[0]
    by_hand = -logits[:-1].log_softmax(-1)[torch.arange(len(ids) - 1), torch.tensor(ids[1:])].mean()
    loss, tokens = kvheads.text_loss(stand_in, kvheads.POOL_TEXT)
    assert tokens == len(ids) and loss == pytest.approx(by_hand.item(), abs=1e-5)


def test_the_paragraph_and_sentence_are_a_few_english_sentences(stand_in):
    """§5: "One paragraph of about 80 tokens"; the maps are read on one sentence (with repeated words)."""
    tokens = kvheads.text_loss(stand_in, kvheads.POOL_TEXT)[1]
    assert 70 <= tokens <= 90 and kvheads.POOL_TEXT.count(". ") >= 3
    words = kvheads.POOL_SENTENCE.split()
    assert len(stand_in.tokenizer.encode(kvheads.POOL_SENTENCE)) < 40 and len(set(words)) < len(words)


def test_the_description_and_figure(pooling):
    text = H.pooling_table(pooling)
    lines = text.splitlines()
    assert len(lines) == 7 and "NOT retrained" in lines[0] and "(80 tokens)" in lines[0]
    assert lines[1].startswith(" 12 key/value heads:") and "(+0.000)" in lines[1] and "as before" in lines[1]
    assert lines[-1].startswith("  1 key/value head :") and "most L" in lines[-1]
    fig = H.plot_pooling_on_text(pooling)
    assert isinstance(fig, Figure) and len(fig.axes) == 2
    assert len(fig.axes[1].get_lines()) == 5  # one line per count below 12


def test_pool_source_follows_the_switch(fake_dir, tmp_path, monkeypatch, capsys):
    assert H.pool_source("classroom") is kvheads.load_kv_variant(12)
    monkeypatch.setenv(gpt2.DIR_ENV, str(fake_dir))
    monkeypatch.setenv(gpt2.VERIFY_ENV, "0")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert H.pool_source("gpt2").name == "gpt2"
    monkeypatch.setenv(gpt2.DIR_ENV, str(tmp_path / "no-gpt2-here"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-hf-cache"))
    capsys.readouterr()
    assert H.pool_source("gpt2") is kvheads.load_kv_variant(12)  # offline: one line, then the classroom kv-12
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 1 and "548 MB" in lines[0]
    with pytest.raises(ValueError, match="use 'classroom'") as err:
        H.pool_source("heads-12")
    assert "\n" not in str(err.value)


def test_what_the_gpt2_paragraph_of_section_5_points_at(stand_in, pooling):
    """§5's GPT-2 paragraph: the code it suggests runs, and the heads it names are the ones notebook 06 names."""
    cell = next(c.source for c in nbformat.read(NOTEBOOKS / "07_shared_keys_and_values.ipynb", as_version=4).cells
                if c.get("id") == "c24-gpt2")
    assert 'pooling[3]["map_change"][5, 5]' in cell and 'H.pooling_on_text(source, text="…")' in cell
    assert 0 <= pooling[3]["map_change"][5, 5] <= 1
    other = H.pooling_on_text(stand_in, text="A different text, written to try the function once more.")
    assert other[12]["tokens"] < pooling[12]["tokens"] and other[6]["loss"] != pooling[6]["loss"]
    named = {"L2 H2", "L4 H11", "L5 H5", "L5 H8", "L5 H9", "L6 H9"}  # 06's previous-token and induction heads
    six = " ".join(c.source for c in nbformat.read(NOTEBOOKS / "06_what_each_head_learns.ipynb", as_version=4).cells)
    assert set(re.findall(r"L\d+ H\d+", cell)) == named
    assert "previous-token heads L4 H11 and L2 H2, induction heads L5 H5, L5 H8, L5 H9 and L6 H9" in six
    assert re.findall(r"\d+\.\d+", cell) == ["2.7"]  # e ≈ 2.7, and no GPT-2 result stated as a fact
