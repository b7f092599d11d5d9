"""Lessons 01-07 as nbgrader source assignments (helpers/grade/nbgrader.py), and nbgrader's round trip.

The shape of all 7 assignments is checked without nbgrader; every lesson's answers (the reference
bodies) pass their test cells and the released stubs fail them with the verdict's line, run in this
process (lesson 05, whose checks read the lesson's own run of a sentence, is graded for real below).
The round trip runs nbgrader itself on lesson 05: generate_assignment, four submissions (right, a
catalogued mistake with the locked cells tampered with, the blank release, and a blank one that
rebinds H.assert_passed in its answer cell, to measure what an in-kernel grader cannot stop),
autograde, the gradebook's scores and generate_feedback's pages. Skipped with a reason when nbgrader is not installed
(`pip install -e ".[grading]"`).
"""

from __future__ import annotations

import html
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import torch
from torch import nn

import helpers as H
from helpers.exercises import catalogue, solutions
from helpers.grade import lessons, nbgrader

ROOT = Path(__file__).resolve().parent.parent
CONFIG = 'c = get_config()\nc.Execute.timeout = 600\nc.ClearSolutions.code_stub = {"python": "..."}\n'  # the guide's
STUB = "    ..."  # what generate_assignment leaves with that config: the lesson's own stub
LESSON_05 = "05_all_144_heads"


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("course") / "source"
    nbgrader.write_source(folder)
    return folder


def _cells(path: Path) -> list:
    return nbformat.read(path, as_version=4).cells


def _graded(cells) -> list:
    return [c for c in cells if c.metadata["nbgrader"]["grade"]]


def test_every_lesson_becomes_one_assignment_with_a_test_cell_per_exercise(source):
    paths = sorted(source.glob("*/*.ipynb"))
    assert [p.parent.name for p in paths] == [p.stem for p in lessons.lesson_paths()]
    called = {e.key: e for e in catalogue.entries() if e.key != "previous_token_detector"  # no notebook calls it
              and e.notebook in lessons.LESSONS}
    seen = []
    for path in paths:
        nbformat.validate(nbformat.read(path, as_version=4))
        cells = _cells(path)
        ids = [c.metadata["nbgrader"]["grade_id"] for c in cells]
        assert len(ids) == len(set(ids)) and [c.id for c in cells] == ids
        for test in _graded(cells):
            key = test.metadata["nbgrader"]["grade_id"].removeprefix("test_")
            assert called[key].notebook == path.name[:2] and test.metadata["nbgrader"]["points"] == 1
            assert test.source.startswith("H.assert_passed(H.") and test.metadata["nbgrader"]["locked"]
            answer = next(c for c in cells if c.metadata["nbgrader"]["grade_id"] == key)
            assert answer.metadata["nbgrader"]["solution"] and not answer.metadata["nbgrader"]["locked"]
            assert answer.source.count(nbgrader.BEGIN) == answer.source.count(nbgrader.END) == 1
            seen.append(key)
        others = [c for c in cells if not c.metadata["nbgrader"]["solution"] and not c.metadata["nbgrader"]["grade"]]
        assert all(c.metadata["nbgrader"]["locked"] for c in others)  # autograde puts the teacher's copy back
    assert sorted(seen) == sorted(called)


def test_the_lesson_cells_are_copied_as_they_are_and_writing_twice_gives_the_same_files(source, tmp_path):
    lesson = nbformat.read(lessons.lesson_paths()[0], as_version=4)
    copied = [c.source for c in _cells(next(source.glob("01_*/*.ipynb"))) if c.id.startswith("lesson_cell_")]
    assert copied == [c.source for c in lesson.cells if not lessons.split(c.source)
                      and not lessons.is_navigation(c)]  # links to the other lessons are left out
    again = nbgrader.write_source(tmp_path / "again")
    assert [p.read_bytes() for p in again] == [p.read_bytes() for p in sorted(source.glob("*/*.ipynb"))]


