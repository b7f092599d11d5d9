"""Lessons 01-07 in otter-grader's format (helpers/grade/otter.py), and otter's round trip.

The shape of all 7 master notebooks is checked without otter. The round trip runs otter-grader on
lesson 02: `otter assign`, then `otter run` (no Docker) on four submissions: right, a catalogued
mistake, the blank student notebook, and one that rebinds H.assert_passed, to measure what an in-kernel grader cannot stop. Skipped with a reason when
otter-grader is not installed (`pip install -e ".[grading]"`).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest

from helpers.exercises import catalogue
from helpers.grade import lessons, otter

LESSON_02 = "02_shrinking_the_head"


@pytest.fixture(scope="module")
def masters(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("otter") / "masters"
    otter.write_source(folder)
    return folder


def _raw(cells) -> list[str]:
    return [c.source.splitlines()[0] for c in cells if c.cell_type == "raw"]


def test_every_lesson_becomes_a_master_notebook_with_a_question_per_exercise(masters):
    paths = sorted(masters.glob("*/*.ipynb"))
    assert [p.stem for p in paths] == [p.stem for p in lessons.lesson_paths()]
    called = {e.key for e in catalogue.entries() if e.key != "previous_token_detector"  # no notebook calls it
              and e.notebook in lessons.LESSONS}
    seen = []
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        nbformat.validate(nb)
        assert nb.cells[0].source.startswith("# ASSIGNMENT CONFIG") and "ok_format: false" in nb.cells[0].source
        blocks = _raw(nb.cells[1:])
        n = blocks.count("# BEGIN QUESTION")
        assert blocks == ["# BEGIN QUESTION", "# BEGIN SOLUTION", "# END SOLUTION", "# BEGIN TESTS", "# END TESTS",
                          "# END QUESTION"] * n
        tests = [c.source for c in nb.cells if c.cell_type == "code" and c.id.startswith("test_")]
        assert len(tests) == n and all("    H.assert_passed(H." in t for t in tests)
        seen += [c.source.split("\n")[1].removeprefix("name: ") for c in nb.cells if c.source.startswith("# BEGIN QUESTION")]
    assert sorted(seen) == sorted(called)


def test_a_question_test_reads_the_names_its_check_needs(masters):
    nb = nbformat.read(next(masters.glob("05_*/*.ipynb")), as_version=4)
    tests = [c.source for c in nb.cells if c.id.startswith("test_")]
    assert tests[0] == ("def test_previous_word_head(previous_word_head, H, full):\n"
                        "    H.assert_passed(H.check_previous_word_head(previous_word_head, full.attentions))")
    inputs = next(c.source for c in nb.cells if c.id == "induction_pattern_inputs")
    assert inputs.startswith('LIST = "list : red mat old fox') and "def " not in inputs
    six = nbformat.read(next(masters.glob("06_*/*.ipynb")), as_version=4)
    assert "H.knockout_verdict(my_prediction, classroom, 'induction', [(0, 9)])[0]" in \
        next(c.source for c in six.cells if c.id.startswith("test_")).replace('"', "'")


# --- the round trip: otter-grader itself -------------------------------------------------------------------
needs_otter = pytest.mark.skipif(importlib.util.find_spec("otter") is None,
                                 reason='otter-grader is not installed: pip install -e ".[grading]"')


KERNEL_DID_NOT_START = "Kernel didn't respond in"  # otter's nbclient waits 60 s for a kernel, and says so


def _otter(cwd: Path, *args: str) -> str:
    """Run otter; once more only when its kernel did not start within otter's fixed 60 s, which a 2-core
    machine running the other test file's grading workers beside it reached once (1 of 3 full runs)."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    for attempt in (1, 2):
        done = subprocess.run([str(Path(sys.executable).with_name("otter")), *args], cwd=cwd, env=env,
                              capture_output=True, text=True, timeout=600)
        if done.returncode == 0 or KERNEL_DID_NOT_START not in done.stderr + done.stdout or attempt == 2:
            break
        print(f"otter {args[0]}: its kernel did not start within 60 s; running it once more")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout


def _submit(student_nb: Path, folder: Path, lesson: dict, bodies: dict[str, str], extra: str = "") -> Path:
    """A copy of the student notebook with these function bodies written in (and `extra` code after one)."""
    nb = nbformat.read(student_nb, as_version=4)
    for key, body in bodies.items():
        ex = lesson[key]
        cell = next(c for c in nb.cells if c.cell_type == "code" and c.source.startswith(f"def {ex.name}("))
        head, tail = cell.source.rsplit(f"{ex.indent}...", 1)  # the stub otter left, below the hints
        cell.source = head + body + tail + (f"\n{extra}" if extra else "")
    target = folder / student_nb.name
    folder.mkdir(parents=True)
    nbformat.write(nb, target)
    return target


def _scores(results: Path) -> tuple[dict[str, float], str]:
    tests = json.loads(results.read_text())["tests"]
    return {t["name"]: t["score"] for t in tests if "score" in t}, "\n".join(t.get("output", "") for t in tests)


@needs_otter
@pytest.mark.notebook
def test_otter_assigns_and_runs_and_feeds_back_the_named_mistake(masters, tmp_path):
    """About a minute on a quiet 2-core machine: `otter run` executes lesson 02 once per submission, two at once."""
    master = next(masters.glob(f"{LESSON_02}/*.ipynb"))
    _otter(tmp_path, "assign", "--no-run-tests", str(master), "dist")  # ada's run below is the solutions' run
    student = tmp_path / "dist" / "student" / master.name
    autograder = next((tmp_path / "dist" / "autograder").glob("*.zip"))
    lesson = {ex.key: ex for ex in map(lessons.split, (c.source for c in nbformat.read(
        lessons.NOTEBOOKS / master.name, as_version=4).cells)) if ex}
    right = {key: ex.body for key, ex in lesson.items()}
    slip = "    T, D = x.shape\n    return x.reshape(n_heads, T, D // n_heads)"  # no transpose
    cases = {"ada": (right, ""), "bob": ({**right, "split_heads": slip}, ""), "cy": ({}, ""),
             "eve": ({"one_head": "    ..."}, "H.assert_passed = lambda verdict: verdict")}
    def run(name: str) -> tuple[dict[str, float], str]:  # each `otter run` is its own process and folder
        bodies, extra = cases[name]
        submission = _submit(student, tmp_path / "submissions" / name, lesson, bodies, extra)
        (tmp_path / "out" / name).mkdir(parents=True)
        _otter(tmp_path, "run", "-a", str(autograder), "-o", str(tmp_path / "out" / name), str(submission))
        return _scores(tmp_path / "out" / name / "results.json")

    with ThreadPoolExecutor(2) as pool:  # two submissions at once: a 2-core machine runs two kernels at once
        results = dict(zip(cases, pool.map(run, cases)))
    for name, (scores, output) in results.items():
        print(name, scores, [line.strip() for line in output.splitlines() if "Error:" in line])
    assert results["ada"][0] == {"one_head": 1.0, "split_heads": 1.0}
    assert results["bob"][0] == {"one_head": 1.0, "split_heads": 0.0}
    says = dict(next(e for e in catalogue.entries() if e.key == "split_heads").mistakes)["reshape_without_transpose"]
    assert f"AssertionError: ✗ split heads: {says}" in results["bob"][1]
    assert results["cy"][0] == {"one_head": 0.0, "split_heads": 0.0}
    assert "AssertionError: … one head: not attempted yet" in results["cy"][1]
    assert results["eve"][0] == {"one_head": 1.0, "split_heads": 1.0}  # blank, yet full marks: see the guide
