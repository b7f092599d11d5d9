"""Acceptance tests on the weights shipped in data/ (the classroom-models issue)."""

import shutil

import pytest

from helpers.analysis.relations import relation_scores
from helpers.core import catalog
from helpers.core import evaluation as train
from helpers.core.language import FORCED
from helpers.core.weights import sha256

SHIPPED = catalog.manifest()
needs = lambda name: pytest.mark.skipif(name not in SHIPPED, reason=f"{name} is not in data/models.json yet")  # noqa: E731


def test_data_stays_within_budget():
    total = sum(p.stat().st_size for p in catalog.DATA_DIR.rglob("*") if p.is_file())
    assert total <= 50 * 1024 * 1024, f"data/ holds {total / 1e6:.1f} MB"


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_shipped_file_matches_its_manifest_line(name):
    entry = SHIPPED[name]
    path = catalog.DATA_DIR / entry["file"]
    assert sha256(path) == entry["sha256"] and path.stat().st_size == entry["bytes"]
    lm = catalog.load_model(name)
    assert lm.model.config.to_dict() == entry["config"]
    assert lm.info["held_out_loss"] == entry["info"]["held_out_loss"]


def test_data_readme_lists_every_file():
    readme = (catalog.DATA_DIR / "README.md").read_text()
    for entry in SHIPPED.values():
        assert entry["sha256"] in readme and entry["command"] in readme


@pytest.fixture(scope="module")
def classroom():
    return catalog.load_model("classroom")


@pytest.mark.slow  # a held-out evaluation of the 12 × 12 model
@needs("classroom")
def test_classroom_forced_positions_are_predicted(classroom):
    result = train.evaluate(classroom.model, classroom.tokenizer, relay=True)
    for relation in FORCED + ("relay",):  # the relay game is what its previous-word head is for
        assert result[f"accuracy_{relation}"] >= 0.95, result


@pytest.fixture(scope="module")
def classroom_best(classroom):
    assert (classroom.config.n_layer, classroom.config.n_head) == (12, 12)
    return {r: float(t.max()) for r, t in relation_scores(classroom, n_stories=64).items()}


@needs("classroom")
@pytest.mark.parametrize("relations, bar", [
    (("induction",), 0.9),
    (("pronoun", "agreement"), 0.6),
    (("previous",), 0.9),
    (("resting",), 0.8),  # <bos> or the latest full stop (the head-analysis issue's decision); <bos> alone
])                        # is measured on single sentences in tests/test_head_analysis.py
def test_classroom_has_a_head_for_each_relation(classroom_best, relations, bar):
    """At least one of the 144 heads reaches the bar on (one of) these relations."""
    assert max(classroom_best[r] for r in relations) >= bar, classroom_best


@needs("classroom")
def test_where_idle_heads_rest(classroom):
    """Notebook 05: many heads find nothing to do in "I like to draw" and rest on <bos>; in section 4's
    long text hardly any rest on <bos>, and many rest on the full stops instead."""
    from helpers.analysis.detectors import first_token_scores, word_scores
    from helpers.core.run import run_sentence

    short = first_token_scores(run_sentence(classroom, "I like to draw").attentions)
    long = run_sentence(classroom, "I like to draw my picture . the cat near these big dogs is tired . "
                        "the girl sat on the mat because she was tired . the boy eats the red apple . "
                        "list : red mat old fox . again : red mat old fox .")
    on_bos, on_stops = first_token_scores(long.attentions), word_scores(long.attentions, long.tokens, ".")
    assert (short > 0.5).sum() >= 20 and (on_bos > 0.5).sum() <= 2 and (on_stops > 0.5).sum() >= 10, \
        ((short > 0.5).sum(), (on_bos > 0.5).sum(), (on_stops > 0.5).sum())


@needs("classroom")
def test_classroom_induction_heads_know_the_list_game_not_any_repeat(classroom):
    """Notebook 06, section 7: on random words said twice the classroom model's induction scores stay near 0."""
    from helpers.analysis.detectors import generic_scores

    assert generic_scores(classroom, length=31, batch=8, seed=0)["induction"].max() < 0.1


@needs("walkthrough-12")
def test_walkthrough_draw_looks_at_I_to_choose_my():
    """The walkthrough story: 'draw' needs the subject to predict 'my'."""
    from helpers.core.run import run_sentence

    lm = catalog.load_model("walkthrough-12")
    run = run_sentence(lm, "I like to draw")
    draw_row = run.attentions[0, :, -1, :]  # (heads, keys): what "draw" reads, per head
    assert draw_row[:, run.tokens.index("I")].max() > 0.9
    assert lm.tokenizer.vocab[int(run.logits[-1].argmax())] == "my"


@pytest.mark.parametrize("damage", ["missing", "truncated", "flipped"])
def test_damaged_shipped_file_names_the_regenerate_command(tmp_path, monkeypatch, damage):
    name = next(iter(SHIPPED), None)
    if name is None:
        pytest.skip("no shipped model yet")
    shutil.copy(catalog.DATA_DIR / SHIPPED[name]["file"], tmp_path / SHIPPED[name]["file"])
    shutil.copy(catalog.MANIFEST, tmp_path / "models.json")
    monkeypatch.setattr(catalog, "DATA_DIR", tmp_path)
    monkeypatch.setattr(catalog, "MANIFEST", tmp_path / "models.json")
    path = tmp_path / SHIPPED[name]["file"]
    if damage == "missing":
        path.unlink()
    elif damage == "truncated":
        path.write_bytes(path.read_bytes()[:1000])
    else:
        data = bytearray(path.read_bytes())
        data[len(data) // 2] ^= 1
        path.write_bytes(bytes(data))
    with pytest.raises((ValueError, FileNotFoundError)) as err:
        catalog.load_model(name)
    assert str(path) in str(err.value) and f"python -m helpers.train {name}" in str(err.value)