def test_points_come_from_the_argument_and_unknown_exercises_are_refused(tmp_path):
    path = nbgrader.write_source(tmp_path, points={"01 attention_weights": 2.5})[0]
    points = {c.metadata["nbgrader"]["grade_id"]: c.metadata["nbgrader"]["points"] for c in _graded(_cells(path))}
    assert points == {"test_attention_weights": 2.5, "test_masked_weights": 1, "test_weighted_sum": 1}
    with pytest.raises(ValueError, match="no lesson has: use the columns of grades.csv"):
        nbgrader.write_source(tmp_path / "x", points={"01 attention_weight": 1})
    with pytest.raises(ValueError, match="must be numbers ≥ 0"):
        nbgrader.write_source(tmp_path / "x", points={"01 attention_weights": -1})
    assert not (tmp_path / "x").exists()


def test_assert_passed_raises_the_verdict_line_and_refuses_what_is_not_a_verdict():
    assert H.assert_passed(H.check_weighted_sum(solutions.weighted_sum)).passed
    with pytest.raises(AssertionError) as err:
        H.assert_passed(H.check_weighted_sum(lambda weights, V: V.T @ weights))
    assert str(err.value).startswith("✗ weighted sum:")
    with pytest.raises(ValueError, match="needs the Verdict a check returns, got float"):
        H.assert_passed(0.8)


def _exercises(path: Path):
    for cell in nbformat.read(path, as_version=4).cells:
        ex = lessons.split(cell.source) if cell.cell_type == "code" else None
        if ex:
            yield ex


def _run(ex, answer: str, inputs: dict) -> None:
    """Run an answer cell and its test cell in a fresh namespace, as the lesson's setup would."""
    space = {"H": H, "torch": torch, "nn": nn, **inputs}
    exec(answer, space)
    exec(f"H.assert_passed({ex.test})", space)


@pytest.mark.parametrize("number", ["01", "02", "03", "04", "06", "07"])
def test_the_answers_pass_their_tests_and_the_stubs_fail_them(number):
    """Lesson 06's check reads the classroom model (the lesson's `classroom` when MODEL = "classroom")."""
    path = next(p for p in lessons.lesson_paths() if p.name.startswith(number))
    inputs = {"classroom": H.load_model("classroom")} if number == "06" else {}
    for ex in _exercises(path):
        _run(ex, ex.answer(nbgrader.BEGIN, nbgrader.END), inputs)
        with pytest.raises(AssertionError, match=rf"^… {ex.title}: not attempted yet"):
            _run(ex, ex.with_body(f"{ex.indent}..."), inputs)
        stub = ex.with_body(f"{ex.indent}raise NotImplementedError()")  # nbgrader's default stub
        with pytest.raises(AssertionError, match=rf"^… {ex.title}: not attempted yet \(the function raises "
                                                 rf"NotImplementedError, the stub\)"):
            _run(ex, stub, inputs)


# --- the round trip: nbgrader itself ---------------------------------------------------------------------
needs_nbgrader = pytest.mark.skipif(importlib.util.find_spec("nbgrader") is None,
                                    reason='nbgrader is not installed: pip install -e ".[grading]"')


