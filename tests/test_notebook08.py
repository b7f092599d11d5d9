"""Notebook 08: what its sentences say, asserted on the shipped snapshots (the numbers they quote: tests/claims_08.py);
the notebook headless without its live cell, and that cell run on the tiny recipe."""

from pathlib import Path

import nbformat
import numpy as np
import pytest
from nbclient import NotebookClient

import helpers as H
from helpers.analysis import formation as F
from helpers.analysis import seeds as S
from helpers.analysis.formation_seeds import formation_seeds, seed_findings
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
    """"976 steps of 32 stories of 64 tokens (2,048 tokens a step, 2.0 million in total) … 31 steps … 24 steps
    apart from step 360 to step 768 … the end.\""""
    run = H.load_snapshots()
    assert run.steps == snapshot_steps(976) and len(run.steps) == 31 and run.tokens_per_step == 2048 == 32 * 64
    assert run.info["train_tokens"] == 976 * 2048 and f"{976 * 2048 / 1e6:.1f}" == "2.0"
    assert [s for s in run.steps if 360 <= s <= 768] == list(range(360, 769, 24))


def test_08_1_baseline_and_threshold(shipped):
    """"would score at best 0.25 on induction … reaches **0.5**.\""""
    record, _ = shipped
    assert f"{record['curves']['induction_baseline']:.2f}" == "0.25" and F.THRESHOLD == 0.5
    assert range(50, 64) == F.LATE and range(5, 13) == F.EARLY


def test_08_1_what_the_shipped_snapshots_show(shipped):
    record, found = shipped
    c = record["curves"]
    i432, i456 = at(record, 432), at(record, 456)
    assert found["head"] == (1, 2) and found["step"] == 456 and at(record, 456) == i432 + 1
    assert f"{c['induction'][i432][1, 2]:.2f}" == "0.38" and f"{c['induction'][i456][1, 2]:.2f}" == "0.52"
    acc = c["list_accuracy"]
    assert (f"{acc[i432]:.0%}", f"{acc[i456]:.0%}", f"{acc[-1]:.0%}") == ("5%", "17%", "92%")
    assert int((c["induction"][-1][1] >= 0.5).sum()) == 6


def test_08_1_no_previous_word_head_and_the_bump(shipped):
    record, found = shipped
    c = record["curves"]
    assert found["previous_head"] == (0, 9) and found["previous_step"] is None
    assert f"{c['previous'][:, 0, 9].max():.2f}" == "0.22" and c["previous"][:, 0].max() < 0.5  # no layer-0 head
    ratio = F.bump_ratio(c, 456)
    assert f"{ratio:.1f}" == "2.9" and found["bump"] and F.BUMP_FACTOR == 2 and F.BUMP_WINDOW == 4
    assert np.ptp(c["list_share"]) == 0 and f"{c['list_share'][0]:.1%}" == "4.2%"
    i = at(record, 432)
    assert (f"{c['list_loss'][i]:.2f}", f"{c['list_loss'][-1]:.2f}") == ("3.41", "0.54")
    assert (f"{c['other_loss'][i]:.2f}", f"{c['other_loss'][-1]:.2f}") == ("1.67", "1.63")
    late = c["in_context"][at(record, 310):]
    assert (f"{late.min():.2f}", f"{late.max():.2f}") == ("-0.14", "-0.09") and late.min() >= -0.15


# --- §3 knock-outs ------------------------------------------------------------------------------------------
def test_08_3_knockouts(shipped):
    record, _ = shipped
    k = record["knockouts"]
    assert k["heads"] == {"previous": (0, 9), "needed": (0, 10), "watched": (1, 2)}
    prev, need = k["previous"], k["needed"]
    assert (f"{prev['accuracy'][-1]:.0%}", f"{prev['accuracy_without'][-1]:.0%}") == ("92%", "88%")
    assert (f"{need['accuracy_without'][-1]:.0%}", f"{need['score'][-1]:.2f}", f"{need['score_without'][-1]:.2f}") == \
        ("66%", "0.88", "0.74")
    i = at(record, 432)
    assert (f"{need['accuracy'][i]:.0%}", f"{need['accuracy_without'][i]:.0%}") == ("5%", "5%")
    assert abs(prev["score_without"][-1] - prev["score"][-1]) < 0.02  # "barely moves"
    assert 0.6 <= need["accuracy_without"][-1] / need["accuracy"][-1] <= 0.75  # "two thirds … still said again"


def test_08_3_l0_h9_and_h10_are_what_the_prose_says():
    """"(score 0.22; its largest scores are for the subject and object relations)" and "L0 H10 makes the words of
    the first list look back at the word `list` that opens it"."""
    lm = H.load_snapshots().model_at(976)
    scores = H.relation_scores(lm)
    ranked = sorted(scores, key=lambda r: -scores[r][0, 9])
    assert set(ranked[:2]) == {"subject", "object"}
    run = H.run_sentence(lm, H.SENTENCE)
    first = range(run.tokens.index(":") + 1, run.tokens.index("."))  # the first list's words
    assert all(run.attentions[0, 10, q, run.tokens.index("list")] > 0.85 for q in first)


def test_08_3_exercise_numbers_and_solution(shipped):
    m = formation_checks.knockout_moments()
    assert m["steps"] == (432, 976) and (f"{m['with'][0]:.0%}", f"{m['with'][1]:.0%}") == ("5%", "92%")
    verdict = formation_checks.check_knockout_along(solutions.my_knockout_prediction)
    assert verdict.outcome == "right", verdict.line
    for slip in formation_checks.knockout_slips(m):
        got = formation_checks.check_knockout_along(slip.answer)
        assert got.code.endswith(slip.code), (slip.code, got.line)


