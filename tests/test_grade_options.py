"""The command's options on a small class of lesson 01 (one run, ~15 s): --anonymous, --points, --names;
and bad arguments, each refused in one line before any grading."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.grade.__main__ import main
from helpers.grade.synthetic import write_class

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def anonymous(tmp_path_factory):
    base = tmp_path_factory.mktemp("options")
    want = write_class(base / "class", 3, ("01",))
    (base / "points.csv").write_text("exercise,points\nattention_weights,2\n01 weighted_sum,0.5\n")
    (base / "names.csv").write_text("key,name\nstudent01,Ana Lima\n")
    done = subprocess.run([sys.executable, "-m", "helpers.grade", str(base / "class"), "--out", str(base / "out"),
                           "--anonymous", "--points", str(base / "points.csv"), "--names", str(base / "names.csv"),
                           "--timeout", "5"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return base, want


def test_anonymous_writes_numbers_and_no_names_or_file_names(anonymous):
    base, _ = anonymous
    for path in (base / "out").rglob("*"):  # .grading/ too: the results kept for a rerun
        if path.suffix in (".csv", ".json", ".html"):
            text = path.read_text(encoding="utf-8")
            assert "student0" not in text and "Ana Lima" not in text and ".ipynb" not in text, path.name
    rows = list(csv.DictReader((base / "out" / "grades.csv").read_text(encoding="utf-8-sig").splitlines()))
    assert [r["student"] for r in rows] == ["student 01", "student 02", "student 03"]  # as the guide says


def test_an_anonymous_rerun_reuses_what_it_kept(anonymous):
    """The kept results hold no cell: a rerun raised KeyError: 'cell' and left the old files."""
    base, _ = anonymous
    done = subprocess.run([sys.executable, "-m", "helpers.grade", str(base / "class"), "--out", str(base / "out"),
                           "--anonymous", "--points", str(base / "points.csv"), "--names", str(base / "names.csv"),
                           "--timeout", "5"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and "kept 3 results from an earlier run" in done.stderr, done.stderr[-2000:]
    assert "; nothing new to grade" in done.stderr and "grading:" not in done.stderr  # no empty bar (sweep 14, D4)
    assert f"note: {base / 'points.csv'} gives no points for 01 masked_weights: each counts 1 point." in done.stderr
    kept = "".join(p.read_text(encoding="utf-8") for p in (base / "out" / ".grading").glob("*.json"))
    assert "student0" not in kept and '"cell"' not in kept and '"printed": ""' in kept


def test_another_class_into_an_out_holding_grades_is_refused_and_the_grades_stay(anonymous, tmp_path, capsys):
    """One --out for two classes: the second replaced the first's grades.csv without a word (sweep 13, o4)."""
    base, _ = anonymous
    before = (base / "out" / "grades.csv").read_bytes()
    other = shutil.copytree(base / "class", tmp_path / "other class")
    assert main([str(other), "--out", str(base / "out")]) == 2
    line = capsys.readouterr().err.strip()
    assert line == (f"✗ --out {base / 'out'} holds the grades of another class ({(base / 'class').resolve()}): pass "
                    f"another --out for this one, or add --again to replace those grades with this class's.")
    assert (base / "out" / "grades.csv").read_bytes() == before


