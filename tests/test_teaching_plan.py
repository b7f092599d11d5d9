"""tools/make_plan.py: the guide's 2 × 90-minute plan is the one the notebooks give now, and each session fits."""

import json
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