def test_08_exercise_1_names_each_mistake():
    assert formation_checks.check_formation_step(solutions.formation_step).outcome == "right"
    for mistake in formation_checks.FORMATION_STEP.mistakes:
        verdict = formation_checks.check_formation_step(mistake.answer)
        assert verdict.code == f"formation_step.{mistake.code}", (mistake.code, verdict.line)


# --- §4 seeds -----------------------------------------------------------------------------------------------
def test_08_4_seed_findings_are_what_the_prose_says():
    runs = formation_seeds()
    assert sorted(runs) == [22, 23, 24, 25]
    assert runs[22]["formation_step"] == 456 and runs[22]["head"] == [1, 2]  # the shipped run, measured again
    f = seed_findings(runs)
    assert [runs[s]["formation_step"] for s in (23, 24, 25)] == [504, 528, 528]
    assert [tuple(runs[s]["head"]) for s in (22, 23, 24, 25)] == [(1, 2), (1, 11), (1, 7), (1, 8)]
    ratios = [runs[s]["bump_ratio"] for s in runs]
    assert (f"{min(ratios):.1f}", f"{max(ratios):.1f}") == ("1.5", "2.9") and f["bumps"] == 1 and runs[22]["bump"]
    others = [runs[s]["bump_ratio"] for s in (23, 24, 25)]
    assert (f"{min(others):.1f}", f"{max(others):.1f}") == ("1.5", "1.9")
    final = [runs[s]["final_list_accuracy"] for s in runs]
    assert (f"{min(final):.0%}", f"{max(final):.0%}") == ("79%", "92%")
    assert f["formed"] == f["runs"] == 4 and f["steps"] == (456, 528) and f["heads"] == 4
    assert all(r["head"][0] == 1 for r in runs.values()) and f["previous_formed"] == 0
    best = [runs[s]["best_previous_score"] for s in runs]
    assert (f"{min(best):.2f}", f"{max(best):.2f}") == ("0.17", "0.22")
    prev = [100 * (r["final_list_accuracy"] - r["without_previous"]) for r in runs.values()]
    need = [100 * (r["final_list_accuracy"] - r["without_needed"]) for r in runs.values()]
    assert (f"{min(prev):.0f}", f"{max(prev):.0f}", f"{min(need):.0f}", f"{max(need):.0f}") == ("4", "8", "22", "55")


# --- the notebook runs headless, and its live cell trains a tiny recipe (its time: bench/bench_notebooks.py) --
@pytest.mark.notebook
def test_08_runs_headless_and_its_live_cell_trains_the_tiny_recipe():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    live = [c for c in nb.cells if LIVE_TAG in c.metadata.get("tags", [])]
    assert len(live) == 1 and '"heads-12"' in live[0].source
    live[0].source = live[0].source.replace('"heads-12"', '"tiny"') + "\ntrainer.start(); result = trainer.wait(600)"
    nb.cells.append(nbformat.v4.new_code_cell("print(trainer.status.value, trainer.redraws, len(result['steps']))"))
    NotebookClient(nb, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()
    printed = nb.cells[-1].outputs[0]["text"]
    assert printed.startswith("finished after 39 steps") and int(printed.split()[-2]) > 0, printed


# --- the teacher's guide: 08's expected answers ----------------------------------------------------------
GUIDE = " ".join((Path(__file__).resolve().parent.parent / "docs" / "teaching.md").read_text().split())


def test_the_guides_08_answers_are_the_snapshots_numbers(shipped):
    record, found = shipped
    c, k = record["curves"], record["knockouts"]
    part = GUIDE.split("### 08 Watch the heads learn (extension)")[1].split("## A 50-minute path")[0]
    assert found["step"] == 456 and found["head"] == (1, 2) and "**Step 456, L1 H2" in part
    i = at(record, 432)
    assert f"from {c['induction'][i][1, 2]:.2f} at step 432 to {c['induction'][i + 1][1, 2]:.2f}" in part
    later = [s for s in c["steps"][at(record, 456) + 1:-1] if F.bump_ratio(c, int(s)) >= F.BUMP_FACTOR]
    assert f"{F.bump_ratio(c, 456):.1f} at step 456, but 2 or more at {len(later)} later snapshots" in part
    acc = c["list_accuracy"]
    assert f"from {acc[i]:.0%} at step 432 to {acc[i + 1]:.0%} at step 456".replace("%", " %") in part
    assert f"the best, L0 H9, reaches {c['previous'][:, 0, 9].max():.2f}" in part
    prev, need = k["previous"], k["needed"]
    assert (f"{prev['accuracy'][i]:.0%} → {prev['accuracy_without'][i]:.0%} of lists said again at step 432, "
            f"{prev['accuracy'][-1]:.0%} → {prev['accuracy_without'][-1]:.0%} at the end").replace("%", " %") in part
    assert f"{need['accuracy'][-1]:.0%} → {need['accuracy_without'][-1]:.0%} without it".replace("%", " %") in part
    runs = formation_seeds()
    f = seed_findings(runs)
    assert f"forming between steps {f['steps'][0]} and {f['steps'][1]}" in part and f["heads"] == 4
    assert "four different layer-1 heads (L1 H2, L1 H11, L1 H7, L1 H8)" in part and f["previous_formed"] == 0
    assert f"a previous-word head in {S.rate_text(f['previous_formed'], f['runs'])}" in part
    assert f"a bump of 2 times or more at formation in {S.rate_text(f['bumps'], f['runs'])}" in part