def test_an_anonymous_rerun_over_a_named_run_keeps_no_name(tmp_path):
    """The results a run with names kept in OUT/.grading stayed there, file names and cells as written, after an
    --anonymous run into the same OUT (sweep 15, T08)."""
    write_class(tmp_path / "class", 2, ("01",))
    command = [sys.executable, "-m", "helpers.grade", str(tmp_path / "class"), "--out", str(tmp_path / "out"),
               "--timeout", "5"]
    for extra in ([], ["--anonymous"]):
        done = subprocess.run(command + extra, cwd=ROOT, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
    kept = "".join(p.read_text(encoding="utf-8") for p in (tmp_path / "out" / ".grading").glob("*.json"))
    assert "student0" not in kept and ".ipynb" not in kept and '"printed": ""' in kept


def test_points_weigh_the_total(anonymous):
    base, want = anonymous
    rows = list(csv.DictReader((base / "out" / "grades.csv").read_text(encoding="utf-8-sig").splitlines()))
    weight = {"01 attention_weights": 2, "01 masked_weights": 1, "01 weighted_sum": 0.5}
    for i, row in enumerate(rows, 1):  # --names sorts Ana Lima (student01) first, as student01 was
        name = f"student{i:02d}"
        assert float(row["total"]) == sum(w for c, w in weight.items() if want[name, c] == "✓")
        assert row["out of"] == "3.5"


def test_verdicts_json_holds_each_verdict_with_its_line_and_code(anonymous):
    data = json.loads((anonymous[0] / "out" / "verdicts.json").read_text(encoding="utf-8"))
    verdicts = [v for s in data["students"] for v in s["verdicts"]]
    assert len(verdicts) == 9 and all(v["line"] and v["code"].startswith(v["key"] + ".") for v in verdicts)
    assert all("cell" not in v and v["printed"] == "" for v in verdicts)  # anonymous: the code as graded (no
    # comments), not as written, and nothing the student's code printed (either may carry a name)


@pytest.mark.parametrize("args, words", [
    ([], "no submissions"),
    (["x.ipynb"], "no --out"),
    (["x.ipynb", "--out", "o", "--workers", "0"], "--workers 0"),
    (["x.ipynb", "--out", "o", "--timeout", "0"], "--timeout 0"),
    (["missing.ipynb", "--out", "o"], "No submission missing.ipynb"),
    (["notes.txt", "--out", "o"], "is not an .ipynb"),
])
def test_bad_arguments_are_one_line(tmp_path, capsys, args, words):
    (tmp_path / "notes.txt").write_text("hi")
    before = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert main(args) == 2
    finally:
        os.chdir(before)
    err = capsys.readouterr().err.strip()
    assert words in err and "\n" not in err and not (tmp_path / "o").exists()


def test_a_points_file_with_a_typo_is_refused_before_grading(tmp_path, capsys):
    (tmp_path / "p.csv").write_text("atention_weights,2\n")
    (tmp_path / "a_01.ipynb").write_text("{}")
    assert main([str(tmp_path / "a_01.ipynb"), "--out", str(tmp_path / "o"), "--points", str(tmp_path / "p.csv")]) == 2
    assert "no exercise 'atention_weights'" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "0", "1e308"])  # 1e308 twice would total inf
def test_points_that_are_not_finite_and_positive_are_refused_before_grading(tmp_path, capsys, value):
    (tmp_path / "p.csv").write_text(f"attention_weights,{value}\n")
    (tmp_path / "a_01.ipynb").write_text("{}")
    assert main([str(tmp_path / "a_01.ipynb"), "--out", str(tmp_path / "o"), "--points", str(tmp_path / "p.csv")]) == 2
    err = capsys.readouterr().err.strip()
    assert "finite number above 0" in err and "\n" not in err and not (tmp_path / "o").exists()


def test_a_points_file_may_name_an_exercise_of_a_lesson_not_handed_in(tmp_path):
    """One points file serves the whole course: a class of lesson 01 only is graded and weighed by it."""
    (tmp_path / "p.csv").write_text("exercise,points\nattention_weights,2\none_head,3\n")
    write_class(tmp_path / "class", 1, ("01",))
    assert main([str(tmp_path / "class"), "--out", str(tmp_path / "o"), "--points", str(tmp_path / "p.csv"),
                 "--workers", "1"]) == 0
    (row,) = csv.DictReader((tmp_path / "o" / "grades.csv").read_text(encoding="utf-8-sig").splitlines())
    assert row["out of"] == "4"


