"""Training: a seconds-long recipe learns, deterministically."""

import dataclasses
import math
import re

import pytest
import torch

from helpers import train
from helpers.core import catalog, evaluation, language
from helpers.core.tokenizer import WordTokenizer


@pytest.fixture(scope="module")
def tiny():
    return train.train("tiny", progress=False)


def test_tiny_training_lowers_the_loss(tiny):
    _, info = tiny
    chance = math.log(len(language.vocabulary()))
    assert info["held_out_loss"] < chance - 2.0, info  # from ~5.2 (uniform guessing) to well below


def test_training_is_deterministic(tiny):
    model, _ = tiny
    again, _ = train.train("tiny", progress=False)
    for (name, a), (_, b) in zip(model.state_dict().items(), again.state_dict().items()):
        assert torch.equal(a, b), name


def test_a_model_trained_again_is_the_same_file(tiny, tmp_path):
    """The file holds only what the recipe determines: its sha256 repeats; the run's timings go to the manifest."""
    model, info = tiny
    again, info_again = train.train("tiny", progress=False)
    for folder, (m, i) in (("a", (model, info)), ("b", (again, info_again))):
        catalog.record_model("tiny", m, train.RECIPES["tiny"].words, i, tmp_path / folder / "tiny.safetensors")
    first, second = (catalog.manifest(tmp_path / f / "models.json")["tiny"] for f in "ab")
    assert first["sha256"] == second["sha256"] and first["bytes"] == second["bytes"]
    assert "train_seconds" in first["info"]
    loaded = catalog.load_model("tiny", data_dir=tmp_path / "a")
    assert "train_seconds" not in loaded.info and loaded.info["held_out_loss"] == info["held_out_loss"]



def test_training_a_model_again_keeps_its_lines_records_of_other_runs(tiny, tmp_path):
    """Seeds, snapshots and formation seeds are other runs' records: a retrained model keeps them (notebooks 04,
    07 and 08 read them). Its own measurements stay while the bytes are the same, and go when they change."""
    model, info = tiny
    path = tmp_path / "tiny.safetensors"
    catalog.record_model("tiny", model, train.RECIPES["tiny"].words, info, path)
    others = {"seeds": {"11": {"held_out_loss": 2.0}}, "formation_seeds": {"12": {"step": 3}},
              "snapshots": {"file": "tiny-snapshots.safetensors", "sha256": "0" * 64, "bytes": 1}}
    entries = catalog.manifest(path.parent / "models.json")
    entries["tiny"].update(others, merged_held_out_loss={"2": 3.0})
    catalog.write_manifest(entries, path.parent / "models.json")
    catalog.record_model("tiny", model, train.RECIPES["tiny"].words, info, path)  # the same bytes
    line = catalog.manifest(path.parent / "models.json")["tiny"]
    assert {key: line[key] for key in others} == others and line["merged_held_out_loss"] == {"2": 3.0}
    changed, changed_info = train.train("tiny", progress=False, recipe=dataclasses.replace(train.RECIPES["tiny"],
                                                                                             seed=99))
    catalog.record_model("tiny", changed, train.RECIPES["tiny"].words, changed_info, path)  # other bytes
    line = catalog.manifest(path.parent / "models.json")["tiny"]
    assert {key: line[key] for key in others} == others and "merged_held_out_loss" not in line


def test_a_folder_of_ones_own_gets_its_own_fixes(tiny, tmp_path):
    """Not `git checkout -- data/...` nor the shipped names: the model trained again into that folder."""
    model, info = tiny
    path = tmp_path / "mine" / "tiny.safetensors"
    catalog.record_model("tiny", model, train.RECIPES["tiny"].words, info, path)
    with pytest.raises(ValueError, match=re.escape(f"No model named 'classroom' in {path.parent / 'models.json'}; "
                                                   f"choose one of tiny.")):
        catalog.load_model("classroom", data_dir=path.parent)
    data = bytearray(path.read_bytes())
    data[-5] ^= 1
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match=re.escape(f"`python -m helpers.train tiny --out {path}`.")) as err:
        catalog.load_model("tiny", data_dir=path.parent)
    assert "git checkout" not in str(err.value)


def test_training_runs_on_the_recipes_thread_count_and_restores_the_callers(monkeypatch):
    seen = []
    monkeypatch.setattr(train, "_train", lambda *args: seen.append(torch.get_num_threads()))
    monkeypatch.setitem(train.RECIPES, "tiny", dataclasses.replace(train.RECIPES["tiny"], threads=2))
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        train.train("tiny")
        assert seen == [2] and torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)


def test_a_recipe_passed_in_replaces_the_named_one(tiny):
    model, _ = tiny
    recipe = dataclasses.replace(train.RECIPES["tiny"], weight_decay=0.5)  # same seed, stronger weight decay
    other, info = train.train("tiny", progress=False, recipe=recipe)
    assert info["seed"] == train.RECIPES["tiny"].seed
    assert not torch.equal(model.wte.weight, other.wte.weight)


def test_learning_rate_warms_up_then_decays():
    recipe = train.RECIPES["tiny"]
    rates = [train.learning_rate(s, 100, recipe) for s in range(100)]
    assert rates[0] < rates[recipe.warmup - 1] == pytest.approx(recipe.lr)
    assert rates[-1] == pytest.approx(0.1 * recipe.lr, rel=0.05)


def test_unknown_recipe_is_refused():
    with pytest.raises(ValueError, match="choose one of"):
        train.train("huge")


def test_relay_only_batches_hold_one_long_relay_game():
    tokenizer = WordTokenizer(language.vocabulary(relay=True))
    ids, stories = evaluation.story_batch(language.StoryWriter(0), tokenizer, 4, 0.5, relay_only=True)
    assert ids.shape == (4, evaluation.N_CTX)
    assert all(s.tokens[1:3] == ["relay", ":"] and len(s.forced["relay"]) > 40 for s in stories)


def test_a_damaged_model_list_of_ones_own_is_not_sent_to_git(tmp_path):
    """`train --out "my models/t.safetensors"` over a damaged my models/models.json said to restore data/models.json
    with git (sweep 14, D39): that file is the teacher's own."""
    (tmp_path / "models.json").write_text("not json")
    with pytest.raises(ValueError, match=re.escape(f"The model list {tmp_path / 'models.json'} is damaged (not valid "
                                                   f"JSON: Expecting value: line 1 column 1 (char 0)); move it away (a "
                                                   f"new one is started) or restore it from your own copy.")):
        catalog.manifest(tmp_path / "models.json")


def test_a_ctrl_c_before_the_first_step_is_one_line(tmp_path, monkeypatch, capsys):
    """A KeyboardInterrupt's text is empty: the line was an empty one (sweep 25, train_ctrl_c_early)."""
    def stopped(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(train, "train_and_record", stopped)
    with pytest.raises(SystemExit) as ended:
        train.main(["tiny", "--out", str(tmp_path / "tiny.safetensors")])
    assert ended.value.code == 130
    assert capsys.readouterr().err == "stopped (Ctrl-C) before training started; nothing written\n"
