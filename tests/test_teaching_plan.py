"""tools/make_plan.py: the guide's 2 × 90-minute plan is the one the notebooks give now, and each session fits."""

import ast
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import make_plan as P  # noqa: E402
import reading_load as RL  # noqa: E402

NOTEBOOKS = ("01", "02", "03", "04", "05", "06", "07", "08")


def test_the_guides_plan_is_the_one_the_notebooks_give_now():
    """Fails when a notebook's core path or the exercise table changed and the plan was not regenerated."""
    assert P.main(["--check"]) == 0, "run: python tools/make_plan.py"


def test_each_session_fits_in_90_minutes_and_its_rows_add_up():
    block, totals = P.plan()
    assert len(totals) == 2 and all(t <= P.SESSION_LENGTH for t in totals), totals
    for (_, notebooks, break_after), total in zip(P.SESSIONS, totals):
        rows, _ = P.session_rows(notebooks, break_after)
        last = P.session_table(rows).splitlines()[-1]
        assert int(last.split("|")[1].split("–")[1]) == total  # the last row ends at the session's total
        assert f"{total} of 90 minutes" in block


@pytest.mark.parametrize("number", NOTEBOOKS)
def test_the_segments_count_the_words_reading_load_counts(number):
    """The plan's reading rows split a notebook's core path without losing or adding a word."""
    assert sum(s.words for s in P.segments(number)) == RL.measure(P.notebook_path(number))["words"]


def test_the_exercise_table_names_the_notebooks_exercises():
    """Each exercise cell (a definition and a check call) has minutes, and the table has no exercise left over."""
    found = [s.exercise for n in NOTEBOOKS for s in P.segments(n) if s.exercise]
    assert sorted(found) == sorted(P.EXERCISES) and len(found) == 17


def test_a_stale_guide_fails_the_check(tmp_path, monkeypatch):
    guide = tmp_path / "teaching.md"
    block, _ = P.plan()
    guide.write_text(f"intro\n{P.START}\n{block.replace('| 0–5 |', '| 0–6 |', 1)}{P.END}\nrest\n")
    monkeypatch.setattr(P, "GUIDE", guide)
    assert P.main(["--check"]) == 1
    assert P.main([]) == 0 and P.main(["--check"]) == 0  # rewritten: fresh, and the text around it kept
    assert guide.read_text().startswith(f"intro\n{P.START}\n") and guide.read_text().endswith(f"{P.END}\nrest\n")


def test_a_session_over_90_minutes_fails(monkeypatch):
    longer = dict(P.EXERCISES, weighted_sum=P.Exercise(30, True, "a stuck class"))
    monkeypatch.setattr(P, "EXERCISES", longer)
    assert P.main(["--print"]) == 1


def test_an_exercise_done_at_home_leaves_the_session():
    """Moving an exercise to homework takes its minutes out of the session and names it under Homework."""
    rows, homework = P.session_rows(("01", "02", "03"), "01")
    assert "`MyMultiHead` (03, 20 min)" in homework
    assert not any("then exercise `MyMultiHead`" in r.what for r in rows)


# --- the guide's answer table: each answer, pasted into its exercise, passes the check --------------------
GUIDE_TEXT = (ROOT / "docs" / "teaching.md").read_text()
SECTION = GUIDE_TEXT.split("## The exercises: answers and the slips a class makes")[1].split("\n## ")[0]


def answer_rows() -> dict:
    """{exercise name: (answer lines, slip codes)} read from the guide's table."""
    import re
    rows = {}
    for line in SECTION.splitlines():
        cells = line.split(" | ")
        if not line.startswith("| 0") or len(cells) != 3:
            continue
        name = re.search(r"`(\w+)`", cells[0]).group(1)
        rows[name] = (re.findall(r"`([^`]+)`", cells[1].split("(the measured")[0]),
                      re.findall(r"`([a-z_]+\.[a-z_0-9]+)`", cells[2]))
    return rows


def as_source(name: str, lines: list) -> str:
    """The reference's own signature (or class with its __init__) around the guide's lines."""
    from helpers.exercises import solutions
    head = solutions.source(name)
    if name == "MyMultiHead":
        body = "".join(f"        {line}\n" for line in lines)
        return head.split("    def forward")[0] + "    def forward(self, x):\n" + body
    return head.splitlines()[0] + "\n" + "".join(f"    {l}\n" for l in lines)


