"""Notebook 08's snapshots and measurements: the file is reproducible, fp16 keeps the maps, the shipped
record is what its weights measure, and the formation step, order and bump come from code."""

import dataclasses
import json

import numpy as np
import pytest
import torch

from helpers import train
from helpers.analysis import formation as F
from helpers.core import catalog
from helpers.core.evaluation import held_out_stories
from helpers.core.snapshots import (DENSE_FROM, DENSE_TO, load_snapshots, read_snapshots, save_snapshots,
                                    snapshot_state, snapshot_steps)
from helpers.core.weights import sha256

SHORT = dataclasses.replace(train.RECIPES["tiny"], tokens=16 * 64 * 4)  # 4 steps, 5 snapshots: seconds


def test_snapshot_steps_run_from_0_to_the_end_and_are_dense_where_the_heads_form():
    steps = snapshot_steps(1953)
    assert steps[0] == 0 and steps[-1] == 1953 and 20 <= len(steps) <= 40 and steps == sorted(set(steps))
    dense = [s for s in steps if DENSE_FROM * 1953 <= s <= DENSE_TO * 1953]
    assert dense == list(range(408, 961, 24))  # every 24 steps from 408 to 960, as notebook 08 says
    assert snapshot_steps(4) == [0, 1, 2, 3, 4]


def test_a_short_run_with_snapshots_trained_twice_gives_the_same_bytes(tmp_path):
    entries = [train.train_snapshots("tiny", tmp_path / f / "tiny-snapshots.safetensors", progress=False,
                                     recipe=SHORT) for f in "ab"]
    files = [tmp_path / f / "tiny-snapshots.safetensors" for f in "ab"]
    assert files[0].read_bytes() == files[1].read_bytes()
    assert entries[0]["sha256"] == entries[1]["sha256"] == sha256(files[0])
    listed = catalog.manifest(tmp_path / "a" / "models.json")["tiny"]["snapshots"]
    assert listed["steps"] == snapshot_steps(4) and listed["command"] == "python -m helpers.train tiny --snapshots"
    run = load_snapshots("tiny", tmp_path / "a")
    assert run.steps == snapshot_steps(4) and set(run.measured) == {"curves", "knockouts"}


def test_a_damaged_snapshot_file_is_one_line(tmp_path):
    model, _ = train.train("x", progress=False, recipe=dataclasses.replace(SHORT, tokens=16 * 64))
    path = tmp_path / "tiny-snapshots.safetensors"
    digest = save_snapshots({0: snapshot_state(model)}, path, model.config, SHORT.words, {})
    path.write_bytes(path.read_bytes()[:-10] + b"0" * 10)
    with pytest.raises(ValueError, match="corrupted") as err:
        read_snapshots(path, digest)
    assert "\n" not in str(err.value)
    with pytest.raises(ValueError, match="lists no snapshots of 'heads-1'"):
        load_snapshots("heads-1")


def test_fp16_snapshots_keep_every_map_within_0_01():
    """The file keeps fp16 weights; the fp32 weights of the same moment give maps within 0.01 (10 steps
    of heads-12's recipe, and the tiny recipe to its end)."""
    for recipe in (dataclasses.replace(train.RECIPES["heads-12"], tokens=10 * 2048), SHORT):
        states = {}
        model, _ = train.train("x", progress=False, recipe=recipe, snapshots=states)
        run = F.SnapshotRun("x", sorted(states), model.config, recipe.words, {"tokens_per_step": 1}, states)
        ids = F.Probe(recipe.words, 16).ids
        with torch.no_grad():
            full, half = model(ids).attentions, run.model_at(run.steps[-1]).model(ids).attentions
        assert (full - half).abs().max() < 0.01


@pytest.fixture(scope="module")
def shipped():
    return load_snapshots("induction"), F.shipped_record("induction")


def test_the_shipped_file_is_listed_with_its_checksum_and_size(shipped):
    entry = catalog.manifest()["induction"]["snapshots"]
    path = catalog.DATA_DIR / entry["file"]
    assert sha256(path) == entry["sha256"] and path.stat().st_size == entry["bytes"]
    readme = (catalog.DATA_DIR / "README.md").read_text()
    assert entry["sha256"] in readme and entry["command"] in readme
    total = sum(p.stat().st_size for p in catalog.DATA_DIR.rglob("*") if p.is_file())
    assert total <= 50 * 1024 * 1024


