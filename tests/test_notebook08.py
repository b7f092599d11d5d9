"""Notebook 08: what its sentences say, asserted on the shipped snapshots (the numbers they quote: tests/claims_08.py);
the notebook headless without its live cell, and that cell run on the tiny recipe."""

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

import helpers as H
from helpers.analysis import formation as F
from helpers.analysis import seeds as S
from helpers.analysis.formation import formation_seeds, seed_findings
from helpers.core.snapshots import snapshot_steps
from helpers.exercises import formation_checks, solutions

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "08_watch_the_heads_learn.ipynb"
LIVE_TAG = "live-training"


def prose() -> str:
    return " ".join(" ".join(c.source.split()) for c in nbformat.read(NOTEBOOK, as_version=4).cells
                    if c.cell_type == "markdown")


@pytest.fixture(scope="module")
def shipped():
    record = F.shipped_record()
    return record, F.formation(record["curves"])


def at(record, step):
    return list(record["curves"]["steps"]).index(step)


# --- §1 snapshots and curves ---------------------------------------------------------------------------
def test_08_1_the_snapshots():
    """"1953 steps of 32 stories of 64 tokens (2,048 tokens a step, 4.0 million in total) … 37 steps … every 24
    steps from step 408 to step 960 … step 1039 and the end" (the numbers themselves: claims_08.py)."""
    run = H.load_snapshots()
    assert run.steps == snapshot_steps(1953) and len(run.steps) == 37 and run.tokens_per_step == 2048 == 32 * 64
    assert run.info["train_tokens"] == 1953 * 2048 and run.info["list_markers"] is False
    assert [s for s in run.steps if 408 <= s <= 960] == list(range(408, 961, 24)) and run.steps[-2:] == [1039, 1953]
    assert not run.config.mlp and (run.config.n_layer, run.config.n_head, run.config.n_embd) == (2, 4, 96)


def test_08_1_the_recipe_is_what_the_prose_says():
    """"Half of its training stories are random words said again and again. The other half are notebook 04's stories
    with a list said twice, without the markers": so only the circuit predicts a second copy."""
    from helpers.train import RECIPES

    r = RECIPES["induction"]
    assert (r.repeat_chance, r.list_chance, r.list_markers, r.relay_chance) == (0.5, 1.0, False, 0.0)
    assert r.config == {"n_layer": 2, "n_head": 4, "n_embd": 96, "mlp": False} and r.seed == 22


def test_08_2_at_the_end_l0_h0_looks_one_word_back(shipped):
    """"At the end, L0 H0 looks one word back from every word" of the slider's sentence."""
    run = H.run_sentence(H.load_snapshots().model_at(1953), F.SENTENCE)
    assert all(int(run.attentions[0, 0, q].argmax()) == q - 1 for q in range(1, len(run.tokens)))


def test_08_1_baseline_threshold_and_windows(shipped):
    record, _ = shipped
    assert f"{record['curves']['induction_baseline']:.2f}" == "0.23" and F.THRESHOLD == 0.5
    assert range(50, 64) == F.LATE and range(5, 13) == F.EARLY


def test_08_1_the_circuit_forms_in_order(shipped):
    """The previous-word head crosses 0.5 before the induction head; lists said again rise with them."""
    record, found = shipped
    c = record["curves"]
    assert found["previous_head"] == (0, 0) and found["previous_step"] == 576
    assert found["head"] == (1, 0) and found["step"] == 648 and found["previous_first"]
    assert c["previous_list"][:, 0, 0].max() >= 0.5 and c["previous_list"][at(record, 552)][0].max() < 0.5
    assert found["bump"] and F.BUMP_FACTOR == 2 and F.BUMP_WINDOW == 4


# --- §3 knock-outs ------------------------------------------------------------------------------------------
def test_08_3_the_knocked_out_head_is_the_one_the_list_game_needs_most(shipped):
    """The prose says the head whose loss hurts the list game most is L0 H0 itself."""
    record, _ = shipped
    assert record["knockouts"]["heads"] == {"previous": (0, 0), "needed": (0, 0), "watched": (1, 0)}