@pytest.mark.parametrize("make, words", [
    (lambda base: (base / "class" / "o").mkdir(parents=True), "inside the submissions folder"),
    (lambda base: (base / "o" / "grades.csv").mkdir(parents=True), "grades.csv is a folder"),
])
def test_an_out_the_grader_cannot_use_is_refused_before_grading(tmp_path, capsys, make, words):
    (tmp_path / "class").mkdir()
    (tmp_path / "class" / "a_01.ipynb").write_text("{}")
    make(tmp_path)
    out = tmp_path / "class" / "o" if "inside" in words else tmp_path / "o"
    assert main([str(tmp_path / "class"), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert words in err and "\n" not in err and not (out / ".grading").exists()


NFD_JOSE = "Jose\u0301"  # José as a Mac writes it: e and a combining accent


@pytest.mark.parametrize("option, text, words", [
    ("--names", "key,name\nana,Ana Lima\nbob,Ana Lima\n", "would share one row"),
    ("--names", f"key,name\nana,José\ncy,{NFD_JOSE}\n", "'ana' and 'cy' are both named 'José'"),  # sweep 24, B3
    ("--names", "key,name\nana,Ana Lima\nana,Ana Souza\n", "'ana' is given two names, 'Ana Lima' and 'Ana Souza'"),
    ("--names", 'key,name\nana,"Ana Lima\nbob,Bob Reis\n', "the row of 'ana' runs over several lines"),  # W5
    ("--names", "", "has no key,name rows"),  # W6
    ("--points", "", "has no exercise,points rows"),  # W4
    ("--points", "attention_weights,2\nmasked_weights,\n", "line 2: 'masked_weights' has nothing after the comma"),
    ("--names", "key,name\nana,Ana\n", "is not UTF-8 text"), ("--points", "attention_weights,2\n", "is not UTF-8 text")])
def test_a_names_or_points_file_that_would_lose_work_or_is_not_utf8_is_one_line(tmp_path, capsys, option, text, words):
    (tmp_path / "f.csv").write_text(text, encoding="utf-16" if "UTF-8" in words else "utf-8")
    (tmp_path / "a_01.ipynb").write_text("{}")
    assert main([str(tmp_path / "a_01.ipynb"), "--out", str(tmp_path / "o"), option, str(tmp_path / "f.csv")]) == 2
    err = capsys.readouterr().err.strip()
    assert words in err and "\n" not in err and not (tmp_path / "o").exists(), err


def test_an_out_that_is_a_file_is_refused_before_grading(tmp_path, capsys):
    (tmp_path / "a_01.ipynb").write_text("{}")
    (tmp_path / "o").write_text("not a folder")
    assert main([str(tmp_path / "a_01.ipynb"), "--out", str(tmp_path / "o")]) == 2
    assert "is a file" in capsys.readouterr().err


def test_an_out_that_links_to_a_missing_folder_is_said_so(tmp_path, capsys):
    """It read "cannot write there (File exists)" (sweep 21, I12)."""
    (tmp_path / "a_01.ipynb").write_text("{}")
    (tmp_path / "o").symlink_to(tmp_path / "nowhere")
    assert main([str(tmp_path / "a_01.ipynb"), "--out", str(tmp_path / "o")]) == 2
    assert f"is a link to {tmp_path / 'nowhere'}, which does not exist" in capsys.readouterr().err


def test_bwrap_asked_for_where_it_is_missing_is_one_line(tmp_path, capsys, monkeypatch):
    from helpers.grade import confine
    monkeypatch.setattr(confine.shutil, "which", lambda name: None)
    (tmp_path / "a_01.ipynb").write_text("{}")
    assert main([str(tmp_path / "a_01.ipynb"), "--out", str(tmp_path / "o"), "--sandbox", "bwrap"]) == 2
    assert "bubblewrap is not installed" in capsys.readouterr().err


def test_anonymous_leaves_out_the_students_own_words_in_verdict_lines():
    """An error message or a line of code the student wrote may carry their name ('raise ValueError("Ana")')."""
    from helpers.grade.classroom import _anonymised
    from helpers.grade.results import Row
    lines = ["✗ attention weights: your function raised ValueError: by Ana Lima (inputs: Q, K [5 × 16]; raised "
             "ValueError)", "✗ masked weights: your function uses NEG, which only `NEG = ana_lima()` sets, a line the "
             "grader does not run", "✓ weighted sum: correct on 2 inputs of different sizes"]
    row = Row("Ana Lima", {str(i): {"line": line, "printed": "Ana", "cell": "# Ana", "graded": "NAME = 'Ana Lima'"}
                           for i, line in enumerate(lines)})
    records = _anonymised([row])[0].records.values()
    assert {r["graded"] for r in records} == {"NAME = '…'"}  # nbgrader's NAME cell, taken as a constant
    shown = [r["line"] for r in records]
    assert not any("Ana" in line or "ana_lima" in line for line in shown), shown
    assert shown[0].startswith("✗ attention weights: your function raised ValueError (its message is left out")
    assert shown[2] == lines[2]


def test_a_result_kept_by_another_version_of_the_grader_or_its_checks_is_not_reused(monkeypatch, tmp_path):
    """A rerun after a check was fixed must grade again: the kept result's name holds a checksum of the grader's
    code, the checks and the lessons."""
    from helpers.grade import results
    before = results.kept_name("ana_01.ipynb", b"{}", "10")
    package = tmp_path / "helpers"
    for folder in ("grade", "exercises", "core"):
        shutil.copytree(ROOT / "helpers" / folder, package / folder, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "notebooks", tmp_path / "notebooks")
    monkeypatch.setattr(results, "__file__", str(package / "grade" / "results.py"))
    results.grader_digest.cache_clear()
    try:
        assert results.kept_name("ana_01.ipynb", b"{}", "10") == before  # the same code: the same name
        with open(package / "exercises" / "attention_checks.py", "a") as f:
            f.write("# a fixed check\n")
        results.grader_digest.cache_clear()
        assert results.kept_name("ana_01.ipynb", b"{}", "10") != before
    finally:
        monkeypatch.undo()
        results.grader_digest.cache_clear()


def test_points_for_one_exercise_twice_are_refused(tmp_path, capsys):
    """The last row won without a word; --names refuses its duplicates the same way."""
    (tmp_path / "points.csv").write_text("exercise,points\none_head,2\n02 one_head,3\n")
    (tmp_path / "class").mkdir()
    assert main([str(tmp_path / "class"), "--out", str(tmp_path / "out"), "--points", str(tmp_path / "points.csv")]) == 2
    assert "02 one_head is given points twice ('one_head' and '02 one_head'); keep one row for it." in capsys.readouterr().err


def test_an_export_with_other_options_or_over_an_edited_lesson_is_one_line(tmp_path, capsys):
    assert main(["--nbgrader", str(tmp_path / "nb"), "--otter", str(tmp_path / "ot")]) == 2
    assert "pass it alone" in capsys.readouterr().err and not (tmp_path / "nb").exists()
    assert main(["--otter", str(tmp_path / "ot")]) == 0
    lesson = next((tmp_path / "ot").glob("02_*/02_*.ipynb"))
    lesson.write_text(lesson.read_text() + " ")  # the teacher's edit
    capsys.readouterr()
    assert main(["--otter", str(tmp_path / "ot")]) == 2
    assert "exists and differs from the lesson (edited there?)" in capsys.readouterr().err and lesson.read_text().endswith(" ")
    assert main(["--otter", str(tmp_path / "ot"), "--again"]) == 0 and not lesson.read_text().endswith(" ")
    (tmp_path / "class").mkdir()
    (tmp_path / "class" / "ana_01.ipynb").write_text("{}")  # a class's folder: exported lessons would be read as work
    capsys.readouterr()
    assert main(["--nbgrader", str(tmp_path / "class")]) == 2
    assert "holds notebooks or archives (ana_01.ipynb), a class's submissions?" in capsys.readouterr().err
    assert sorted(p.name for p in (tmp_path / "class").iterdir()) == ["ana_01.ipynb"]


def test_a_points_file_saved_with_semicolons_is_read_and_a_one_field_row_is_one_line(tmp_path):
    """A spreadsheet in a language that writes 0,5 saves `exercise;points` rows: they were skipped without a word,
    and every exercise counted 1."""
    from helpers.grade.results import read_points
    columns = ["01 attention_weights", "01 masked_weights"]
    (tmp_path / "p.csv").write_text("exercise;points\nattention_weights;2\nmasked_weights;0,5\n")
    assert read_points(tmp_path / "p.csv", columns) == {"01 attention_weights": 2.0, "01 masked_weights": 0.5}
    (tmp_path / "commas.csv").write_text("attention_weights;2,5\nmasked_weights;0,5\n")  # every row (sweep 14, D14)
    assert read_points(tmp_path / "commas.csv", columns) == {"01 attention_weights": 2.5, "01 masked_weights": 0.5}
    (tmp_path / "header.csv").write_text("Exercise,Points\nattention_weights,2\n")  # a header in capitals (sweep 26)
    assert read_points(tmp_path / "header.csv", columns)["01 attention_weights"] == 2.0
    (tmp_path / "sep.csv").write_text("sep=;\nattention_weights;2\n")  # Excel's first line naming the separator
    assert read_points(tmp_path / "sep.csv", columns)["01 attention_weights"] == 2.0
    (tmp_path / "one.csv").write_text("attention_weights 2\n")
    with pytest.raises(ValueError, match=r"line 1: 'attention_weights 2' is one field; write exercise,points"):
        read_points(tmp_path / "one.csv", columns)


@pytest.mark.parametrize("stop", ["SIGTERM", "SIGHUP", "SIGINT"])
def test_a_stop_while_the_results_are_written_finishes_them_first(anonymous, tmp_path, monkeypatch, capsys, stop):
    """A kill while the report was drawn left grades.csv without its pictures, a temporary file and no word
    (sweep 18, sighup_report/sigterm_report/sigint_report): the files are now finished as a set, then said."""
    import signal

    from helpers.grade import __main__ as command

    base, _ = anonymous
    out = shutil.copytree(base / "out", tmp_path / "out")
    for name in ("grades.csv", "class_report.png", "class_report.pdf"):
        (out / name).unlink()
    real = command.write_outputs

    def interrupted(*args, **kwargs):
        os.kill(os.getpid(), getattr(signal, stop))  # as `kill PID`, a closed terminal, or Ctrl-C
        return real(*args, **kwargs)

    monkeypatch.setattr(command, "write_outputs", interrupted)
    code = main([str(base / "class"), "--out", str(out), "--anonymous", "--points", str(base / "points.csv"),
                 "--names", str(base / "names.csv"), "--timeout", "5"])
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert code == 128 + getattr(signal, stop)
    assert err == f"✗ Stopped ({stop}) while writing the results: they were finished first, every file is complete."
    assert all((out / name).is_file() for name in ("grades.csv", "class_report.png", "class_report.pdf"))
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize("stop", ["SIGINT", "SIGTERM", "SIGHUP"])
def test_ctrl_c_or_a_kill_while_the_grader_loads_is_one_line(tmp_path, stop):
    """Ctrl-C in the first second (torch loading) printed a traceback (sweep 18, sigint_early); SIGTERM or SIGHUP
    then stopped the grader without a word (sweep 30, WEAK-9)."""
    import signal
    import time

    run = subprocess.Popen([sys.executable, "-m", "helpers.grade", str(tmp_path), "--out", str(tmp_path / "o")],
                           cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.6)  # Python is up and the grader's imports (torch: a second or more here) are under way
    run.send_signal(getattr(signal, stop))
    _, err = run.communicate(timeout=120)
    if run.returncode == 2:  # the signal came outside the imports (a fast machine): refused as an empty class
        pytest.skip("the signal did not land while the grader was loading")
    assert run.returncode == 128 + getattr(signal, stop) and "Traceback" not in err, err[-2000:]
    said = "Ctrl-C" if stop == "SIGINT" else stop
    assert err.strip() == f"✗ Stopped ({said}) before any notebook was graded: nothing was written."


def test_files_that_are_no_students_are_said_on_the_console_and_in_the_report(tmp_path, capsys):
    """An entry of the class's zip that climbs out with ../ was said only in verdicts.json (sweep 18, zip_traversal)."""
    import zipfile

    from helpers.grade.lessons import lessons

    lesson = Path(lessons()["01"].path).read_bytes()
    with zipfile.ZipFile(tmp_path / "class.zip", "w") as archive:
        archive.writestr("ana_01.ipynb", lesson)
        archive.writestr("../evil_01.ipynb", lesson)
    assert main([str(tmp_path / "class.zip"), "--out", str(tmp_path / "out"), "--workers", "1"]) == 0
    line = "class.zip: ../evil_01.ipynb has a path that climbs out with ../: not read."
    assert f"skipped: {line}" in capsys.readouterr().err.splitlines()
    page = (tmp_path / "out" / "class_report.html").read_text(encoding="utf-8")
    assert '<p class="note" id="inputs"></p>' in page and json.dumps(line)[1:-1] in page


@pytest.mark.slow  # a copy of the project without one model, and a class graded in it
def test_a_lesson_whose_setup_fails_in_the_grader_writes_no_gradebook_and_keeps_no_failure(tmp_path):
    """A copy without data/classroom.safetensors: lessons 05 and 06 lost their columns and every total read 3/3,
    rc 0, nothing on the console (sweep 18, broken_data_grade)."""
    from helpers.grade.lessons import lessons

    copy = tmp_path / "proj"
    for part in ("helpers", "notebooks", "data"):
        shutil.copytree(ROOT / part, copy / part, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "data" / "classroom.safetensors").unlink()
    (tmp_path / "class").mkdir()
    for number in ("01", "05"):
        shutil.copy(lessons()[number].path, tmp_path / "class" / f"ana_{number}.ipynb")
    command = [sys.executable, "-m", "helpers.grade", str(tmp_path / "class"), "--out", str(tmp_path / "out"),
               "--workers", "1"]
    env = dict(os.environ, PYTHONPATH=str(copy))
    done = subprocess.run(command, cwd=copy, capture_output=True, text=True, timeout=600, env=env)
    line = done.stderr.strip().splitlines()[-1]
    assert done.returncode == 2 and line.startswith("✗ the setup of lesson 05 failed in the grader (")
    assert "classroom.safetensors is missing" in line and "helpers.doctor --grading" in line
    assert "(the 1 other notebook graded now is kept, not graded again); no grades were written" in line
    assert not (tmp_path / "out" / "grades.csv").exists()
    shutil.copy(ROOT / "data" / "classroom.safetensors", copy / "data")  # mended: the rerun grades 05 only
    again = subprocess.run(command, cwd=copy, capture_output=True, text=True, timeout=600, env=env)
    assert again.returncode == 0 and "kept 1 result from an earlier run" in again.stderr, again.stderr[-2000:]
    rows = list(csv.DictReader((tmp_path / "out" / "grades.csv").read_text(encoding="utf-8-sig").splitlines()))
    assert any(column.startswith("05 ") for column in rows[0])


def test_the_same_class_with_another_lesson_beside_it_is_not_another_class(tmp_path):
    """--out graded for class/01, then class/01 and class/02 together: refused as "another class" (sweep 18)."""
    from helpers.grade.__main__ import CLASS_FILE, _check, _parser

    for folder in ("01", "02", "other"):
        (tmp_path / folder).mkdir()
    out = tmp_path / "out"
    (out / ".grading").mkdir(parents=True)
    (out / "grades.csv").write_text("student\n")
    (out / ".grading" / CLASS_FILE).write_text(json.dumps([str((tmp_path / "01").resolve())]))
    _check(_parser().parse_args([str(tmp_path / "01"), str(tmp_path / "02"), "--out", str(out)]))
    with pytest.raises(ValueError, match="holds the grades of another class"):
        _check(_parser().parse_args([str(tmp_path / "other"), "--out", str(out)]))


def test_a_second_stop_while_the_results_are_written_stops_at_once(anonymous, tmp_path, monkeypatch, capsys):
    """A write that hangs (a full or lost disk) must still be stoppable: the second Ctrl-C is obeyed."""
    import signal

    from helpers.grade import __main__ as command

    base, _ = anonymous
    out = shutil.copytree(base / "out", tmp_path / "out")

    def hanging(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGINT)
        os.kill(os.getpid(), signal.SIGINT)  # the second raises here, before anything is written
        raise AssertionError("not reached")

    monkeypatch.setattr(command, "write_outputs", hanging)
    code = main([str(base / "class"), "--out", str(out), "--anonymous", "--points", str(base / "points.csv"),
                 "--names", str(base / "names.csv"), "--timeout", "5"])
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert code == 130 and err.startswith("✗ Stopped (Ctrl-C) twice while writing the results: every notebook was "
                                          "graded and is kept in ")


def test_a_names_key_in_another_case_names_the_files_student():
    """`ANA,Ana Lima` for ana_01.ipynb gave the work one row and Ana Lima another, with 0 (sweep 26, R06)."""
    from helpers.grade.classroom import _keyed_as_the_files
    from helpers.grade.submissions import Submission
    subs = [Submission("ana", "ana_01.ipynb"), Submission("bruno", "bruno_01.ipynb"), Submission("Cy", "Cy_01.ipynb"),
            Submission("cy", "cy_02.ipynb")]
    assert _keyed_as_the_files({"ANA": "Ana Lima", "Bruno": "Bruno Silva", "CY": "Cy Reis"}, subs) == {
        "ana": "Ana Lima", "bruno": "Bruno Silva", "CY": "Cy Reis"}  # Cy and cy: which one is meant is not known
    # a key written as the file's name, or as a platform's id alone, was "not submitted" beside the work (sweep 29,
    # W2, W3); an id that fits two students, or a file key with a row of its own, is left as written
    subs += [Submission("Bruno Costa (4400)", "m/Bruno Costa_4400_assignsubmission_file_/01.ipynb"),
             Submission("limaana (77)", "limaana_77_01.ipynb"), Submission("Ana Lima (77)", "Ana Lima_77_x_/01.ipynb")]
    assert _keyed_as_the_files({"ana_01.ipynb": "Ana Lima", "4400": "Bruno Costa", "77": "Ana L.",
                                "bruno_01.ipynb": "B", "bruno": "Bruno"}, subs) == {
        "ana": "Ana Lima", "Bruno Costa (4400)": "Bruno Costa", "77": "Ana L.", "bruno_01.ipynb": "B", "bruno": "Bruno"}


def test_a_full_disk_while_writing_says_that_what_was_graded_is_kept(anonymous, tmp_path, monkeypatch, capsys):
    """The line read "… Nothing was changed there." while .grading held what the run graded (sweep 27, E09)."""
    import errno

    import helpers.grade.__main__ as command
    base, _ = anonymous
    shutil.copytree(base / "out", tmp_path / "out")

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "Could not write grades.csv into out (No space left on device); free some disk "
                                    "space or pass folder= another directory. Nothing was changed there.")
    monkeypatch.setattr(command, "write_outputs", full)
    assert main([str(base / "class"), "--out", str(tmp_path / "out"), "--anonymous", "--points",
                 str(base / "points.csv"), "--names", str(base / "names.csv"), "--timeout", "5"]) == 2
    said = capsys.readouterr().err
    assert "Nothing was changed there" not in said and "pass --out another folder" in said
    assert "The 3 notebook(s) graded so far are kept in" in said, said