def checked(name: str, fn):
    import helpers as H
    from helpers.exercises import head_checks
    if name == "previous_word_head":
        lm = H.load_model("classroom")
        return H.check_previous_word_head(fn, H.run_sentence(lm, "I like to draw my picture . list : red mat old fox . "
                                                                 "again : red mat old fox .").attentions)
    if name == "predict_induction":
        lm = H.load_model("classroom")
        repeat = H.run_sentence(lm, "list : red mat old fox . again : red mat old fox .")
        return H.check_induction_prediction(fn, repeat)
    if name == "my_prediction":
        return head_checks.knockout_verdict(fn, H.load_model("classroom"), "induction", [(0, 9)])[0]
    special = {"MyMultiHead": "check_multihead", "kv_cache_bytes": "check_kv_cache",
               "my_knockout_prediction": "check_knockout_along"}
    return getattr(H, special.get(name, f"check_{name}"))(fn)


def test_the_answer_table_has_each_exercise_once():
    assert sorted(answer_rows()) == sorted(P.EXERCISES)


@pytest.mark.parametrize("name", sorted(P.EXERCISES))
def test_each_answer_in_the_guide_passes_its_check(name):
    import torch
    from torch import nn
    lines, _ = answer_rows()[name]
    namespace = {"torch": torch, "nn": nn}
    exec(as_source(name, lines), namespace)
    verdict = checked(name, namespace[name])
    assert verdict.outcome == "right", (name, verdict.code)


def test_each_slip_the_guide_names_is_a_code_of_that_exercise():
    doc = (ROOT / "docs" / "mistakes.md").read_text()
    codes = set(re.findall(r"`([a-z_0-9]+\.[a-z_0-9.]+)`", doc))
    any_exercise = set(re.findall(r"^\| `([a-z_.]+)` \|", doc.split("## Notebook 01")[0], re.M))  # right, changed_input…
    for name, (_, slips) in answer_rows().items():
        assert 2 <= len(slips) <= 4, name
        for code in slips:
            assert code in codes or code.split(".", 1)[1] in any_exercise, (name, code)


# --- the numbers the stumbles paragraphs and the slide outline quote, measured on the shipped models ------
FLAT = " ".join(GUIDE_TEXT.split())


def test_the_raw_scores_of_draw_are_the_ones_the_guide_quotes():
    """01: "*draw*'s four raw scores are −12.6, −8.1, −63.6 and −39.1 ... the weights are 0.37, 0.43, 0.06 and
    0.14", and the session 1 outline's answer on the same row."""
    import helpers as H
    walk = H.walkthrough_layer("classroom", n_heads=1, sentence="I like to draw")
    Q, K = walk.X @ walk.W_Q[0] + walk.b_Q[0], walk.X @ walk.W_K[0] + walk.b_K[0]
    raw = (Q[-1] @ K.T).tolist()
    weights = (Q[-1] @ K.T / Q.shape[-1] ** 0.5).softmax(-1).tolist()
    assert max(raw) < 0  # the four are negative, the point of the paragraph
    said = ", ".join(f"{x:.1f}" for x in raw[:3]).replace("-", "−") + f" and {raw[3]:.1f}".replace("-", "−")
    assert f"raw scores are {said}" in FLAT
    assert "weights are " + ", ".join(f"{w:.2f}" for w in weights[:3]) + f" and {weights[3]:.2f}" in FLAT
    answer = f"(−8.1) is the largest and gets the most weight, {weights[1]:.2f}; *to* (−63.6) gets {weights[2]:.2f}"
    assert answer in FLAT


def test_the_heads_the_session_2_outline_names():
    """05: L9 H6 looks at *mat* from the second *red* (1.00); L0 H9 puts 0.97 on the previous word."""
    import helpers as H
    from helpers.exercises import solutions
    lm = H.load_model("classroom")
    run = H.run_sentence(lm, "list : red mat old fox . again : red mat old fox .")
    second_red = len(run.tokens) - 1 - run.tokens[::-1].index("red")
    row = run.attentions[9, 6, second_red]
    assert run.tokens[int(row.argmax())] == "mat" and f"(weight {row.max():.2f})" in FLAT
    cells = json.loads(P.notebook_path("05").read_text())["cells"]
    code = next("".join(c["source"]) for c in cells if "SENTENCE = (" in "".join(c["source"]))
    assign = next(n for n in ast.parse(code).body if isinstance(n, ast.Assign) and n.targets[0].id == "SENTENCE")
    sentence = ast.literal_eval(assign.value)  # the notebook's own sentence
    maps = H.run_sentence(lm, sentence).attentions
    layer, head = solutions.previous_word_head(maps)
    score = maps[layer, head].diagonal(offset=-1).mean()
    assert (layer, head) == (0, 9) and f"L0 H9: {score:.2f} of its attention on the previous word" in FLAT
