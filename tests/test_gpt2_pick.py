"""pick_model: the notebooks' one-line switch, and what it does when GPT-2 cannot be had."""

from __future__ import annotations

import pytest
from test_gpt2_fakes import fake_gpt2_folder

import helpers
from helpers.core import catalog, gpt2


@pytest.fixture
def offline_empty(monkeypatch, tmp_path):
    """No GPT-2 anywhere and no network allowed."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv(gpt2.DIR_ENV, str(tmp_path / "nothing-here"))
    monkeypatch.delenv(gpt2.VERIFY_ENV, raising=False)
    monkeypatch.setattr(gpt2, "_from_hf_cache", lambda name: None)
    return tmp_path / "nothing-here"


def test_helpers_exports_the_switch():
    assert helpers.pick_model is catalog.pick_model and helpers.drop_first_token is gpt2.drop_first_token


def test_offline_gpt2_falls_back_with_one_line(offline_empty, monkeypatch, capsys):
    stand_in = object()
    asked = []
    monkeypatch.setattr(catalog, "load_model", lambda name: asked.append(name) or stand_in)
    assert catalog.pick_model("gpt2") is stand_in and asked == ["classroom"]
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 1
    assert "548 MB" in lines[0] and str(offline_empty) in lines[0] and "classroom" in lines[0]


def test_load_model_gpt2_offline_raises_the_line(offline_empty):
    with pytest.raises(FileNotFoundError, match="548 MB"):
        catalog.load_model("gpt2")


def test_other_names_go_straight_to_the_catalog(monkeypatch):
    monkeypatch.setattr(catalog, "load_model", lambda name: f"loaded {name}")
    assert catalog.pick_model("heads-4") == "loaded heads-4"


def test_pick_model_gpt2_loads_a_folder_from_the_environment(tmp_path, monkeypatch):
    pytest.importorskip("tokenizers")
    monkeypatch.setenv(gpt2.DIR_ENV, str(fake_gpt2_folder(tmp_path / "drive", n_embd=12)))
    monkeypatch.setenv(gpt2.VERIFY_ENV, "0")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    lm = catalog.pick_model("gpt2")
    assert lm.name == "gpt2" and lm.tokenizer.encode("I like to draw") == [50256, 40, 588, 284, 3197]
    run = helpers.run_sentence(lm, "I like to draw")
    assert run.tokens[1:] == ["I", " like", " to", " draw"]
    assert tuple(run.attentions.shape) == (12, 12, 5, 5) and tuple(run.logits.shape) == (5, 50257)


def test_offline_gpt2_falls_back_to_the_real_classroom_model(offline_empty, capsys):
    if "classroom" not in catalog.shipped_models():
        pytest.skip("data/models.json has no 'classroom' model yet (python -m helpers.train classroom)")
    lm = catalog.pick_model("gpt2")
    assert lm.name == "classroom"
    assert "548 MB" in capsys.readouterr().out