def _nbgrader(course: Path, *args: str) -> str:
    """Run an nbgrader command in the course folder (its alembic must be on PATH, as in an activated venv)."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run([str(Path(sys.executable).with_name("nbgrader")), *args], cwd=course, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return done.stdout + done.stderr


def _submit(course: Path, student: str, bodies: dict[str, str], tamper: bool = False) -> None:
    """A student's copy of the released lesson 05 with some bodies written (and, when `tamper`, the
    locked cells changed: a fake ✓ instead of the test, other inputs for the check)."""
    nb = nbformat.read(course / "release" / LESSON_05 / f"{LESSON_05}.ipynb", as_version=4)
    for cell in nb.cells:
        meta = cell.metadata["nbgrader"]
        if meta["solution"] and meta["grade_id"] in bodies:
            head, tail = cell.source.rsplit(STUB, 1)  # the stub's last line, below the hints
            cell.source = head + bodies[meta["grade_id"]] + tail
        if tamper and meta["grade"]:
            cell.source = 'print("✓ all right")'
        if tamper and meta["grade_id"].endswith("_inputs"):
            cell.source = cell.source.replace("red mat old fox", "red red red red")
    target = course / "submitted" / student / LESSON_05 / f"{LESSON_05}.ipynb"
    target.parent.mkdir(parents=True)
    nbformat.write(nb, target)


@needs_nbgrader
@pytest.mark.notebook
def test_nbgrader_generates_autogrades_and_feeds_back_the_named_mistake(source, tmp_path):
    """About 2 minutes on a quiet 2-core machine: autograde executes lesson 05 once per submission."""
    from nbgrader.api import Gradebook  # an optional package: only this test needs it

    course = source.parent
    (course / "nbgrader_config.py").write_text(CONFIG)
    _nbgrader(course, "generate_assignment", LESSON_05, "--force")
    right = {ex.key: ex.body for ex in _exercises(next(lessons.NOTEBOOKS.glob(f"{LESSON_05}.ipynb")))}
    itself = right["previous_word_head"].replace("offset=-1", "offset=0")  # the head that looks at the word itself
    _submit(course, "ada", right)
    _submit(course, "bob", {**right, "previous_word_head": itself}, tamper=True)
    _submit(course, "cy", {})
    _submit(course, "eve", {"previous_word_head": STUB + "\n\n\nH.assert_passed = lambda verdict: verdict"})
    log = _nbgrader(course, "autograde", LESSON_05, "--create", "--force")
    assert "checksum' for cell test_previous_word_head has changed" in log  # nbgrader saw bob's edit ...
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        scores = {s: {g.name: g.score for nb in gradebook.find_submission(LESSON_05, s).notebooks for g in nb.grades}
                  for s in ("ada", "bob", "cy", "eve")}
    print(scores)
    tests = ("test_previous_word_head", "test_induction_pattern")
    assert scores == {"ada": dict.fromkeys(tests, 1.0), "bob": dict(zip(tests, (0.0, 1.0))),
                      "cy": dict.fromkeys(tests, 0.0),  # ... and graded its answer with the teacher's cells
                      "eve": dict.fromkeys(tests, 1.0)}  # blank, yet full marks: the guide says why
    graded = nbformat.read(course / "autograded" / "bob" / LESSON_05 / f"{LESSON_05}.ipynb", as_version=4)
    inputs = next(c for c in graded.cells if c.metadata["nbgrader"]["grade_id"] == "induction_pattern_inputs")
    assert "red mat old fox" in inputs.source and "red red red red" not in inputs.source
    _nbgrader(course, "generate_feedback", LESSON_05, "--force")
    said = {e.key: dict(e.mistakes) for e in catalogue.entries()}
    page = (course / "feedback" / "bob" / LESSON_05 / f"{LESSON_05}.html").read_text()
    assert "AssertionError" in page and html.escape(said["previous_word_head"]["itself"], quote=False) in page
    blank = (course / "feedback" / "cy" / LESSON_05 / f"{LESSON_05}.html").read_text()
    assert "… previous-word head: not attempted yet" in blank and "… induction pattern: not attempted yet" in blank


def test_the_guide_gives_the_nbgrader_config_the_round_trip_runs_with():
    guide = (ROOT / "docs" / "teaching.md").read_text()
    section = guide.split("## With nbgrader or otter-grader")[1]
    assert all(line.split("#")[0].strip() in section for line in CONFIG.splitlines())
    assert f"nbgrader generate_assignment {LESSON_05}" in section and "python -m helpers.doctor --grading" in section