@pytest.mark.parametrize("step", [0, 552, 648, 1953])
def test_the_record_is_what_the_shipped_weights_measure(shipped, step):
    run, record = shipped
    i = run.steps.index(step)
    again = F.step_numbers(run.model_at(step))
    for key, value in again.items():
        assert np.allclose(record["curves"][key][i], value, atol=2e-6), key
    heads = record["knockouts"]["heads"]
    lm = run.model_at(step)
    for which in ("previous", "needed"):
        knocked = record["knockouts"][which]
        assert abs(knocked["accuracy_without"][i] - F.forced_accuracy(lm, "induction", [heads[which]])) < 2e-6
        assert abs(knocked["score_without"][i] - F.forced_scores(lm, "induction", [heads[which]])[heads["watched"]]) < 2e-6


def test_the_needed_head_is_the_layer0_head_whose_removal_costs_most_at_the_end(shipped):
    run, record = shipped
    costs = F.layer0_knockouts(run.model_at(run.steps[-1]))
    assert record["knockouts"]["heads"]["needed"] == (0, int(np.argmin(costs)))


def test_formation_is_found_by_code_on_the_shipped_snapshots(shipped):
    _, record = shipped
    c = record["curves"]
    found = F.formation(c)
    best = c["induction"].reshape(len(c["steps"]), -1).max(1)
    i = list(c["steps"]).index(found["step"])
    assert best[i] >= F.THRESHOLD > best[:i].max()  # the first snapshot at 0.5, none before it
    assert found["head"] == (1, 0) and found["step"] == 648 and found["beats_baseline"]
    prev = c["previous_list"][:, 0].max(1)  # layer 0's best previous-word score at each snapshot
    j = list(c["steps"]).index(found["previous_step"])
    assert prev[j] >= F.THRESHOLD > prev[:j].max() and found["previous_first"]  # it forms first
    assert found["bump"] and F.bump_ratio(c, found["step"]) >= F.BUMP_FACTOR


def test_steepest_rise_and_first_crossing_differ_as_the_exercise_says():
    steps, scores = [0, 10, 20, 40, 80], [0.0, 0.1, 0.4, 0.45, 0.9]
    assert F.first_step_above(steps, scores) == 80 and F.steepest_rise(steps, scores) == 20
    assert F.first_step_above(steps, [0.1] * 5) is None


def test_a_probe_does_not_change_training():
    """The live cell probes the model while it trains: the weights come out the same as without probes."""
    recipe = SHORT
    probe = F.Probe(recipe.words, 4)
    plain, _ = train.train("x", progress=False, recipe=recipe)
    probed, _ = train.train("x", progress=False, recipe=recipe, on_step=lambda step, steps, loss, m: probe(m))
    for a, b in zip(plain.state_dict().values(), probed.state_dict().values()):
        assert torch.equal(a, b)


def test_records_round_trip_through_json():
    record = {"curves": {"steps": np.array([0, 5]), "loss": np.array([1.0, 0.5])},
              "knockouts": {"heads": {"previous": (0, 9)}}}
    back = F.as_arrays(json.loads(json.dumps(F.as_lists(record))))
    assert back["curves"]["steps"].dtype == np.int64 and back["knockouts"]["heads"]["previous"] == (0, 9)
    assert held_out_stories(2, markers=False)[0].tokens == F.Probe(train.RECIPES["tiny"].words, 2).stories[0].tokens


def test_the_command_writes_the_snapshots_and_their_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(train.RECIPES, "tiny", SHORT)
    out = tmp_path / "tiny-snapshots.safetensors"
    train.main(["tiny", "--snapshots", "--out", str(out)])
    entry = catalog.manifest(tmp_path / "models.json")["tiny"]["snapshots"]
    assert entry["sha256"] == sha256(out) and entry["file"] == out.name and "sha256" in capsys.readouterr().out
    assert not (tmp_path / "tiny.safetensors").exists()  # the model file itself is not written