def test_08_3_exercise_numbers_and_solution(shipped):
    m = formation_checks.knockout_moments()
    assert m["steps"] == (552, 1953) and (f"{m['with'][0]:.0%}", f"{m['with'][1]:.0%}") == ("8%", "100%")
    verdict = formation_checks.check_knockout_along(solutions.my_knockout_prediction)
    assert verdict.outcome == "right", verdict.line
    slips = formation_checks.knockout_slips(m)
    assert {s.code for s in slips} == {"no_effect", "drop_not_accuracy"}  # "swapped" lies within 7 points here
    for slip in slips:
        got = formation_checks.check_knockout_along(slip.answer)
        assert got.code.endswith(slip.code), (slip.code, got.line)


def test_08_exercise_1_names_each_mistake():
    assert formation_checks.check_formation_step(solutions.formation_step).outcome == "right"
    for mistake in formation_checks.FORMATION_STEP.mistakes:
        verdict = formation_checks.check_formation_step(mistake.answer)
        assert verdict.code == f"formation_step.{mistake.code}", (mistake.code, verdict.line)


# --- §4 seeds -----------------------------------------------------------------------------------------------
def test_08_4_the_seed_runs_and_the_shipped_run_agree():
    runs = formation_seeds()
    assert sorted(runs) == list(range(22, 34))
    assert runs[22]["formation_step"] == 648 and runs[22]["head"] == [1, 0]  # the shipped run, trained again
    assert runs[22]["previous_step"] == 576 and runs[22]["previous_first"]
    f = seed_findings(runs)
    assert f["runs"] == 12 and f["formed"] <= 12 and f["previous_first"] <= f["previous_formed"]


# --- the notebook runs headless, and its live cell trains a tiny recipe (its time: bench/bench_notebooks.py) --
@pytest.mark.notebook
def test_08_runs_headless_and_its_live_cell_trains_the_tiny_recipe():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    live = [c for c in nb.cells if LIVE_TAG in c.metadata.get("tags", [])]
    assert len(live) == 1 and '"induction"' in live[0].source
    live[0].source = live[0].source.replace('"induction"', '"tiny"') + "\ntrainer.start(); result = trainer.wait(600)"
    nb.cells.append(nbformat.v4.new_code_cell("print(trainer.status.value, trainer.redraws, len(result['steps']))"))
    NotebookClient(nb, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()
    printed = nb.cells[-1].outputs[0]["text"]
    assert printed.startswith("finished after 39 steps") and int(printed.split()[-2]) > 0, printed


# --- the teacher's guide: 08's expected answers ----------------------------------------------------------
GUIDE = " ".join((Path(__file__).resolve().parent.parent / "docs" / "teaching.md").read_text().split())


def test_the_guides_08_answers_are_the_snapshots_numbers(shipped):
    record, found = shipped
    c, k = record["curves"], record["knockouts"]["previous"]
    part = GUIDE.split("### 08 Watch the heads learn (extension)")[1].split("## A 50-minute path")[0]
    i = at(record, found["previous_step"])
    assert f"L0 H0, at step {found['previous_step']} (score {c['previous_list'][i][0, 0]:.2f})" in part
    j = at(record, found["step"])
    assert (f"L1 H0, at step {found['step']}: its score goes from {c['induction'][j - 1][1, 0]:.2f} at step "
            f"{c['steps'][j - 1]} to {c['induction'][j][1, 0]:.2f}") in part
    acc = c["list_accuracy"]
    assert f"from {acc[at(record, 528)]:.0%} at step 528 to {acc[at(record, 720)]:.0%} at step 720".replace("%", " %") in part
    assert f"from {c['in_context'][at(record, 528)]:.2f} to {c['in_context'][j]:.2f}" in part
    later = [s for s in c["steps"][j + 1:-1] if F.bump_ratio(c, int(s)) >= F.BUMP_FACTOR]
    assert f"{F.bump_ratio(c, found['step']):.1f} at step {found['step']}, but also 2 or more at {len(later)} later" in part
    b = at(record, 552)
    assert (f"{k['accuracy'][b]:.0%} → {k['accuracy_without'][b]:.0%} of lists said again at step 552. At the end, "
            f"{k['accuracy'][-1]:.0%} → {k['accuracy_without'][-1]:.0%}").replace("%", " %") in part
    assert f"falls from {k['score'][-1]:.2f} to {k['score_without'][-1]:.2f}" in part
    f = seed_findings(formation_seeds())
    assert f"an induction head in {S.rate_text(f['formed'], f['runs'])}" in part
    assert f"a previous-word head before it in {S.rate_text(f['previous_first'], f['runs'])}" in part
    assert f"a bump of 2 times or more at formation in {S.rate_text(f['bumps'], f['runs'])}" in part
