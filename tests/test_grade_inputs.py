"""The grader's reading of submissions: damaged notebooks, odd names, archives that attack, and what is
taken from a notebook. No lesson setup and no grading here: these run in well under a second each."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import unicodedata
import zipfile
from pathlib import Path, PurePosixPath

import pytest
import torch

from helpers.grade import definitions, submissions
from helpers.grade.definitions import cells_of
from helpers.grade.lessons import lessons, which_lesson
from helpers.grade.submissions import collect, names_no_student, read_zip, student_key
from helpers.grade.synthetic import notebook


def _nb(cells, nbformat=4, minor=5) -> dict:
    return {"nbformat": nbformat, "nbformat_minor": minor, "metadata": {}, "cells": cells}


def _md(text):
    return {"cell_type": "markdown", "metadata": {}, "source": text}


def _code(text, outputs=()):
    return {"cell_type": "code", "metadata": {}, "source": text, "outputs": list(outputs), "execution_count": None}


def _bytes(nb) -> bytes:
    return json.dumps(nb).encode()


def test_a_truncated_notebook_is_one_line():
    data = _bytes(notebook(lessons()["01"].path, {}))
    cells, problem = cells_of(data[: len(data) // 2])
    assert cells is None and "not JSON" in problem and "\n" not in problem


def test_a_file_that_is_not_json_is_one_line():
    cells, problem = cells_of(b"\x89PNG\r\n\x1a\n\x00\x00")
    assert cells is None and "not a notebook" in problem


def test_nbformat_3_is_refused_with_the_fix():
    cells, problem = cells_of(_bytes({"nbformat": 3, "nbformat_minor": 0, "worksheets": [{"cells": []}], "metadata": {}}))
    assert cells is None and "nbformat 3" in problem and "save it again" in problem


def test_a_newer_minor_version_is_read():
    nb = notebook(lessons()["02"].path, {})
    nb["nbformat_minor"] = 99
    cells, problem = cells_of(_bytes(nb))
    assert problem == "" and which_lesson(cells, lessons()) == "02"


def test_the_lesson_comes_from_the_content_not_the_file_name(tmp_path):
    path = tmp_path / "ana_01_single_head_attention.ipynb"  # the name says 01, the notebook is 03
    path.write_bytes(_bytes(notebook(lessons()["03"].path, {})))
    (sub,), _ = collect([path])
    assert which_lesson(cells_of(sub.data)[0], lessons()) == "03"


def test_without_a_heading_the_exercises_name_the_lesson():
    cells, _ = cells_of(_bytes(_nb([_code("def split_heads(x, n_heads):\n    return x\n")])))
    assert which_lesson(cells, lessons()) == "02"


def test_a_notebook_of_no_lesson_is_refused():
    cells, _ = cells_of(_bytes(_nb([_md("# My holiday"), _code("print(1)")])))
    with pytest.raises(ValueError, match="is no lesson"):
        which_lesson(cells, lessons())


def test_two_lessons_merged_are_refused():
    one, two = notebook(lessons()["01"].path, {}), notebook(lessons()["02"].path, {})
    cells, _ = cells_of(_bytes(_nb(one["cells"] + two["cells"])))
    with pytest.raises(ValueError, match="lessons 01 and 02"):
        which_lesson(cells, lessons())


def test_outputs_of_50_mb_are_dropped_as_the_file_is_read():
    nb = notebook(lessons()["01"].path, {})
    nb["cells"].append(_code("print('x')", [{"output_type": "stream", "name": "stdout", "text": "x" * (50 << 20)}]))
    data = _bytes(nb)
    assert len(data) > 50 << 20
    cells, problem = cells_of(data)
    assert problem == "" and all("outputs" not in c for c in cells) and which_lesson(cells, lessons()) == "01"


def test_10000_cells_are_read():
    nb = notebook(lessons()["07"].path, {})
    nb["cells"] += [_code(f"x{i} = {i}") for i in range(10_000)]
    cells, problem = cells_of(_bytes(nb))
    assert problem == "" and len(cells) > 10_000 and which_lesson(cells, lessons()) == "07"


@pytest.mark.parametrize("name, student", [
    ("Ana Lima_4321_assignsubmission_file_01.ipynb", "Ana Lima (4321)"),  # Moodle: name and participant id
    ("Ana Lima_5555_assignsubmission_file_01.ipynb", "Ana Lima (5555)"),  # … another Ana Lima
    ("limaana_4321_98765_01_single_head_attention.ipynb", "limaana (4321)"),  # Canvas: login and user id
    ("limaana_LATE_4321_98765_lesson.ipynb", "limaana (4321)"),
    ("johnson_katherine_01.ipynb", "johnson_katherine"),  # last_first_NN
    ("johnson_bob_01.ipynb", "johnson_bob"),
    ("ana_01-1.ipynb", "ana"),  # a platform's re-upload
    ("dan_01 (1).ipynb", "dan"),  # a browser's second download of the same file
    ("student07_03.ipynb", "student07"),
    ("O'Brien; \"Zoë\" Ñandú_77_x.ipynb", "O'Brien; \"Zoë\" Ñandú"),
    ("plain name.ipynb", "plain name"),
    ("bad\nname_1.ipynb", "bad name"),
    ("Zoe\u0308_01.ipynb", "Zo\u00eb"),  # NFD (a Mac's zip) and NFC are one spelling
    ("smith_2_01.ipynb", "smith_2"), ("smith_3_01.ipynb", "smith_3"),  # two students, not one "smith"
    ("ana_1.ipynb", "ana"), ("ana_01_2.ipynb", "ana"), ("ana_lesson1.ipynb", "ana"),
    ("team_1/01_single_head_attention.ipynb", "team_1"), ("team_2/notebook.ipynb", "team_2"),  # a folder: all of it
    ("Ana Lima 01.ipynb", "Ana Lima"), ("bo-chen-02.ipynb", "bo-chen"),  # a space or `-` before the lesson's number
    ("ana_01 - Copy.ipynb", "ana"), ("carla_01 copy.ipynb", "carla"),  # Windows' and macOS's duplicates
    ("Copy of dan_01.ipynb", "dan"), ("Ana Lima - Copy of 01_single_head_attention.ipynb", "Ana Lima"),
    ("José Núñez 04 cabezas.ipynb", "José Núñez"), ("Student 12_01.ipynb", "Student 12"),
    ("Lesson 01 - Ana Lima.ipynb", "Ana Lima"), ("Lesson 02 - Ana Lima (1).ipynb", "Ana Lima"),  # the lesson first
    ("01_single_head_attention - Chloé Dupont.ipynb", "Chloé Dupont"),  # its own file name first (sweep 18)
    ("Copy of 01_single_head_attention - Chloé Dupont.ipynb", "Chloé Dupont"),
    ("lab1_bo.ipynb", "bo"), ("lab2_ana_01.ipynb", "ana"), ("01_single_head_attention.ipynb", "01_single_head_attention"),  # not renamed: the file
    # a lesson's words and numbers only, no name: the whole file name, so two such files are never one student
    ("hw3_01.ipynb", "hw3_01"), ("lab2_01.ipynb", "lab2_01"), ("ex4_01.ipynb", "ex4_01"), ("Lesson 01.ipynb", "Lesson 01"),
    ("tom2_01.ipynb", "tom2"),  # a name with a digit (sweep 24, B4)
    # sweep 26: the lesson's bare number first; Blackboard's user name; a folder per lesson holds students
    ("01_carla.ipynb", "carla"), ("02_carla.ipynb", "carla"), ("01_Ana Lima.ipynb", "Ana Lima"),
    ("Lesson01_ana.lima_attempt_2026-12-01-10-00-00_01.ipynb", "ana.lima"),
    ("Lesson01_bruno.silva_attempt_2026-12-01-12-30-00_01_single_head_attention.ipynb", "bruno.silva"),
    ("Lesson 01/ana_01.ipynb", "ana"), ("lesson01/Ana Lima/Submitted files/01.ipynb", "Ana Lima"),
    # sweep 28, D13: a second download of a file that names no one was "single_head_attention", "(1)", or one
    # row with the first; it is its own row, said to name no student
    ("01_single_head_attention (1).ipynb", "01_single_head_attention (1)"), ("hw3_01 (1).ipynb", "hw3_01 (1)"),
    ("Untitled0 (1).ipynb", "Untitled0 (1)"), ("Untitled0 - Copy.ipynb", "Untitled0 - Copy"),
    ("2024_ana_01.ipynb", "2024_ana"), ("Copy of 01_single_head_attention.ipynb", "Copy of 01_single_head_attention"),
])
def test_the_student_is_the_platforms_whole_participant_key(name, student):
    assert student_key(PurePosixPath(name)) == student
    assert names_no_student(student) == (student[:1].isdigit() and student != "2024_ana" or student in (
        "hw3_01", "lab2_01", "ex4_01", "Lesson 01", "hw3_01 (1)", "Untitled0 (1)", "Untitled0 - Copy",
        "Copy of 01_single_head_attention"))


def test_inside_a_folder_the_folder_names_the_student():
    assert student_key(PurePosixPath("Ana Lima_4321_assignsubmission_file_/lesson.ipynb")) == "Ana Lima (4321)"


@pytest.mark.parametrize("paths, students", [
    (["Lesson 01 submissions/Ana Lima_4321_assignsubmission_file_/01.ipynb",  # Moodle's folders, zipped again
      "Lesson 01 submissions/Bo Chen_4322_assignsubmission_file_/01.ipynb"], {"Ana Lima (4321)", "Bo Chen (4322)"}),
    (["class/ana_01.ipynb", "class/bo_01.ipynb"], {"ana", "bo"}),  # a folder of the class's files, zipped
    (["ana/01_single_head_attention.ipynb", "ana/02_multi_head_attention.ipynb"], {"ana"}),  # one student's folder
    (["work/ana/ana_01.ipynb", "work/ana/ana_02.ipynb"], {"ana"}),
    (["ana_01/notebook.ipynb", "ana_01/notes.txt"], {"ana_01"}),  # a folder counts whole; notes.txt names no one
    # a folder of late files beside the platform's download was one student, one notebook graded
    (["moodle/Ana Lima_4321_assignsubmission_file_/01.ipynb", "late/Ana Lima_01.ipynb", "late/Cy Diaz_01.ipynb"],
     {"Ana Lima (4321)", "Ana Lima", "Cy Diaz"}),
    (["ana/ana_01.ipynb", "ana/Ana_02.ipynb", "bo/bo_01.ipynb"], {"ana", "bo"}),  # one student's, however spelled
])
def test_a_folder_around_the_whole_class_is_looked_through(tmp_path, paths, students):
    entries = [(p, b"{}") for p in paths]  # who it belongs to comes from the path alone
    found, _ = read_zip(_zip(tmp_path / "class.zip", entries))
    assert {s.student for s in found} == students
    for p, data in entries:
        (tmp_path / "folder" / p).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "folder" / p).write_bytes(data)
    assert {s.student for s in collect([tmp_path / "folder"])[0]} == students


@pytest.mark.parametrize("named, files, students", [
    (["class/ana", "class/bo"], ["class/ana/01_single_head_attention.ipynb", "class/bo/01_single_head_attention.ipynb",
                                 "class/bo/02_shrinking_the_head.ipynb"], {"ana", "bo"}),
    (["zips/ana.zip", "zips/bo.zip"], ["zips/ana.zip", "zips/bo.zip"], {"ana", "bo"}),
    (["m/Ana Lima_4321_assignsubmission_file_", "m/Bo Chen_77_assignsubmission_file_"],
     ["m/Ana Lima_4321_assignsubmission_file_/01.ipynb", "m/Bo Chen_77_assignsubmission_file_/01.ipynb"],
     {"Ana Lima (4321)", "Bo Chen (77)"}),
    (["t/Ana Lima", "t/Bo"], ["t/Ana Lima/Submitted files/01.ipynb", "t/Ana Lima/Working files/01.ipynb",
                              "t/Bo/Submitted files/01.ipynb"], {"Ana Lima", "Bo"}),
    (["one"], ["one/01_single_head_attention.ipynb"], {"one"}),  # one notebook that names no one: its folder's
    # named alone, or holding files that name their students, a folder is read as before
    (["late"], ["late/Ana Lima_01.ipynb"], {"Ana Lima"}),
    (["late", "class/ana"], ["late/Ana Lima_01.ipynb", "late/cy_01.ipynb", "class/ana/01.ipynb"], {"Ana Lima", "cy", "ana"}),
    (["nameless"], ["nameless/01_single_head_attention.ipynb", "nameless/Untitled0.ipynb"],
     {"01_single_head_attention", "Untitled0"}),
])
def test_folders_and_zips_named_one_by_one_are_their_students(tmp_path, named, files, students):
    """`grade class/*` (a folder, a zip or a platform's folder per student) made the class one row, read from the
    lesson's file name, one notebook graded (sweep 28, D14, D15); Teams' folders became students called
    "Submitted files" and "Working files" (D04)."""
    for f in files:
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        if f.endswith(".zip"):
            _zip(tmp_path / f, [("01_single_head_attention.ipynb", b"{}")])
        else:
            (tmp_path / f).write_bytes(b"{}")
    assert {s.student for s in collect([tmp_path / n for n in named])[0]} == students


def test_sweep_29s_layouts_are_read_as_their_students(tmp_path):
    """A Teams "Submitted files" folder named alone was a student called "Submitted files" (B2, B6); a Mac's zip of
    the class, with __MACOSX/ and .DS_Store, was one student "class" (B3); `bb/*` named Blackboard's receipts and
    the class was refused (B4); a Teams draft in a student's own zip was graded over what was submitted (B1)."""
    for f in ("t/Ana Lima/Submitted files/01.ipynb", "t/Bo/Submitted files/01.ipynb",
              "bb/Lesson01_ana.lima_attempt_2026-12-01-10-00-00_01.ipynb", "bb/Lesson01_ana.lima_attempt_2026-12-01-10-00-00.txt",
              "bb/Lesson01_bo_attempt_2026-12-01-11-00-00_01.ipynb", "bb/notes.md"):
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f).write_bytes(b"{}")
    assert {s.student for s in collect([tmp_path / "t/Ana Lima/Submitted files"])[0]} == {"Ana Lima"}
    assert {s.student for s in collect([tmp_path / "t/Ana Lima/Submitted files", tmp_path / "t/Bo/Submitted files"])[0]} \
        == {"Ana Lima", "Bo"}
    found = collect(sorted((tmp_path / "bb").iterdir()))[0]
    assert {s.student for s in found} == {"ana.lima", "bo", "notes"}
    assert [s.problem for s in found if s.student == "notes"] != [None] and not any(".txt" in s.source for s in found)
    mac = _zip(tmp_path / "class.zip", [("class/ana/01.ipynb", b"{}"), ("class/bo/01.ipynb", b"{}"),
                                        ("__MACOSX/class/ana/._01.ipynb", b"x"), ("class/.DS_Store", b"x")])
    assert {s.student for s in read_zip(mac)[0]} == {"ana", "bo"}
    assert submissions.in_teams_draft("Ana Lima.zip: Working files/01.ipynb")
    assert not submissions.in_teams_draft("Ana Lima.zip: Submitted files/01.ipynb")
    assert not names_no_student("2024_fred")  # a name with a year in front is a name (B7)


def test_sweep_29s_late_folder_and_capitals_are_said(tmp_path):
    """A late/ folder with one student's file beside Moodle's participant folders was a row called "late" (B5);
    "ana", "Ana" and "ANA" were three rows whose note did not say they differ only in capitals (W4)."""
    from helpers.grade.classroom import _names
    for f in ("dl/Ana Lima_4321_assignsubmission_file_/01.ipynb", "dl/Bo Costa_4400_assignsubmission_file_/01.ipynb",
              "dl/late/carla_01.ipynb", "solo/late/carla_01.ipynb", "solo/dan_01.ipynb"):
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f).write_bytes(b"{}")
    assert {s.student for s in collect([tmp_path / "dl"])[0]} == {"Ana Lima (4321)", "Bo Costa (4400)", "carla"}
    assert {s.student for s in collect([tmp_path / "solo"])[0]} == {"late", "dan"}  # no platform: a folder is whole
    shown = _names(["ana", "Ana", "ANA", "bo"])
    assert sorted(name for name, _ in shown.values()) == ["ANA", "Ana (2)", "ana (3)", "bo"]
    assert shown["Ana"][1] == ("This file name differs from another's only in capitals (ANA, Ana, ana): shown as "
                               "'Ana (2)', not merged; if they are one student, give their files one name.")
    assert shown["bo"][1] == ""


@pytest.mark.parametrize("name, key", [
    ("ana_single_head_attention.ipynb", "ana"), ("01_single_head_attention_ana.ipynb", "ana"),
    ("Ana Lima - Shrinking the head.ipynb", "Ana Lima"), ("ana_01_single_head_attention_v2.ipynb", "ana"),
    ("02_shrinking_the_head_ana_lima.ipynb", "ana_lima"), ("ana_attention.ipynb", "ana_attention"),
])
def test_a_lessons_own_name_in_a_file_name_is_no_part_of_the_student(name, key):
    """`ana_single_head_attention.ipynb` and `ana_shrinking_the_head.ipynb` were two students,
    "ana_single_head_attention" and "ana_shrinking_the_head": one student, two rows (found reading student_key)."""
    assert student_key(PurePosixPath(name)) == key and not names_no_student(key)


@pytest.mark.parametrize("name", ["hw_single_head_attention_01.ipynb", "single_head_attention.ipynb",
                                  "01_single_head_attention (1).ipynb", "Copy of Untitled0.ipynb", "lab2_01.ipynb"])
def test_a_name_made_of_a_lesson_and_numbers_names_no_student_and_is_kept_whole(name):
    key = student_key(PurePosixPath(name))
    assert key == name.removesuffix(".ipynb") and names_no_student(key)


def test_sweep_30s_backups_in_folders_drafts_and_spacings(tmp_path):
    """A copy kept in old/ or backup/ was graded over the student's notebook, its path sorting last (BAD-2);
    dee/ holding "lesson1 draft" and "lesson1 final" became students "draft" and "final" (BAD-3); "Ana Lima 01"
    and "ana_lima_02" were two rows without a word (BAD-4)."""
    from helpers.grade.classroom import _names, upload_order
    for f in ("class/ana/01_single_head_attention.ipynb", "class/ana/old/01_single_head_attention.ipynb",
              "class/bo/backup/01.ipynb", "class/bo/01.ipynb", "class/dee/lesson1 draft.ipynb",
              "class/dee/lesson1 final.ipynb"):
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f).write_bytes(b"{}")
    found = collect([tmp_path / "class"])[0]
    assert {s.student for s in found} == {"ana", "bo", "dee"}
    for student in ("ana", "bo", "dee"):
        graded = sorted((s.source for s in found if s.student == student), key=upload_order)[-1]
        assert not any(word in graded for word in ("/old/", "/backup/", "draft")), graded
    assert names_no_student(student_key(PurePosixPath("lesson1 final.ipynb")))
    shown = _names(["Ana Lima", "ana_lima", "Bo"])
    assert shown["ana_lima"][1].startswith("Another row's name differs from this one only in capitals, spaces, _ or - "
                                           "(Ana Lima, ana_lima)") and shown["Bo"][1] == ""


def test_a_teachers_readme_or_receipt_beside_the_class_is_no_student(tmp_path):
    """`class/README.md` and `class/receipt.txt` became students "README" and "receipt" with 0 points (sweep 30,
    WEAK-8); a student's own .pdf still gets its row, and so does a file in a student's folder."""
    for f in ("class/README.md", "class/receipt.txt", "class/ana_01.pdf", "class/cy/cy_notes.txt", "class/bo_01.ipynb"):
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f).write_bytes(b"{}")
    found = collect([tmp_path / "class"])[0]
    rows = {s.student for s in found if not s.skipped}
    assert rows == {"ana", "bo", "cy"} and {s.student for s in found if s.skipped} == {"README", "receipt"}
    assert all("no student's notebook" in s.problem for s in found if s.skipped)


def _zip(path: Path, entries: list[tuple[zipfile.ZipInfo | str, bytes]]) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        for info, data in entries:
            z.writestr(info, data)
    return path


def _symlink(name: str, target: str) -> tuple[zipfile.ZipInfo, bytes]:
    info = zipfile.ZipInfo(name)
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info, target.encode()


def test_zip_slip_absolute_paths_and_symlinks_are_skipped_and_nothing_is_extracted(tmp_path):
    good = _bytes(notebook(lessons()["01"].path, {}))
    archive = _zip(tmp_path / "class.zip", [("../../evil_01.ipynb", good), ("/etc/evil_01.ipynb", good),
                                            _symlink("link_01.ipynb", "/etc/passwd"), ("ana_01.ipynb", good)])
    before = sorted(p for p in tmp_path.parent.rglob("*") if p.name == "evil_01.ipynb")  # not other tests' files
    subs, _ = read_zip(archive)
    assert [s.student for s in subs if s.data is not None] == ["ana"]
    assert [s.student for s in subs if s.skipped] == ["evil", "evil"]  # paths that escape: no row of their own
    notes = [s.problem for s in subs if s.problem]
    assert len(notes) == 3 and any("../" in n for n in notes) and any("absolute" in n for n in notes) \
        and any("symbolic link" in n for n in notes)
    assert sorted(p for p in tmp_path.parent.rglob("*") if p.name == "evil_01.ipynb") == before == []
    assert not Path("/etc/evil_01.ipynb").exists()


def test_a_zip_of_10000_files_is_refused(tmp_path):
    archive = _zip(tmp_path / "bomb.zip", [(f"f{i}.ipynb", b"{}") for i in range(10_000)])
    with pytest.raises(ValueError, match="10000 files, more than"):
        read_zip(archive)


def test_a_zip_past_the_size_limit_is_refused_before_it_is_unpacked(tmp_path, monkeypatch):
    monkeypatch.setattr(submissions, "MAX_ZIP_BYTES", 1 << 20)
    archive = tmp_path / "bomb.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("big_01.ipynb", b"0" * (4 << 20))  # 4 MB of zeros packs into a few KB
    assert archive.stat().st_size < 100_000
    with pytest.raises(ValueError, match="zip bomb"):
        read_zip(archive)


def test_one_entry_past_the_notebook_limit_is_its_own_row_not_a_zip_bomb(tmp_path, monkeypatch):
    """One 1.5 GB notebook in a class's zip refused the whole class as a zip bomb (sweep 21, B06)."""
    monkeypatch.setattr(submissions, "MAX_ZIP_BYTES", 1 << 20)
    monkeypatch.setattr(submissions, "MAX_NOTEBOOK_BYTES", 1 << 19)
    good = _bytes(notebook(lessons()["01"].path, {}))
    archive = tmp_path / "class.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("ana_01.ipynb", good)
        z.writestr("carl_01.ipynb", b" " * (4 << 20))  # past the notebook limit, and alone past the zip's
    found = {sub.student: sub for sub in read_zip(archive)[0]}
    assert found["ana"].data == good and found["carl"].data is None
    assert "is larger than" in found["carl"].problem and "Clear Outputs of All Cells" in found["carl"].problem


def test_a_bad_zip_in_a_folder_is_a_line_in_its_owners_row_and_the_others_are_read(tmp_path):
    """A student's zip that is not a zip was said only in verdicts.json, and the student had no row (sweep 18)."""
    (tmp_path / "ana_01.ipynb").write_bytes(_bytes(notebook(lessons()["01"].path, {})))
    (tmp_path / "dee.zip").write_bytes(b"PK\x03\x04 not really")
    subs, notes = collect([tmp_path])
    assert [s.student for s in subs] == ["ana", "dee"] and notes == []
    dee = subs[1]
    assert not dee.skipped and dee.data is None
    assert dee.problem.startswith("is not a readable zip (") and dee.problem.endswith("ask the student for the .ipynb files")


# --- what is taken from a notebook for one exercise ----------------------------------------------------
def _take(*sources, name="attention_weights"):
    return definitions.take([_code(s) for s in sources], name)


@pytest.mark.parametrize("invisible", ["\ufeff", "\u200b"])
def test_an_invisible_character_pasted_before_def_is_a_cell_that_does_not_run_not_no_attempt(invisible):
    """A BOM or a zero-width space before `def attention_weights` read "not attempted (the notebook defines no
    attention_weights)"; Jupyter fails that cell with a SyntaxError, as the grader now says (sweep 23)."""
    taken = _take(invisible + "def attention_weights(Q, K):\n    return Q\n")
    assert taken.code is None and "does not run: SyntaxError" in taken.problem
    assert f"U+{ord(invisible):04X}" in taken.problem


def test_only_plain_definitions_are_taken_never_the_check_or_top_level_code():
    taken = _take("import math\nEPS = 1e-9\nprint('✓ attention weights')\nH.check_attention_weights = None\n"
                  "def helper(x):\n    return x\ndef attention_weights(Q, K):\n    return helper(Q)\n"
                  "H.check_attention_weights(attention_weights)\n")
    assert taken.problem == ""
    assert "import math" in taken.code and "EPS = 1e-09" in taken.code and "def helper" in taken.code
    assert "print" not in taken.code and "check_attention_weights" not in taken.code


def test_imports_and_definitions_of_the_cells_above_are_taken_as_the_notebook_ran_them():
    """`import math` in the first cell and a helper in another: a right answer was graded 'uses math, which is
    not defined in it'."""
    taken = _take("import math\nimport torch.nn.functional as F\nprint('setup')", "def my_softmax(x):\n    return F.softmax(x, -1)",
                  "x = run_something()", "def attention_weights(Q, K):\n    return my_softmax(Q @ K.T / math.sqrt(Q.shape[-1]))")
    assert taken.problem == "" and "import math" in taken.code and "import torch.nn.functional as F" in taken.code
    assert "def my_softmax" in taken.code and "print" not in taken.code and "run_something" not in taken.code
    assert taken.left_out == {"x": "x = run_something()"}


def test_an_import_above_that_fails_here_costs_only_its_own_names():
    """`import seaborn` in the first cell (installed on the student's laptop, not where the class is graded) would
    otherwise make every exercise 'raised'."""
    taken = _take("import math\nimport no_such_module_here\nSCALE = 1 / 0", "def attention_weights(Q, K):\n    return Q\n")
    namespace = {}
    exec(taken.code, namespace)
    assert "attention_weights" in namespace and "math" in namespace and "SCALE" not in namespace


def test_a_constant_set_again_by_a_left_out_line_is_not_graded_with_its_old_value():
    """POWER = 1, then POWER = 0.5 + 0 * d (not run by the grader): the function was graded with POWER = 1."""
    taken = _take("POWER = 1\nPOWER = 0.5 + 0 * d\nPOWER *= 2\ndef attention_weights(Q, K):\n    return Q ** POWER\n")
    assert "POWER" not in taken.code.replace("Q ** POWER", "") and taken.left_out["POWER"] == "POWER *= 2"


def test_a_tuple_of_constants_and_an_annotated_constant_are_taken():
    taken = _take("POWER, AXIS = 0.5, -1\nSCALE: float = 0.125\ndef attention_weights(Q, K):\n    return Q\n")
    assert "POWER, AXIS = (0.5, -1)" in taken.code and "SCALE: float = 0.125" in taken.code
    left = _take("POWER, AXIS = make()\ndef attention_weights(Q, K):\n    return Q\n")
    assert set(left.left_out) == {"POWER", "AXIS"}  # named in the verdict when the function uses one


def test_constants_of_the_cells_above_are_left_to_the_notebook():
    """`full = None` at the top of 05: the lesson's own later cell sets it again, so the grader never takes it."""
    taken = _take("full = None\nrepeat = 0\nimport math", "def attention_weights(Q, K):\n    return Q\n")
    assert "full" not in taken.code and "repeat" not in taken.code and "import math" in taken.code


def test_a_definition_above_that_fails_here_costs_only_its_name_and_a_star_import_is_taken():
    taken = _take("import missing_mod as nx\nfrom math import *\ndef helper(x, k=nx.K):\n    return x\n"
                  "class P(nx.Base):\n    pass", "def attention_weights(Q, K):\n    return Q * sqrt(4)\n")
    namespace = {}
    exec(taken.code, namespace)
    assert namespace["attention_weights"](3, None) == 6.0 and "helper" not in namespace and "P" not in namespace


def test_subclassing_a_class_above_that_has_init_subclass_is_taken_for_the_exercise_only():
    """Its __init_subclass__ runs the student's code while the definitions are made: in the runner, which runs
    the exercise's own statement as the notebook did; a helper doing so is left out."""
    base = "class Base:\n    def __init_subclass__(cls):\n        print('runs')\n"
    assert "class attention_weights(Base)" in _take(base, "class attention_weights(Base):\n    pass\n").code
    helper = _take(base, "class Helper(Base):\n    pass\ndef attention_weights(Q, K):\n    return Q\n")
    assert helper.problem == "" and "class Helper" not in helper.code


def test_simple_expressions_are_kept_and_a_call_of_the_students_own_is_left_out_and_named():
    taken = _take("import math\nimport torch\nNEG = -float('inf')\nSCALE = 1 / math.sqrt(768)\nsoftmax = torch.softmax\n"
                  "LIMIT = make_limit()\ndef attention_weights(Q, K):\n    return Q\n")
    for kept in ("NEG = -float('inf')", "SCALE = 1 / math.sqrt(768)", "softmax = torch.softmax"):
        assert kept in taken.code
    assert "make_limit" not in taken.code and taken.left_out == {"LIMIT": "LIMIT = make_limit()"}
    reads_left_out = _take("w = weights[0]\nz = w @ V\ndef attention_weights(Q, K):\n    return Q\n")
    assert "z =" not in reads_left_out.code and set(reads_left_out.left_out) == {"w", "z"}  # z reads w: not run
    default = _take("def attention_weights(Q, K, fill=-float('inf')):\n    return Q\n")
    assert default.problem == "" and "fill=-float('inf')" in default.code  # was refused: "runs code as it is defined"
    rebound = _take("def float(x):\n    return 0.0\nNEG = -float('inf')\ndef attention_weights(Q, K):\n    return Q\n")
    assert "NEG" not in rebound.code and rebound.left_out == {"NEG": "NEG = -float('inf')"}  # float is the student's


def test_numpys_number_types_and_a_logger_are_kept_as_constants():
    """`BYTES = np.dtype(np.float16).itemsize` above a right answer was left out: "uses BYTES" (sweep 26, R01)."""
    taken = _take("import numpy as np\nimport logging\nBYTES = np.dtype(np.float16).itemsize\nTINY = np.finfo(np.float32)"
                  ".tiny\nlog = logging.getLogger('hw')\ndef attention_weights(Q, K):\n    return Q\n")
    for kept in ("BYTES = np.dtype(np.float16).itemsize", "TINY = np.finfo(np.float32).tiny", "log = logging.getLogger"):
        assert kept in taken.code
    mine = _take("import numpy as np\nnp = my_module()\nBYTES = np.dtype('f2').itemsize\ndef attention_weights(Q, K):\n"
                 "    return Q\n")
    assert "BYTES" in mine.left_out  # np rebound by the student: their own code, left out


def test_a_constant_made_by_a_comprehension_or_a_list_is_kept():
    """`SIZES = [768 // h for h in (1, 2, 4)]` above a right answer was left out: "uses SIZES" (sweep 26, R01)."""
    taken = _take("HEADS = [1, 2, 4]\nSIZES = [768 // h for h in HEADS]\nBYTES = {k: 2 ** i for i, k in enumerate(('f2', 'f4'))}"
                  "\nTOTAL = sum(x * 2 for x in range(3))\ndef attention_weights(Q, K):\n    return Q\n")
    for kept in ("HEADS = [1, 2, 4]", "SIZES = [768 // h for h in HEADS]", "BYTES = {k: 2 ** i", "TOTAL = sum("):
        assert kept in taken.code
    assert taken.left_out == {}
    mine = _take("SIZES = [size_of(h) for h in range(3)]\nLATER = sorted(HEADS, key=my_key)\n"
                 "def attention_weights(Q, K):\n    return Q\n")
    assert set(mine.left_out) == {"SIZES", "LATER"}  # the student's own function would run: left out


def test_a_decorated_helper_and_an_if_block_are_named_and_del_above_removes_the_name():
    """An @lru_cache helper and `if True:\n    POWER = 0.5` above gave "uses scale_of, which is not defined in it",
    without the line; `POWER = 0.5` then `del POWER` above was graded with POWER, where the notebook fails."""
    cached = _take("import functools\n@functools.wraps(print)\ndef scale_of(d):\n    return d ** 0.5",
                   "def attention_weights(Q, K):\n    return Q / scale_of(4)\n")
    assert "scale_of" not in cached.code.replace("scale_of(4)", "")
    assert cached.left_out == {"scale_of": "@functools.wraps(print) def scale_of(d): return d ** 0.5"}
    library = _take("import functools\n@functools.lru_cache(maxsize=None)\ndef scale_of(d):\n    return d ** 0.5",
                    "def attention_weights(Q, K):\n    return Q / scale_of(4)\n")
    assert "@functools.lru_cache(maxsize=None)" in library.code and library.left_out == {}  # a library's decorator
    block = _take("if True:\n    POWER = 0.5\n", "def attention_weights(Q, K):\n    return Q ** POWER\n")
    assert block.left_out == {"POWER": "if True: POWER = 0.5"}
    gone = _take("POWER = 0.5\ndef helper(x):\n    return x\n", "del POWER, helper",
                 "POWER = 0.5\ndel POWER\ndef attention_weights(Q, K):\n    return helper(Q) ** POWER\n")
    namespace = {}
    exec(gone.code, namespace)
    assert "POWER" not in namespace and "helper" not in namespace and gone.left_out == {}


def test_a_helper_decorated_with_the_students_own_function_is_taken():
    """`@logged def root(d)` above, `def logged(f): return f` above that: Jupyter runs it, the grader left it out and
    refused a right answer using root (sweep 30, BAD-5). A decorator defined nowhere, or after, still leaves it out."""
    taken = _take("import math\ndef logged(f):\n    return f\n", "@logged\ndef root(d):\n    return math.sqrt(d)\n",
                  "def attention_weights(Q, K):\n    return (Q @ K.T / root(Q.shape[-1])).softmax(-1)\n")
    namespace = {}
    exec(taken.code, namespace)
    assert namespace["root"](16) == 4.0 and taken.left_out == {}
    later = _take("@logged\ndef root(d):\n    return d\n", "def logged(f):\n    return f\n",
                  "def attention_weights(Q, K):\n    return root(Q)\n")
    assert "root" in later.left_out
    runs_code = _take("def logged(f):\n    return f\n", "@logged(print('x'))\ndef root(d):\n    return d\n",
                      "def attention_weights(Q, K):\n    return root(Q)\n")
    assert "root" in runs_code.left_out  # only a bare name of the student's function, not a call


def test_a_name_only_a_left_out_line_sets_is_named_in_the_verdict():
    from helpers.grade import worker
    ex = lessons()["01"].exercises[0][1]
    said = {"code": f"{ex.key}.error.name_not_defined", "line": "✗ x: your function uses LIMIT, which is not defined "
            "in it: compute it from the inputs (…)"}
    taken = definitions.Taken(ex.name, "…", left_out={"LIMIT": "LIMIT = make_limit()"})
    line = worker._name_left_out(said, ex, taken)["line"]
    assert "which only `LIMIT = make_limit()` sets, a line the grader does not run" in line
    assert worker._name_left_out(said, ex, definitions.Taken(ex.name, "…")) == said
    decorated = definitions.Taken(ex.name, "…", left_out={"LIMIT": "@functools.lru_cache def LIMIT(): return 1"})
    assert worker._name_left_out(said, ex, decorated)["line"].endswith(": define LIMIT without the decorator.")
    einops = _take("from no_such_module_here import rearrange", "def attention_weights(Q, K):\n    return rearrange(Q)\n")
    assert einops.imports == {"rearrange": "from no_such_module_here import rearrange"}
    said_einops = dict(said, line=said["line"].replace("LIMIT", "rearrange"))
    assert "which `from no_such_module_here import rearrange` (a cell above) sets, and that import fails" in \
        worker._name_left_out(said_einops, ex, einops)["line"]
    defaults = definitions.Taken(ex.name, "…", left_out={"LIMIT": "def LIMIT(p=POWER): return p"})
    assert worker._name_left_out(said, ex, defaults)["line"].endswith(": write LIMIT's default values as constants.")


@pytest.mark.parametrize("source", [
    "@(lambda f: f)\ndef attention_weights(Q, K):\n    return Q\n",
    "def attention_weights(Q, K, _=open('/etc/passwd').read()):\n    return Q\n",
    "class attention_weights(object, metaclass=type):\n    pass\n",
    "class attention_weights:\n    print('runs as it is defined')\n",
    "import functools\n@functools.cache\ndef attention_weights(Q, K):\n    return Q\n",
])
def test_a_definition_that_runs_code_as_it_is_defined_is_taken_as_the_notebook_ran_it(source):
    """A right answer with its own decorator or a computed default was refused ("runs code as it is defined",
    sweep 14, A62/A63): the runner, where the student's code runs anyway, runs it as the notebook did."""
    taken = _take(source)
    assert taken.problem == "" and source.strip().splitlines()[-2].split("(")[0].strip() in taken.code, taken


def test_allowed_decorators_are_kept():
    assert _take("@torch.no_grad()\ndef attention_weights(Q, K):\n    return Q\n").code.startswith("@torch.no_grad()")


def test_the_last_definition_in_the_notebook_is_graded_even_in_a_later_cell():
    taken = _take("def attention_weights(Q, K):\n    ...\n", "x = 1", "def attention_weights(Q, K):\n    return 'later'\n")
    assert "'later'" in taken.code


def test_a_cell_that_does_not_parse_is_one_line():
    taken = _take("def attention_weights(Q, K):\n    return (Q\n")
    assert taken.code is None and "SyntaxError" in taken.problem and "\n" not in taken.problem


def test_no_definition_is_not_attempted():
    assert _take("x = 1").code is None and _take("x = 1").problem == ""


def test_metadata_stripped_exercises_are_found_by_name():
    nb = notebook(lessons()["01"].path, {"attention_weights": "right"})
    cells, _ = cells_of(_bytes(nb))
    for c in cells:
        c["metadata"] = {}
    assert "d ** 0.5" in definitions.take(cells, "attention_weights").code


def test_nothing_is_written_while_reading(tmp_path):
    (tmp_path / "ana_01.ipynb").write_bytes(_bytes(notebook(lessons()["01"].path, {})))
    before = sorted(os.listdir(tmp_path))
    collect([tmp_path])
    assert sorted(os.listdir(tmp_path)) == before


# --- one bad file costs one row: every reader turns a failure into one line --------------------------------
def _patched_zip(path: Path, data: bytes, patch) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        z.writestr("ana_01.ipynb", data)
    raw = bytearray(path.read_bytes())
    patch(raw)
    path.write_bytes(bytes(raw))
    return path


def _encrypted(raw: bytearray) -> None:
    local, central = raw.index(b"PK\x03\x04"), raw.index(b"PK\x01\x02")
    raw[local + 6] |= 1
    raw[central + 8] |= 1


def _bad_crc(raw: bytearray) -> None:
    at = raw.index(b'"cells"')
    raw[at + 1] ^= 0x20  # one byte of the notebook changed after its CRC was written


def _method_99(raw: bytearray) -> None:
    """The compression method set to 99 (AES, which zipfile cannot unpack) in both headers."""
    local, central = raw.index(b"PK\x03\x04"), raw.index(b"PK\x01\x02")
    raw[local + 8:local + 10] = (99).to_bytes(2, "little")
    raw[central + 10:central + 12] = (99).to_bytes(2, "little")


@pytest.mark.parametrize("patch, words", [(_encrypted, "encrypted"), (_bad_crc, "CRC check fails"),
                                          (_method_99, "compression method (number 99)")])
def test_a_zip_entry_that_cannot_be_unpacked_is_one_line_in_its_row(tmp_path, patch, words):
    archive = _patched_zip(tmp_path / "class.zip", _bytes(notebook(lessons()["01"].path, {})), patch)
    (sub,), _ = read_zip(archive)
    assert sub.student == "ana" and sub.data is None and words in sub.problem and "\n" not in sub.problem


def test_nbformat_4_written_as_text_and_a_utf16_notebook_are_read():
    nb = notebook(lessons()["01"].path, {})
    nb["nbformat"] = "4"
    cells, problem = cells_of(json.dumps(nb).encode("utf-16"))
    assert problem == "" and which_lesson(cells, lessons()) == "01"
    nb["nbformat"] = "five"
    assert "nbformat 'five'" in cells_of(_bytes(nb))[1]


def test_json_nested_past_the_recursion_limit_is_one_line():
    cells, problem = cells_of(b"[" * 200_000 + b"]" * 200_000)
    assert cells is None and "nested too deeply" in problem


@pytest.mark.parametrize("code", ["-" * 200_000 + "1", "(" * 300 + ")" * 300, "[" * 5000 + "]" * 5000])
def test_a_cell_that_overflows_or_recurses_the_parser_is_one_line(code):
    taken = _take(f"def attention_weights(Q, K):\n    return {code}\n")
    assert taken.code is None and taken.problem and "\n" not in taken.problem


def test_a_file_name_that_is_not_utf8_is_read_and_written_as_text(tmp_path):
    name = os.fsdecode(b"Jos\xe9_01.ipynb")  # Latin-1 bytes, as an old zip tool or a Windows share writes them
    (tmp_path / name).write_bytes(_bytes(notebook(lessons()["01"].path, {})))
    (sub,), _ = collect([tmp_path])
    assert sub.student == "José" and sub.source.encode("utf-8")


def test_files_that_are_not_notebooks_are_said_in_one_line_each(tmp_path):
    (tmp_path / "ana_01.ipynb").write_bytes(_bytes(notebook(lessons()["01"].path, {})))
    (tmp_path / "ana_02.py").write_text("def f(): pass")
    (tmp_path / "ana_report.pdf").write_bytes(b"%PDF-1.4")
    (tmp_path / "ana_03.ipynb").symlink_to(tmp_path / "ana_01.ipynb")
    _zip(tmp_path / "bea.zip", [("bea_01.zip", b"PK"), ("bea_01.ipynb", _bytes(notebook(lessons()["01"].path, {})))])
    subs, _ = collect([tmp_path])
    said = {Path(s.source).name.split(": ")[-1]: s.problem for s in subs if s.data is None}
    assert not [s for s in subs if s.skipped]  # each is a line in its student's row
    assert set(said) == {"ana_02.py", "ana_report.pdf", "ana_03.ipynb", "bea_01.zip"}
    assert "a .py file, not a notebook" in said["ana_02.py"] and "symbolic link" in said["ana_03.ipynb"]
    assert "is not a readable zip" in said["bea_01.zip"] and all("\n" not in p for p in said.values())


def test_a_zip_a_student_handed_in_is_opened_as_theirs(tmp_path):
    """Moodle's "download all" holds a student's uploaded zip as it is: eight right lessons scored 0."""
    import io as _io
    def zipped(entries):
        buffer = _io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as z:
            for name, data in entries:
                z.writestr(name, data)
        return buffer.getvalue()
    lesson = _bytes(notebook(lessons()["01"].path, {}))
    deepest = zipped([("x_01.ipynb", lesson)])
    handed = zipped([("01_single_head_attention.ipynb", lesson), ("old.zip", zipped([("deep.zip", deepest)]))])
    found, _ = read_zip(_zip(tmp_path / "class.zip", [("Carla Diaz_5555_assignsubmission_file_/work.zip", handed),
                                                      ("bo_01.ipynb", lesson)]))
    rows = {(s.student, s.source.split(": ")[-1]): s.problem for s in found}
    assert rows[("Carla Diaz (5555)", "01_single_head_attention.ipynb")] == ""  # hers, read
    assert "not opened" in rows[("Carla Diaz (5555)", "deep.zip")] and ("bo", "bo_01.ipynb") in rows


def test_a_pipe_named_like_a_notebook_is_one_line_and_never_waited_for(tmp_path):
    (tmp_path / "ana_01.ipynb").write_bytes(_bytes(notebook(lessons()["01"].path, {})))
    os.mkfifo(tmp_path / "pipe_01.ipynb")  # reading it would wait for a writer for ever
    found, _ = collect([tmp_path])
    assert {s.student: s.problem for s in found} == {"ana": "", "pipe": submissions.NOT_REGULAR}
    found, _ = collect([tmp_path / "pipe_01.ipynb", tmp_path / "ana_01.ipynb"])  # named on the command line
    assert [(s.data, s.problem) for s in found if s.student == "pipe"] == [(None, submissions.NOT_REGULAR)]


def test_a_folder_named_twice_or_with_one_of_its_files_is_read_once(tmp_path):
    (tmp_path / "ana_01.ipynb").write_bytes(_bytes(notebook(lessons()["01"].path, {})))
    for paths in ([tmp_path, tmp_path], [tmp_path / "ana_01.ipynb", tmp_path], [tmp_path / "." / "ana_01.ipynb"] * 2):
        assert len(collect(paths)[0]) == 1, paths


def test_a_zip_entry_marked_utf8_whose_name_is_not_costs_only_its_own_name(tmp_path):
    """zipfile refuses the whole archive for one such name; its name is read in the zip standard's code page."""
    data = _bytes(notebook(lessons()["01"].path, {}))
    archive = _zip(tmp_path / "class.zip", [("ana_01.ipynb", data), ("c\u00e9_01.ipynb", data)])
    raw = archive.read_bytes().replace("c\u00e9_01".encode(), b"c\xff\xfe_01")  # in both headers; still marked UTF-8
    archive.write_bytes(raw)
    with pytest.raises(UnicodeDecodeError):
        zipfile.ZipFile(archive)
    found, _ = read_zip(archive)
    assert sorted(s.student for s in found) == ["ana", "c \u25a0"] and all(s.data == data for s in found)


def test_a_cell_with_magics_and_shell_lines_is_taken_as_jupyter_runs_it():
    taken = _take("%%time\nimport torch\ndef attention_weights(Q, K):\n    return Q\n%timeit attention_weights(1, 2)\n"
                  "!echo hi\n")
    assert taken.problem == "" and "def attention_weights(Q, K):" in taken.code and "%" not in taken.code
    broken = _take("%%time\ndef attention_weights(Q, K):\n    return (\n")
    assert "line 3" in broken.problem  # the student's own line numbers


def test_a_lone_surrogate_from_a_worker_becomes_a_replacement_character():
    """"\\ud800" is valid JSON and a cell may hold it; such a string cannot be written as UTF-8 (grades.csv)."""
    from helpers.grade.wire import receive, send
    read, write = os.pipe()
    try:
        send(write, {"kind": "notebook", "taken": [{"code": "# \ud800", "cell": "x"}], "\udfff": ["\ud800"]})
        got = receive(read, 1 << 20)
    finally:
        os.close(read)
        os.close(write)
    assert got == {"kind": "notebook", "taken": [{"code": "# \ufffd", "cell": "x"}], "\ufffd": ["\ufffd"]}
    json.dumps(got, ensure_ascii=False).encode("utf-8")


def test_re_uploads_are_ordered_by_number_so_the_last_one_is_graded():
    from helpers.grade.classroom import _by_number
    names = ["ana_01-10", "ana_01", "ana_01-2", "ana_01 (1)"]
    assert sorted(names, key=_by_number) == ["ana_01", "ana_01 (1)", "ana_01-2", "ana_01-10"]


def test_a_re_upload_whose_name_a_mac_wrote_in_nfd_still_comes_last():
    """José_01.ipynb (NFC) and a later "José_01 (1).ipynb" written by a Mac (NFD): the older was graded (sweep 18)."""
    import unicodedata

    from helpers.grade.classroom import upload_order
    first, later = "class/José_01.ipynb", unicodedata.normalize("NFD", "class/José_01 (1).ipynb")
    assert sorted([later, first], key=upload_order) == [first, later]


def test_two_files_whose_names_print_alike_are_told_apart_in_the_note(tmp_path):
    """José_01 in NFC and in NFD: the note read "graded sub/José_01.ipynb; not graded: sub/José_01.ipynb" (sweep 21, I04)."""
    import unicodedata

    from helpers.grade.classroom import _rows
    from helpers.grade.pool import Job
    for form in ("NFC", "NFD"):
        (tmp_path / unicodedata.normalize(form, "José_01.ipynb")).write_text("{}")
    subs, _ = collect([tmp_path])
    rows = _rows(subs, [(sub, Job(sub.source, sub.data, lesson="01"), "") for sub in subs], None)
    (note,) = rows["José"].notes
    assert "graded " + str(tmp_path / "Jos\\xe9_01.ipynb") in note and "Jose\\u0301_01.ipynb" in note
    assert note.endswith("(names that print alike are written as character codes).")


def test_a_hidden_notebook_or_an_autosave_is_said_in_its_students_row_when_nothing_of_theirs_was_graded(tmp_path):
    """`.eve_01.ipynb` was skipped without a word, and a student whose only notebook was in .ipynb_checkpoints
    got a note about another file (sweep 14, C19/C22); a Mac's `._` companions stay unsaid."""
    from helpers.grade.classroom import _rows
    (tmp_path / "gus" / ".ipynb_checkpoints").mkdir(parents=True)
    (tmp_path / "__MACOSX").mkdir()
    for name in (".eve_01.ipynb", "gus/.ipynb_checkpoints/01_x-checkpoint.ipynb", "__MACOSX/._dan_01.ipynb",
                 "dan_01.ipynb", "._dan_01.ipynb"):
        (tmp_path / name).write_text("{}")
    subs, _ = collect([tmp_path])
    quiet = {s.student: s.problem for s in subs if s.quiet}
    assert quiet == {"eve": "is a hidden file (its name starts with a dot), so it was not graded: hand it in without "
                            "the dot",
                     "gus": "is Jupyter's autosave (in .ipynb_checkpoints), not the notebook itself: hand in the notebook"}
    rows = _rows(subs, [], None)
    assert sorted(rows) == ["dan", "eve", "gus"] and rows["dan"].notes == []
    assert rows["eve"].notes == [f"{tmp_path / '.eve_01.ipynb'} {quiet['eve']}."]


def test_moodles_online_text_is_quiet_and_a_file_named_as_the_lesson_is_told_it_names_no_student(tmp_path):
    """Moodle's onlinetext.html told a student who handed in the notebook to hand it in; the teacher's key, left in
    the class as 01_single_head_attention.ipynb, was a student with full marks and no word (sweep 14, C24/C20)."""
    from helpers.grade.classroom import LESSON_NAMED, _rows
    (tmp_path / "Ana Lima_4321_assignsubmission_onlinetext_").mkdir()
    (tmp_path / "Ana Lima_4321_assignsubmission_onlinetext_" / "onlinetext.html").write_text("<p>hi</p>")
    (tmp_path / "01_single_head_attention.ipynb").write_text("{}")
    subs, _ = collect([tmp_path])
    online = next(s for s in subs if s.student == "Ana Lima (4321)")
    assert online.quiet and online.problem == "is Moodle's online text, not a notebook (hand in the lesson's .ipynb)"
    assert _rows(subs, [], None)["01_single_head_attention"].notes == [LESSON_NAMED]


def test_a_dataclass_helper_and_a_namedtuple_are_taken():
    """A right capstone using a @dataclass helper, and a namedtuple made by a top-level call, were graded
    "uses Shapes, which only … sets, a line the grader does not run" (sweep 15, R27/R30)."""
    taken = definitions.take([_code("from dataclasses import dataclass\nfrom collections import namedtuple\n"
                                    "@dataclass(frozen=True)\nclass Shapes:\n    T: int\n    D: int = 4\n"
                                    "HeadInfo = namedtuple('HeadInfo', 'size params', defaults=(0,))\n"),
                              _code("def attention_weights(Q, K):\n    return Shapes(Q.shape[0]), HeadInfo(1)\n")],
                             "attention_weights", frozenset())  # the lesson sets neither name
    namespace = {}
    exec(taken.code, namespace)
    assert taken.left_out == {} and namespace["attention_weights"](torch.zeros(3, 2), None)[0].T == 3
    own = definitions.take([_code("def namedtuple(*a):\n    print('mine')\nHeadInfo = namedtuple('HeadInfo', 'size')\n"),
                            _code("def attention_weights(Q, K):\n    return HeadInfo\n")], "attention_weights", frozenset())
    assert "HeadInfo" in own.left_out  # the student's own namedtuple: a call of their code, left out


@pytest.mark.parametrize("data, words", [
    (b"<!DOCTYPE html>\n<html><body>notebook</body></html>", "is a web page (an HTML export of the notebook)"),
    (b"# ---\n# jupyter:\n#   jupytext:\n# ---\n\n# %%\nimport torch\n", "is a Python script (.py"),
    (b"#!/usr/bin/env python\n# coding: utf-8\n\n# In[1]:\n\nimport torch\n", "is a Python script (.py"),
])
def test_a_page_or_a_script_renamed_ipynb_is_told_what_it_is(data, words):
    """Both were "not JSON: truncated or damaged; open it in Jupyter and save it again" (sweep 15, F12/F13)."""
    assert cells_of(data)[1].startswith(words) and "hand in the .ipynb itself" in cells_of(data)[1]


def test_a_notebook_saved_in_windows_1252_is_told_to_be_saved_as_utf_8():
    """It read "not JSON: truncated or damaged; open it in Jupyter and save it again", but it is whole, and
    Jupyter does not open it (sweep 23, cpdecimal)."""
    data = json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {"author": "Zoé"},
                       "cells": [{"cell_type": "markdown", "metadata": {}, "source": "Mon café"}]}, ensure_ascii=False)
    assert "is not UTF-8 text (it reads as Windows-1252" in cells_of(data.encode("cp1252"))[1]
    assert "truncated or damaged" in cells_of(data.encode("utf-8")[:-40])[1]  # a cut file is still damaged


def test_a_notebook_whose_name_says_another_lesson_is_graded_by_its_title_and_the_row_says_so():
    """jo_02.ipynb holding lesson 01 was graded as 01 without a word; lesson 02 read "not submitted" (sweep 15, F10)."""
    from helpers.grade.classroom import _rows
    from helpers.grade.pool import Job
    from helpers.grade.submissions import Submission
    subs = [Submission("jo", "class/jo_02.ipynb", b"{}"), Submission("al", "class/al_01.ipynb", b"{}")]
    graded = [(sub, Job(sub.source, None, lesson="01"), "k") for sub in subs]
    rows = _rows(subs, graded, None)
    assert rows["jo"].notes == ["class/jo_02.ipynb: its file name says lesson 02, but its title is lesson 01's: "
                                "graded as lesson 01."] and rows["al"].notes == []


def test_an_answer_under_another_name_is_named_beside_not_attempted():
    """The stub kept and a right attention_weights2 in the next cell: "not attempted yet", attention_weights2
    never mentioned (sweep 16, O05)."""
    from helpers.grade import worker
    ex = lessons()["01"].exercises[0][1]
    stub, renamed = "def attention_weights(Q, K):\n    ...\n", "def attention_weights2(Q, K):\n    return Q\n"
    taken = _take(stub, renamed)
    assert taken.similar == ("attention_weights2",)
    said = {"outcome": "not_attempted", "code": f"{ex.key}.not_attempted", "line": "… x: not attempted yet."}
    line = worker._stub_last(said, ex, taken)["line"] + worker._renamed(taken, ex)
    assert line.endswith(" Your notebook defines attention_weights2, but the grader grades the function named "
                         "attention_weights: name your answer "
                         "attention_weights (or add `attention_weights = attention_weights2` below it).")
    assert _take(renamed).code is None and _take(renamed).similar == ("attention_weights2",)


def test_an_answer_pasted_into_a_markdown_cell_below_the_stub_is_named_beside_not_attempted():
    """The stub kept and the answer in a Markdown cell below: "not attempted yet" and no word of the Markdown
    cell, which the grader names when no code cell defines the function (sweep 23, mdonly)."""
    from helpers.grade import worker
    ex = lessons()["01"].exercises[0][1]
    cells = [_code("def attention_weights(Q, K):\n    ...\n"),
             {"cell_type": "markdown", "source": "def attention_weights(Q, K):\n    return Q\n", "metadata": {}}]
    taken = definitions.take(cells, "attention_weights")
    said = {"outcome": "not_attempted", "code": f"{ex.key}.not_attempted", "line": "… x: not attempted yet."}
    assert worker._stub_last(said, ex, taken)["line"] == (
        "… x: not attempted yet. A Markdown cell defines attention_weights too, which Jupyter does not run: put your "
        "answer in the exercise's code cell (or make that cell a Code cell again: select it, press Esc, then Y).")


def test_a_teams_download_grades_what_was_submitted_and_names_the_student_by_the_folder_above():
    """Teams: Student/Submitted files/… and Student/Working files/… (the draft). The draft was graded ("Working"
    sorts after "Submitted"), and one student's download became two students named after the two folders."""
    from helpers.grade.classroom import upload_order
    from helpers.grade.submissions import _wrappers
    one = [PurePosixPath(f"Bea Costa/{kind} files/01_single_head_attention.ipynb") for kind in ("Working", "Submitted")]
    assert _wrappers(one) == 0 and {student_key(r) for r in one} == {"Bea Costa"}
    assert _wrappers([PurePosixPath("Lesson 01") / r for r in one]) == 1
    sources = ["class.zip: Bea Costa/Working files/01_x-2.ipynb", "class.zip: Bea Costa/Submitted files/01_x.ipynb"]
    assert sorted(sources, key=upload_order)[-1] == sources[1]
    assert sorted(["a/ana_01-2.ipynb", "a/ana_01.ipynb"], key=upload_order)[-1] == "a/ana_01-2.ipynb"
    for backup in ("ana_01_old", "ana_01 backup", "ana_01 (old)", "ana_01.bak", "ana_01_old2"):  # sweep 14, C30
        assert sorted([f"c/{backup}.ipynb", "c/ana_01.ipynb"], key=upload_order)[-1] == "c/ana_01.ipynb", backup


@pytest.mark.parametrize("above, cell", [
    ("", "attention_weights = lambda Q, K: (Q @ K.T).softmax(-1)\n"),
    ("from functools import partial\ndef _aw(Q, K, p=1):\n    return (Q @ K.T * p).softmax(-1)",
     "attention_weights = partial(_aw, p=1)\n"),
    ("def my_weights(Q, K):\n    return (Q @ K.T).softmax(-1)", "attention_weights = my_weights\n"),
    ("class Weights:\n    def __call__(self, Q, K):\n        return (Q @ K.T).softmax(-1)",
     "attention_weights: object = Weights()\n"),
])
def test_a_function_assigned_not_defined_is_taken_with_what_it_reads(above, cell):
    """`name = lambda …`, `= partial(…)`, `= my_function`, `= Callable()`: right answers that got "raised" and
    "is assigned, not defined with def" (sweep 14, A13-A19)."""
    taken = _take(*[s for s in (above, cell) if s])
    namespace = {}
    exec(taken.code, namespace)
    Q = torch.eye(3)
    assert taken.problem == "" and torch.allclose(namespace["attention_weights"](Q, Q), (Q @ Q.T).softmax(-1))


def test_a_function_overwritten_with_its_result_or_assigned_from_a_left_out_line_is_one_line():
    again = _take("def attention_weights(Q, K):\n    return Q\nattention_weights = attention_weights(Q, K)\n")
    assert again.code is None and again.problem == (
        "`attention_weights = attention_weights(Q, K)` sets attention_weights to what calling it returned, so in "
        "the notebook attention_weights is no longer your function: give the result another name")
    left = _take("def timeit(n):\n    return lambda f: f\n@timeit(1)\ndef helper(Q, K):\n    return Q",
                 "attention_weights = helper\n")  # (a bare @timeit of the student's is taken)
    assert left.code is None and left.problem.startswith("`attention_weights = helper` reads helper, which only "
                                                         "`@timeit(1) def helper(Q, K): return Q` sets")
    decorated = definitions.take([_code("@timeit\ndef attention_weights(Q, K):\n    return Q\n")],
                                 "attention_weights", frozenset({"torch"}))
    assert decorated.problem.startswith("the decorator of attention_weights reads timeit, which no cell sets")


def test_a_base_class_that_runs_code_when_subclassed_is_taken_and_runs_in_the_runner():
    """(Its sleep then makes the exercise too slow there, as it would stall the notebook.)"""
    taken = _take("import time\nclass Base:\n    def __init_subclass__(cls, **kw):\n        time.sleep(200)\n"
                  "class attention_weights(Base):\n    def __new__(cls, Q, K):\n        return Q\n")
    assert taken.problem == "" and "class attention_weights(Base)" in taken.code


def test_a_folder_named_like_a_notebook_names_the_student_without_the_extension():
    assert student_key(PurePosixPath("eve_01.ipynb/notebook.ipynb")) == "eve"


def test_a_result_is_kept_for_the_time_limit_it_was_graded_with():
    from helpers.grade.results import kept_name
    assert kept_name("a.ipynb", b"{}", "--timeout 10") == kept_name("a.ipynb", b"{}", "--timeout 10")
    assert kept_name("a.ipynb", b"{}", "--timeout 10") != kept_name("a.ipynb", b"{}", "--timeout 2")


def test_two_zip_entries_of_one_name_are_told_apart(tmp_path):
    """The note read "graded X; not graded: X": which of the two was graded could not be told."""
    data = _bytes(notebook(lessons()["01"].path, {}))
    with pytest.warns(UserWarning, match="Duplicate name"):
        with zipfile.ZipFile(tmp_path / "class.zip", "w") as z:
            z.writestr("ana_01.ipynb", data)
            z.writestr("ana_01.ipynb", data)
    subs, _ = read_zip(tmp_path / "class.zip")
    assert [s.source for s in subs] == ["class.zip: ana_01.ipynb (entry 1 of 2 with this name)",
                                        "class.zip: ana_01.ipynb (entry 2 of 2 with this name)"]


def test_a_def_above_rebound_by_a_left_out_line_is_gone_and_no_grad_without_parentheses_is_taken():
    """`def norm` (softmax over dim 0) then `norm = lambda …` above: the old def was graded, a right answer ✗;
    `@torch.no_grad` (torch takes it without parentheses too) was refused as running code."""
    rebound = _take("def norm(x):\n    return x.softmax(dim=0)\n", "norm = lambda x: x.softmax(dim=-1)",
                    "def attention_weights(Q, K):\n    return norm(Q)\n")
    assert "def norm" not in rebound.code and rebound.left_out == {"norm": "norm = lambda x: x.softmax(dim=-1)"}
    plain = _take("import torch\n@torch.no_grad\ndef attention_weights(Q, K):\n    return Q\n")
    assert plain.problem == "" and "@torch.no_grad\ndef attention_weights" in plain.code


def test_a_default_value_read_from_a_left_out_line_or_a_cell_above_is_named():
    """`def attention_weights(Q, K, p=POWER)` with POWER = 0.5 in a cell above ran in the notebook; the grader
    said only "the definitions raised NameError"."""
    above = _take("POWER = 0.5", "def attention_weights(Q, K, p=POWER):\n    return Q ** p\n")
    assert above.code is None and "reads POWER, which only `POWER = 0.5` sets" in above.problem
    assert "write the value itself as the default" in above.problem
    inside = _take("BIG = D * 0 - 1e9\ndef attention_weights(Q, K, big=BIG):\n    return Q\n")
    assert "reads BIG, which only `BIG = D * 0 - 1000000000.0` sets" in inside.problem
    assert "no cell sets" in definitions.take([_code("def attention_weights(Q, K, p=NOWHERE):\n    return Q\n")],
                                              "attention_weights", frozenset()).problem  # nor the lesson
    taken = _take("POWER = 0.5\ndef attention_weights(Q, K, p=POWER):\n    return Q\n")
    assert taken.problem == "" and "p=POWER" in taken.code  # a constant of its own cell is taken
    helper = _take("POWER = 0.5\ndef helper(x, p=POWER):\n    return x", "def attention_weights(Q, K):\n    return helper(Q)\n")
    assert helper.problem == "" and "def helper" not in helper.code and helper.left_out["helper"].startswith("def helper")


def test_a_definition_inside_a_block_is_named_not_called_not_attempted():
    taken = _take("try:\n    def attention_weights(Q, K):\n        return Q\nexcept Exception:\n    pass\n")
    assert taken.code is None and "is defined indented" in taken.problem and "first column" in taken.problem
    assert _take("x = 1").problem == ""


def test_a_runner_that_stopped_answering_is_told_in_words_not_as_an_exception_name():
    """A function that forked (both copies answered on one pipe) got "your function raised Lost: the runner's
    answer could not be read (a message that is not the answer asked for)"."""
    from helpers.exercises.diagnosis import translate_error
    from helpers.grade.runner import Lost
    line, code = translate_error(Lost("the process running your function stopped answering (a message that is not "
                                      "the answer asked for)"), "Q, K [5 × 16]")
    assert code == "error.runner_lost" and line.startswith("your function's process stopped answering the grader")
    assert "it forked" in line and "raised Lost:" not in line


def test_a_future_import_opening_a_cell_is_put_first_in_the_code_graded():
    """`from __future__ import annotations` on top of the exercise's cell runs in Jupyter; the grader put the cells
    above before it and graded a right answer "the definitions raised SyntaxError"."""
    taken = _take("import math\nfrom __future__ import annotations", "from __future__ import annotations\n"
                  "def attention_weights(Q: Tensor, K: Tensor) -> Tensor:\n    return Q\n")
    namespace = {}
    exec(compile(taken.code, "<graded>", "exec", dont_inherit=True), namespace)
    assert taken.code.startswith("from __future__ import annotations") and namespace["attention_weights"](1, 2) == 1


def test_an_import_in_the_exercises_cell_that_is_not_installed_here_is_told_so():
    """`from einops import rearrange` in the exercise's own cell: "the definitions raised ModuleNotFoundError"."""
    from helpers.grade import preload, runner
    prepared = preload.prepared("01")
    taken = definitions.Taken("attention_weights", "import no_such_module_here\ndef attention_weights(Q, K):\n    return Q\n")
    verdict, _ = runner.check(prepared, 0, taken)
    assert verdict["outcome"] == "raised" and "imports no_such_module_here, which is not installed where the class " \
        "is graded" in verdict["line"] and verdict["line"].endswith("use torch's own operations, as the lesson does")


def test_a_type_hint_naming_something_never_imported_costs_no_point_as_the_guide_says():
    """The guide: hints are kept as text, not run (Jupyter stops at such a `def` with a NameError; sweep 23)."""
    from helpers.grade import preload, runner
    taken = definitions.take([_code("def attention_weights(Q: Tensor, K: Tensor) -> Tensor:\n"
                                    "    return (Q @ K.T / Q.shape[-1] ** 0.5).softmax(dim=-1)\n")], "attention_weights")
    verdict, _ = runner.check(preload.prepared("01"), 0, taken)
    assert verdict["outcome"] == "right"
    guide = (Path(__file__).resolve().parent.parent / "docs" / "teaching.md").read_text()
    assert "Type hints are kept as text, not run" in " ".join(guide.split())


def test_a_right_answer_that_torchscript_compiles_reads_its_own_source():
    """`attention_weights = torch.jit.script(attention_weights)` was "the definitions raised OSError: Can't get
    source": TorchScript reads the function's source, which Jupyter keeps for every cell (sweep 27)."""
    from helpers.grade import preload, runner
    taken = definitions.take([_code("import torch\ndef attention_weights(Q, K):\n"
                                    "    return (Q @ K.T / Q.shape[-1] ** 0.5).softmax(dim=-1)\n\n"
                                    "attention_weights = torch.jit.script(attention_weights)\n")], "attention_weights")
    verdict, _ = runner.check(preload.prepared("01"), 0, taken)
    assert verdict["outcome"] == "right", verdict["line"]


def test_a_function_that_closes_the_standard_streams_keeps_its_verdict_and_the_next_exercises():
    """A right answer doing `os.closerange(0, 3)` and `sys.stdout = None` got "the check could not grade it
    (OSError: Bad file descriptor)", and so did every exercise after it: the check's own print failed (sweep 27)."""
    script = (
        "import json, os, sys\nfrom helpers.grade import preload, runner, definitions\np = preload.prepared('01')\n"
        "out = os.dup(1)\nbad = ('import os, sys\\ndef attention_weights(Q, K):\\n    os.closerange(0, 3)\\n'\n"
        "       '    sys.stdout = None\\n    return (Q @ K.T / Q.shape[-1] ** 0.5).softmax(-1)\\n')\n"
        "first, _ = runner.check(p, 0, definitions.Taken('attention_weights', bad))\n"
        "ok = 'import torch\\ndef masked_weights(scores):\\n    m = torch.ones_like(scores, dtype=torch.bool).triu(1)\\n' \\\n"
        "     '    return scores.masked_fill(m, float(\"-inf\")).softmax(-1)\\n'\n"
        "second, _ = runner.check(p, 1, definitions.Taken('masked_weights', ok))\n"
        "os.write(out, json.dumps([first['outcome'], second['outcome'], first['line']]).encode())\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).resolve().parent.parent)
    assert json.loads(done.stdout)[:2] == ["right", "right"], done.stdout + done.stderr[-2000:]


def test_a_class_whose_body_is_pass_is_taken():
    """`class MyMultiHead(nn.MultiheadAttention):\n    pass` was refused as "runs code as it is defined"."""
    taken = definitions.take([_code("class MyMultiHead(nn.MultiheadAttention):\n    pass\n")], "MyMultiHead")
    assert taken.problem == "" and "class MyMultiHead(nn.MultiheadAttention):" in taken.code


def test_a_constant_of_a_cell_above_is_taken_when_the_lesson_does_not_set_its_name():
    """`device = torch.device('cpu')` in a cell above and `.to(device)` in a right answer got "uses device, which
    only `device = …` sets, a line the grader does not run": a mistake for a right answer."""
    lesson = frozenset({"full", "Q", "K"})
    cells = [_code("import torch\ndevice = torch.device('cpu')\nGPU = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
                   "full = None\nSCALE = 0.5"),
             _code("def attention_weights(Q, K):\n    return Q.to(device) * SCALE\n")]
    taken = definitions.take(cells, "attention_weights", lesson)
    namespace = {}
    exec(taken.code, namespace)
    assert namespace["device"] == torch.device("cpu") and namespace["GPU"] in ("cuda", "cpu") and namespace["SCALE"] == 0.5
    assert "full" not in namespace  # a name the lesson's own cells set stays the lesson's
    assert "device =" not in definitions.take(cells, "attention_weights").code  # without the lesson's names: not taken
    later = definitions.take(cells[:1] + [_code("SCALE = make()")] + cells[1:], "attention_weights", lesson)
    assert "SCALE = 0.5" not in later.code and later.left_out["SCALE"] == "SCALE = make()"
    rebound = definitions.take([_code("import torch\ntorch = fake\ndevice = torch.device('cpu')")] + cells[1:],
                               "attention_weights", lesson)
    assert "device" not in rebound.code.replace("Q.to(device)", "")  # torch is the student's: a call of theirs


def test_a_lambda_assigned_above_or_in_the_cell_is_taken_and_its_defaults_are_held_to_the_same_rule():
    """`sm = lambda x: x.softmax(-1)` in a cell above: a right answer was "uses sm, which only `sm = lambda …` sets"."""
    def take(*sources):
        return definitions.take([_code(s) for s in sources], "attention_weights", frozenset({"Q", "K"}))
    for taken in (take("sm = lambda x: x.softmax(-1)", "def attention_weights(Q, K):\n    return sm(Q)\n"),
                  take("sm = lambda x: x.softmax(-1)\ndef attention_weights(Q, K):\n    return sm(Q)\n")):
        namespace = {}
        exec(taken.code, namespace)
        assert namespace["sm"](torch.zeros(2)).tolist() == [0.5, 0.5]
    runs = take("sm = lambda x, k=open('/etc/hostname').read(): x", "def attention_weights(Q, K):\n    return sm(Q)\n")
    assert "sm =" not in runs.code and "sm" in runs.left_out  # a default that calls: left out and named


@pytest.mark.parametrize("above, cell", [
    ("gpu = !nvidia-smi -L\ndef inv_root(d):\n    return d ** -0.5", None),  # a shell line giving a value
    ("torch.triu?\ndef inv_root(d):\n    return d ** -0.5", None),  # help on a name
    (None, "t = %timeit -o 1 + 1\ndef inv_root(d):\n    return d ** -0.5\n"),  # a line magic giving a value
    (None, "def inv_root(d):\n    return (d\n        != 0) * d ** -0.5\n"),  # a continuation line starting with !=
])
def test_cells_are_read_as_ipython_reads_them(above, cell):
    """IPython's own transformer reads magics and shell lines: a cell holding `gpu = !nvidia-smi`, `torch.triu?`,
    `t = %timeit …` or a line starting with `!=` inside brackets was a SyntaxError, or dropped without a word."""
    exercise = "def attention_weights(Q, K):\n    return Q * inv_root(4)\n"
    sources = ([above] if above else []) + [(cell or "") + exercise]
    taken = definitions.take([_code(s) for s in sources], "attention_weights")
    namespace = {}
    exec(taken.code, namespace)
    assert taken.problem == "" and namespace["attention_weights"](2.0, None) == 1.0


def test_a_writefile_cell_is_no_python_and_a_time_cell_is():
    """A later `%%writefile draft.py` cell holding an old wrong def was graded instead of the right one."""
    right = "def attention_weights(Q, K):\n    return 'right'\n"
    taken = _take(right, "%%writefile draft.py\ndef attention_weights(Q, K):\n    return 'old'\n")
    assert "'right'" in taken.code and "'old'" not in taken.code
    timed = _take("%%time\n" + right.replace("'right'", "'timed'"))
    assert "'timed'" in timed.code
    assert "on line 3 ('(' was never closed)" in _take("%%time\ndef attention_weights(Q, K):\n    return (Q\n").problem


def test_a_walrus_at_the_top_sets_its_name_and_a_decorator_on_the_exercise_is_taken():
    walrus = _take("(power := 0.5)\ndef attention_weights(Q, K):\n    return Q ** power\n")
    assert walrus.left_out == {"power": "(power := 0.5)"}  # named in the verdict, not "not defined in it"
    cached = _take("import functools\n@functools.cache\ndef attention_weights(Q, K):\n    return Q\n")
    assert cached.problem == "" and "@functools.cache" in cached.code


def test_input_in_a_function_is_told_as_such():
    """A leftover input() gave "your function raised EOFError: EOF when reading a line"."""
    from helpers.exercises.diagnosis import translate_error
    line, code = translate_error(EOFError("EOF when reading a line"), "weights [5 × 5]")
    assert code == "error.input_called" and line.startswith("your function calls input()")


def test_worker_processes_in_a_function_are_told_as_such():
    """A multiprocessing.Pool inside weighted_sum gave "raised OSError: [Errno 9] Bad file descriptor"."""
    from multiprocessing.connection import Connection
    from helpers.exercises.diagnosis import translate_error
    try:
        Connection(-1)  # fails inside multiprocessing's own files, as a Pool started in a check does
    except ValueError as err:
        line, code = translate_error(err, "weights [5 × 5]")
    assert code == "error.processes_started" and line.startswith("your function starts worker processes")
    try:
        raise OSError(9, "Bad file descriptor")  # the same error from the student's own line is left as it is
    except OSError as err:
        assert translate_error(err, "weights [5 × 5]")[1] == "raised"


def test_a_helper_defined_only_in_a_cell_below_is_named_as_such():
    from helpers.grade import worker
    taken = _take("def attention_weights(Q, K):\n    return inv_root(Q)\n", "def inv_root(x):\n    return x\n")
    assert taken.below == {"inv_root"}
    ex = lessons()["01"].exercises[0][1]
    said = {"code": f"{ex.key}.error.name_not_defined", "line": "✗ x: your function uses inv_root, which is not "
            "defined in it: compute it from the inputs (…)"}
    assert "which only a cell below the exercise defines: Jupyter runs a notebook top to bottom" in \
        worker._name_left_out(said, ex, taken)["line"]


def test_a_syntax_error_names_the_python_only_where_a_newer_one_may_read_it():
    """A typo or a "C:\\Users" docstring was told "read by Python 3.11" as if a newer Python would read it."""
    import sys
    if sys.version_info >= (3, 12):
        pytest.skip("these parse from Python 3.12 on")
    for newer in ('def attention_weights(Q, K):\n    return f"{"x"}"\n', "def attention_weights[T](Q: T, K: T):\n    return Q\n"):
        assert "which grades the class" in _take(newer).problem
        # a notebook that saved no version (Colab's): said as a possibility, with both fixes (sweep 19)
        assert "if the notebook ran on Python 3.12 or newer (Colab does)" in _take(newer).problem
    typo = _take("def attention_weights(Q, K):\n    return (Q\n").problem
    assert "was never closed)" in typo and "Python" not in typo
    escape = _take('def attention_weights(Q, K):\n    """Saved in C:\\Users\\ana."""\n    return Q\n').problem
    assert "a backslash in a string starts an escape; write that string as r" in escape and "Python" not in escape


def test_syntax_of_a_newer_python_is_said_when_the_notebook_records_it():
    """A right answer with a 3.12 f-string (nested quotes) was "raised: SyntaxError" and nothing more."""
    import sys
    ran_by = definitions.python_that_ran
    cell = 'def attention_weights(Q, K):\n    return f"{"x"}"\n'
    newer = f"{sys.version_info.major}.{sys.version_info.minor + 1}"
    saved = json.dumps({"metadata": {"language_info": {"name": "python", "version": newer + ".4"}}}).encode()
    said = definitions.take([_code(cell)], "attention_weights", ran=ran_by(saved)).problem
    if sys.version_info < (3, 12):  # the f-string parses from 3.12 on: then nothing is refused
        assert f"this notebook last ran Python {newer}" in said and f"grade the class with Python {newer}" in said
    same = json.dumps({"metadata": {"language_info": {"version": "%d.%d.1" % sys.version_info[:2]}}}).encode()
    typo = "def attention_weights(Q, K):\n    return (Q\n"
    assert definitions.take([_code(typo)], "attention_weights", ran=ran_by(same)) == _take(typo)  # the same Python
    assert ran_by(b'{"cells": []}') is None


def test_a_name_a_run_file_sets_is_named_with_the_run_line():
    """`%run my_helpers.py` above, inv_root from it: the line said "compute it from the inputs"."""
    from helpers.grade import worker
    taken = _take("%run my_helpers.py\n", "def attention_weights(Q, K):\n    return inv_root(Q)\n")
    assert taken.runs == ("%run my_helpers.py",)
    ex = lessons()["01"].exercises[0][1]
    said = {"code": f"{ex.key}.error.name_not_defined", "line": "✗ x: your function uses inv_root, which is not "
            "defined in it: compute it from the inputs (…)"}
    line = worker._name_left_out(said, ex, taken)["line"]
    assert "`%run my_helpers.py` (a cell above) may, but the grader has the notebook only" in line
    assert _take("def attention_weights(Q, K):\n    return inv_root(Q)\n", "%run later.py\n").runs == ()


def test_another_lessons_exercises_pasted_into_a_notebook_are_named_in_its_row():
    """Lesson 02's exercise cells pasted under lesson 01's heading were dropped without a word."""
    from helpers.grade.classroom import _restore
    from helpers.grade.lessons import other_exercises
    from helpers.grade.pool import Job
    lesson = [_code(source) for source in lessons()["01"].cells]
    note = other_exercises(lesson + [_code("def one_head(X, W_Q, W_K, W_V):\n    return X\n")], "01", lessons())
    assert note.startswith("also defines one_head (lesson 02), which are graded only in their own lesson's")
    assert other_exercises(lesson, "01", lessons()) == ""
    pasted = [_code(source) for source in lessons()["02"].cells]  # with its H.check_one_head(one_head) call
    assert other_exercises(lesson + pasted, "01", lessons()).startswith("also defines one_head, split_heads (lesson 02)")
    helper = [_code("def attention_weights(Q, K):\n    return (Q @ K.T).softmax(-1)\n"),  # sweep 15, R41
              _code("def one_head(X, W_Q, W_K, W_V):\n    return attention_weights(X @ W_Q, X @ W_K) @ (X @ W_V)\n")]
    assert other_exercises([_code(c) for c in lessons()["02"].cells] + helper, "02", lessons()) == ""
    job = Job("ana_01.ipynb", None, lesson="01", note=note)
    kept = dict(job.result(), records=[{}] * 3, taken=[{}] * 3)
    again = Job("ana_01.ipynb", None)
    assert _restore(again, kept) and again.note == note  # a rerun keeps it


def test_a_module_the_notebook_never_imports_is_named_with_its_import_line():
    """`torch.stack` in lesson 05 (which imports no torch) was told "compute it from the inputs"."""
    from helpers.exercises.diagnosis import translate_error
    line, code = translate_error(NameError("name 'torch' is not defined"), "planted maps [3, 6, 8, 8]")
    assert code == "error.module_not_imported" and "add `import torch` to the exercise's cell" in line
    assert "import torch.nn.functional as F" in translate_error(NameError("name 'F' is not defined"), "x")[0]
    assert translate_error(NameError("name 'inv_root' is not defined"), "x")[1] == "error.name_not_defined"


def test_an_answer_above_a_stub_left_in_the_exercise_cell_is_told_where_jupyter_looks():
    """The answer in a new cell above, the stub kept below: the line said only "not attempted yet"."""
    from helpers.grade import worker
    taken = _take("def attention_weights(Q, K):\n    return (Q @ K.T).softmax(-1)\n",
                  "def attention_weights(Q, K):\n    pass\n")
    assert taken.earlier and not _take("def attention_weights(Q, K):\n    pass\n").earlier
    ex = lessons()["01"].exercises[0][1]
    said = {"outcome": "not_attempted", "code": f"{ex.key}.not_attempted", "line": "… x: not attempted yet"}
    assert "a cell above defines it too: put your answer in the last one" in worker._stub_last(said, ex, taken)["line"]


def test_an_answer_in_a_markdown_cell_and_git_conflict_markers_are_told_as_such():
    """A definition in a cell turned to Markdown was "not attempted"; a merge conflict "open it in Jupyter"."""
    markdown = {"cell_type": "markdown", "source": "def attention_weights(Q, K):\n    return Q\n", "metadata": {}}
    taken = definitions.take([markdown], "attention_weights")
    assert taken.code is None and "is in a Markdown cell, which Jupyter does not run" in taken.problem
    written = [{"cell_type": "code", "source": "%%writefile mine.py\ndef attention_weights(Q, K):\n    return Q\n"},
               {"cell_type": "code", "source": "from mine import attention_weights\n"}]  # sweep 14, A66
    assert definitions.take(written, "attention_weights").problem == (
        "attention_weights is imported (`from mine import attention_weights`), not defined in a cell: only the notebook "
        "is graded, without your own files (such as one %%writefile wrote); define attention_weights in a cell of the "
        "notebook")
    raw = definitions.take([dict(markdown, cell_type="raw")], "attention_weights")  # sweep 14, C28: "not attempted"
    assert raw.code is None and "is in a Raw cell, which Jupyter does not run" in raw.problem
    merged = b'{\n "cells": [\n<<<<<<< HEAD\n  {"cell_type": "code"}\n=======\n  {}\n>>>>>>> theirs\n ]\n}\n'
    assert "merge-conflict markers" in cells_of(merged)[1]


def test_the_names_file_and_the_class_are_compared_both_ways():
    """A key the --names file lacks was shown raw without a word; a named student with no notebook vanished."""
    from helpers.grade.classroom import _rows
    subs = [submissions.Submission("ana", "ana_01.ipynb", b"{}"), submissions.Submission("cy", "cy_01.ipynb", b"{}")]
    rows = _rows(subs, [], {"ana": "Ana Lima", "dee": "Dee Park"})
    assert set(rows) == {"Ana Lima", "cy", "Dee Park"}  # Dee Park gets a row (every lesson "not submitted")
    assert rows["cy"].notes == ["No row of the --names file gives this key a name: add `cy,<name>` to it."]
    assert rows["Dee Park"].notes == ["Named in the --names file, but no notebook of theirs was found."]
    assert rows["Ana Lima"].notes == [] and _rows(subs, [], {})["cy"].notes == []


def test_an_emoji_in_a_name_is_drawn_whole_and_its_variation_selector_draws_nothing():
    """👩‍💻 was cut in two with an alarming note; "Mo ❤️" and "Mo ❤" were two rows without a word."""
    from helpers.grade.classroom import _names
    assert submissions.visible("Li 👩\u200d💻") == "Li 👩\u200d💻"
    assert submissions.visible("a\u200db") == "ab"  # between letters it still draws nothing
    shown = _names(["Mo ❤\ufe0f", "Mo ❤", "Li 👩\u200d💻"])
    assert shown["Li 👩\u200d💻"] == ("Li 👩\u200d💻", "")
    assert {shown["Mo ❤"][0], shown["Mo ❤\ufe0f"][0]} == {"Mo ❤", "Mo ❤ (2)"}
    assert all("looks like another student's" in shown[k][1] for k in ("Mo ❤", "Mo ❤\ufe0f"))


def test_pasted_exercises_of_a_lesson_the_student_handed_in_are_not_said_to_be_missing():
    """ana pasted her lesson 01 functions into 02 as helpers and handed in 01 too; her row told her to "hand that
    lesson in as its own notebook" (sweep 28, A03). bo, who did not hand in 01, is still told."""
    from helpers.grade.classroom import _rows
    from helpers.grade.pool import Job
    note = ("also defines masked_weights (lesson 01), which are graded only in their own lesson's notebook: hand that "
            "lesson in as its own notebook")
    graded = []
    for student, lesson in (("ana", "01"), ("ana", "02"), ("bo", "02")):
        sub = submissions.Submission(student, f"{student}_{lesson}.ipynb", b"{}")
        graded.append((sub, Job(sub.source, None, lesson=lesson, note=note if lesson == "02" else ""), student))
    rows = _rows([s for s, _, _ in graded], graded, None)
    assert not [n for n in rows["ana"].notes if "also defines" in n]
    assert rows["bo"].notes == [f"bo_02.ipynb {note}."]


def test_a_name_given_by_the_names_file_that_another_files_key_has_is_refused_before_grading(tmp_path):
    """`s4711,Bruno` in --names beside an unnamed Bruno_01.ipynb made the two one row, and one notebook was "not
    graded" (sweep 28, D09)."""
    from helpers.grade.classroom import grade_class
    for key in ("s4711", "Bruno", "ana"):
        (tmp_path / f"{key}_01.ipynb").write_bytes(b"{}")
    with pytest.raises(ValueError) as refused:
        grade_class([tmp_path], tmp_path / "out", names={"s4711": "Bruno", "ana": "Ana Lima"}, progress=False)
    assert str(refused.value).startswith("--names gives 's4711' the name 'Bruno', which is also the name ")
    assert "Add a row `Bruno,<name>`, or give 's4711' another name." in str(refused.value)
    assert not (tmp_path / "out").exists()  # nothing graded, nothing written


def test_a_loose_file_named_as_a_platforms_participant_gets_a_note_and_is_not_merged():
    """Moodle's "Ana Lima (4321)" and a late file "Ana Lima_01.ipynb" were two rows without a word (sweep 27, G16);
    two participants of one name with two ids are two students, and neither note speaks of the other."""
    from helpers.grade.classroom import _names
    shown = _names(["Ana Lima (4321)", "ana lima", "Bo Chen (7)", "Bo Chen (8)"])
    assert shown["ana lima"] == ("ana lima", "Another row has this name and a platform's id (Ana Lima (4321)): two "
                                             "rows, not merged; if they are one student, give both files one name.")
    assert shown["Ana Lima (4321)"] == ("Ana Lima (4321)", "")
    assert shown["Bo Chen (7)"][1] == shown["Bo Chen (8)"][1] == ""
    shown = _names(["Untitled0", "Untitled0 (1)", "hw3_01", "hw3_01 (1)"])  # a second download, not an id
    assert all(note == "" for _, note in shown.values())


def test_anonymous_results_keep_no_string_the_student_wrote():
    """`note = "Ana Lima 4321 …"` inside a function and a print's text stayed in verdicts.json under --anonymous."""
    from helpers.grade.classroom import _no_strings
    code = ('NAME = "Ana Lima"\ndef weighted_sum(weights, V):\n    """by ana.lima@example.edu"""\n'
            '    note = "Ana Lima 4321"\n    print(f"hello from {note} Ana")\n    return weights @ V\n')
    blanked = _no_strings(code)
    assert "Ana" not in blanked and "example.edu" not in blanked and "return weights @ V" in blanked
    assert "Ana" not in _no_strings('def f(:\n    "Ana" + \'Lima\'')  # code that does not parse keeps no quote


def test_a_zip_per_student_in_a_folder_is_that_students(tmp_path):
    """ana.zip and fay.zip, each holding 01_single_head_attention.ipynb, were one row named after the lesson."""
    lesson = _bytes(notebook(lessons()["01"].path, {}))
    _zip(tmp_path / "ana.zip", [("01_single_head_attention.ipynb", lesson)])
    _zip(tmp_path / "fay.zip", [("work/01_single_head_attention.ipynb", lesson)])
    _zip(tmp_path / "dan.zip", [])  # empty: a row that says so, not a student who vanishes
    _zip(tmp_path / "eve.zip", [("../../eve_01.ipynb", lesson)])  # climbs out: said in her row
    _zip(tmp_path / "class.zip", [("Bo Chen_4322_assignsubmission_file_/01.ipynb", lesson)])  # a platform's download
    found, _ = collect([tmp_path])
    rows = {s.student: s for s in found}
    assert set(rows) == {"ana", "fay", "dan", "eve", "Bo Chen (4322)"}
    assert rows["ana"].data == lesson and rows["dan"].problem == submissions.EMPTY_ZIP
    assert not rows["eve"].skipped and "climbs out" in rows["eve"].problem


def test_a_folder_given_as_the_points_or_names_file_is_said_to_be_a_folder(tmp_path):
    from helpers.grade.results import read_points
    with pytest.raises(FileNotFoundError, match="is a folder, not a points file"):
        read_points(tmp_path, ["01 attention_weights"])
    with pytest.raises(FileNotFoundError, match="is a folder, not a names file"):
        submissions.read_names(tmp_path)


@pytest.mark.parametrize("header", ["key,name", "Key,Name", "File name,Student name", "Username,Full name", "\ufeffkey,name"])
def test_a_names_header_in_other_words_is_not_a_student(tmp_path, header):
    """`File name,Student name` as the first row became a student "Student name" with 0 points (sweep 26, R07)."""
    (tmp_path / "names.csv").write_text(f"{header}\nana,Ana Lima\nbo,Bo Chen\n", encoding="utf-8")
    assert submissions.read_names(tmp_path / "names.csv") == {"ana": "Ana Lima", "bo": "Bo Chen"}
    (tmp_path / "first.csv").write_text("name,Name Lee\nana,Ana Lima\n", encoding="utf-8")
    assert submissions.read_names(tmp_path / "first.csv") == {"name": "Name Lee", "ana": "Ana Lima"}  # Lee: a student


def test_quotes_doubled_inside_a_name_are_read_as_a_spreadsheet_wrote_them(tmp_path):
    """A name Google Sheets wrote with its quotes doubled (the file below) kept two quotes too many: the CSV
    sniffer's guess of quoting (sweep 27)."""
    (tmp_path / "names.csv").write_text('key,name\nalima,"Lima, Ana"\nbchen,"Chen, Bo ""Bobby"""\n\n\n', encoding="utf-8")
    assert submissions.read_names(tmp_path / "names.csv") == {"alima": "Lima, Ana", "bchen": 'Chen, Bo "Bobby"'}
    (tmp_path / "spaced.csv").write_text('ana, "Lima, Ana"\nbo;x, Bo\n', encoding="utf-8")
    assert submissions.read_names(tmp_path / "spaced.csv") == {"ana": "Lima, Ana", "bo;x": "Bo"}


def test_a_tensor_that_cannot_be_read_is_named_with_its_shape():
    from helpers.exercises.verdict import read_tensor

    value, said = read_tensor(torch.zeros(3, 4).to_sparse(), ())  # numpy cannot read it (as a 20000² one past memory)
    assert value is None and said.startswith("your tensor of shape [3, 4] could not be read as numbers")


def test_a_keyboard_interrupt_while_a_class_is_graded_is_the_functions_own():
    """`raise KeyboardInterrupt` in a function was told "stopped … run the cell again"."""
    from helpers.grade import worker
    ex = lessons()["01"].exercises[0][1]
    said = {"code": f"{ex.key}.stopped", "line": "… stopped before your function finished"}
    assert "raised KeyboardInterrupt itself" in worker._stopped_itself(said, ex)["line"]
    right = {"code": f"{ex.key}.right", "line": "✓"}
    assert worker._stopped_itself(right, ex) == right


def test_an_empty_moodle_folder_is_a_row_and_os_and_nbgrader_files_are_nobodys(tmp_path):
    """Sweep 18: an empty Moodle folder left no row; Thumbs.db and desktop.ini became students; nbgrader's
    timestamp.txt was "a .txt file, not a notebook" in the student's row."""
    lesson = _bytes(notebook(lessons()["01"].path, {}))
    (tmp_path / "Ana Lima_4321_assignsubmission_file_").mkdir()
    (tmp_path / "Ana Lima_4321_assignsubmission_file_" / "ana_01.ipynb").write_bytes(lesson)
    (tmp_path / "Dan Empty_4324_assignsubmission_file_").mkdir()
    (tmp_path / "Thumbs.db").write_bytes(b"\0")
    (tmp_path / "desktop.ini").write_text("[.ShellClassInfo]")
    (tmp_path / "Ana Lima_4321_assignsubmission_file_" / "timestamp.txt").write_text("2026-12-07 10:00:00")
    subs, _ = collect([tmp_path])
    assert sorted((s.student, s.problem) for s in subs) == [
        ("Ana Lima (4321)", ""), ("Dan Empty (4324)", "is an empty folder: nothing was handed in")]
    archive = tmp_path / "moodle.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("Ana Lima_4321_assignsubmission_file_/ana_01.ipynb", lesson)
        z.writestr("Dan Empty_4324_assignsubmission_file_/", b"")
        z.writestr("Thumbs.db", b"\0")
    subs, _ = read_zip(archive)
    assert sorted((s.student, s.problem) for s in subs) == [
        ("Ana Lima (4321)", ""), ("Dan Empty (4324)", "is an empty folder: nothing was handed in")]


def test_a_teams_draft_that_was_never_turned_in_is_graded_and_said():
    """Only Working files/ (nothing in Submitted files): graded without a word (sweep 18, teams_draft_only)."""
    from helpers.grade.classroom import _rows
    from helpers.grade.pool import Job
    from helpers.grade.submissions import Submission
    subs = [Submission("Chloé", "class.zip: Chloé/Working files/01_single_head_attention.ipynb", b"{}"),
            Submission("Bea", "class.zip: Bea/Working files/01_single_head_attention.ipynb", b"{}"),
            Submission("Bea", "class.zip: Bea/Submitted files/01_single_head_attention.ipynb", b"{}")]
    rows = _rows(subs, [(sub, Job(sub.source, None, lesson="01"), "k") for sub in subs], None)
    assert "Lesson 01 was graded from the Teams draft (Working files): it was never turned in" in rows["Chloé"].notes[0]
    assert not [note for note in rows["Bea"].notes if "never turned in" in note]  # her submitted file was graded


def test_a_function_passed_to_the_check_under_another_name_is_named():
    """`def attn_weights` and `H.check_attention_weights(attn_weights)`: a bare "not attempted" (sweep 19, aw_renamed)."""
    cell = "def attn_weights(Q, K):\n    return Q\n\nH.check_attention_weights(attn_weights)\n"
    taken = definitions.take([_code(cell)], "attention_weights", check="check_attention_weights")
    assert taken.code is None and taken.similar == ("attn_weights",)
    assert definitions.take([_code(cell)], "attention_weights").similar == ()  # without the check's name: unseen


def test_an_import_only_a_cell_below_makes_is_said_and_a_copy_above_is_said_beside_a_wrong_answer():
    """Sweep 19: "math, which this notebook never imports" with `import math` in a cell below (r3_import_in_cell_below);
    a wrong copy below a right one, no word of the other (aw_copy_right_then_scratch_wrong)."""
    from helpers.grade import worker
    ex = lessons()["02"].exercises[0][1]
    taken = definitions.take([_code("def one_head(X, W_Q, W_K, W_V):\n    return math.sqrt(2)\n"),
                              _code("import math\n")], "one_head")
    assert "math" in taken.below
    said = {"outcome": "mistake", "code": f"{ex.key}.error.module_not_imported",
            "line": "✗ one head: your function uses math, which is not imported where it runs: add `import math`."}
    assert "only a cell below the exercise imports" in worker._name_left_out(said, ex, taken)["line"]
    right = definitions.take([_code("def one_head(X, W_Q, W_K, W_V):\n    return X\n"),
                              _code("def one_head(X, W_Q, W_K, W_V):\n    return W_Q\n")], "one_head")
    wrong = {"outcome": "mistake", "code": f"{ex.key}.x", "line": "✗ one head: a slip."}
    assert worker._copy_above(wrong, ex, right)["line"] == ("✗ one head: a slip. (A cell above defines one_head too: "
                                                           "the last definition in the notebook is graded, as a run "
                                                           "from the top keeps it.)")
    assert worker._copy_above(dict(wrong, outcome="right"), ex, right) == dict(wrong, outcome="right")


def test_a_zip_name_read_by_the_standards_guess_is_said_so(tmp_path):
    """A zip that does not mark its names UTF-8 is read in code page 437, as the standard says; a Latin-1 name then
    came out as "RenΘ" without a word (sweep 24, W7). An ASCII name, or one marked UTF-8, needs no line."""
    with zipfile.ZipFile(tmp_path / "class.zip", "w") as z:
        z.writestr("RenX_01.ipynb", "{}")
        z.writestr("Zoë_01.ipynb", "{}")  # marked UTF-8 by Python's zipfile
        z.writestr("bob_01.ipynb", "{}")
    (tmp_path / "class.zip").write_bytes((tmp_path / "class.zip").read_bytes().replace(b"RenX", b"Ren\xe9"))
    found, _ = read_zip(tmp_path / "class.zip")
    notes = {sub.student: sub.note for sub in found}
    assert notes["RenΘ"].startswith("its name is read in code page 437") and notes["Zoë"] == notes["bob"] == ""


def test_a_macs_unmarked_utf8_zip_name_is_read_as_utf8_and_meets_the_same_name_outside(tmp_path):
    """A Mac's zipper writes UTF-8 names without the zip's UTF-8 mark: "José" (NFD) was read "Jose╠ü", a second row
    beside the loose "José_01 (1).ipynb" (sweep 29, W1). The entry is still read, and needs no line."""
    nfd = unicodedata.normalize("NFD", "José")
    with zipfile.ZipFile(tmp_path / "mac.zip", "w") as z:
        z.writestr("JXXXXX_01.ipynb", "{}")
    raw = (tmp_path / "mac.zip").read_bytes().replace(b"JXXXXX", nfd.encode())  # 6 bytes for 6: offsets hold
    (tmp_path / "mac.zip").write_bytes(raw)
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "José_01 (1).ipynb").write_text("{}")
    found = collect([tmp_path / "mac.zip", tmp_path / "d" / "José_01 (1).ipynb"])[0]
    assert {unicodedata.normalize("NFC", s.student) for s in found} == {"José"}
    inside = [s for s in found if s.source.startswith("mac.zip")]
    assert inside[0].data == b"{}" and inside[0].note == ""


def test_the_lesson_names_a_file_may_start_with_are_the_lessons_own():
    """"01_carla" is carla's, "01_single_head_attention" the lesson's own name (no student in it)."""
    from helpers.grade.submissions import LESSON_NAMES
    notebooks = Path(__file__).resolve().parent.parent / "notebooks"
    assert LESSON_NAMES == {p.stem[3:] for p in notebooks.glob("[0-9][0-9]_*.ipynb")}


def test_blackboards_receipts_beside_the_notebooks_are_the_platforms(tmp_path):
    (tmp_path / "Lesson01_ana.lima_attempt_2026-12-01-10-00-00_01.ipynb").write_text("{}")
    (tmp_path / "Lesson01_ana.lima_attempt_2026-12-01-10-00-00.txt").write_text("Name: Ana Lima\n")
    found, _ = collect([tmp_path])
    assert [(sub.student, sub.problem) for sub in found] == [("ana.lima", "")]


def test_a_cell_of_plain_python_is_read_as_it_is_and_a_magic_still_by_ipython():
    """A 5 MB cell of plain Python took IPython's reader 30 s for every exercise, and the notebook was not graded
    (sweep 27): plain Python is now read as it is, and each cell once."""
    from helpers.grade.lessons import plain_python
    plain = "import math\nx = [" + "1," * 2000 + "]\ndef f(a):\n    return a > 0\n"
    assert plain_python(plain) == plain.rstrip("\n")
    assert "get_ipython" not in plain_python("%time y = 1\n!ls\nx?\n") and "pass" in plain_python("!ls\n")
    assert plain_python("    x = 1\n    y = 2\n") == "x = 1\ny = 2"  # an indented cell: IPython's dedent, as before


def test_a_total_of_tenths_is_the_number_a_teacher_wrote():
    """Three exercises of 0.1 points showed 0.30000000000000004 in the class report (sweep 27)."""
    from helpers.grade.results import Row, Table
    right = {"outcome": "right", "code": "x.right", "key": "x"}
    table = Table(["01 a", "01 b", "01 c"], [Row("ana", {c: right for c in ("01 a", "01 b", "01 c")})],
                  {"01 a": 0.1, "01 b": 0.1, "01 c": 0.1})
    assert table.total(table.rows[0]) == 0.3


def test_a_new_notebooks_default_name_is_said_to_name_no_student(tmp_path):
    """Colab's `Untitled0.ipynb` became a student "Untitled0" without a word (sweep 27, D05); in a student's own
    folder, two such files made the folder a class of two."""
    from helpers.grade.classroom import DEFAULT_NAMED, _rows
    lesson = _bytes(notebook(lessons()["01"].path, {}))
    (tmp_path / "Untitled0.ipynb").write_bytes(lesson)
    (tmp_path / "ana").mkdir()
    (tmp_path / "ana" / "Untitled1.ipynb").write_bytes(lesson)
    (tmp_path / "ana" / "Copy of Untitled.ipynb").write_bytes(lesson)
    subs, _ = collect([tmp_path])
    assert {s.student for s in subs} == {"Untitled0", "ana"}
    assert _rows(subs, [], None)["Untitled0"].notes == [DEFAULT_NAMED]


def test_a_function_named_one_letter_off_is_named():
    """`def attention_weight` got a bare "not attempted (the notebook defines no attention_weights)" (sweep 27, C13);
    another exercise's function is not taken for it."""
    cell = "def attention_weight(Q, K):\n    return Q\n\ndef masked_weights(s):\n    return s\n"
    assert definitions.take([_code(cell)], "attention_weights").similar == ("attention_weight",)
    assert definitions.take([_code("def masked_weights(s):\n    return s\n")], "attention_weights").similar == ()


def test_sweep_31s_folders_named_for_a_lesson_or_assignment_hold_students(tmp_path):
    """A folder per assignment with a long name ("Lesson 4 - head count/", "Assignment 1 - Single head/"), Teams'
    "Student Work/Submitted files/<student>/" and a folder of students' folders beside others ("Homework attention/")
    were each one student: one notebook graded, the others dropped (sweep 31, BAD-3)."""
    files = ["Assignment 1 - Single head/Ana Lima/Submitted files/01_single_head_attention.ipynb",
             "Assignment 1 - Single head/Bruno Costa/Submitted files/01_single_head_attention.ipynb",
             "Lesson 01 (Classroom)/Carla Dias - 01_single_head_attention.ipynb",
             "Student Work/Submitted files/Dan Reis/Lesson 1 - attention/01_single_head_attention.ipynb",
             "Student Work/Working files/Dan Reis/Lesson 1 - attention/01_single_head_attention.ipynb",
             "Lesson 4 - head count/Eva Souza/04_head_count_slider.ipynb",
             "Homework attention/Gus Melo/04_head_count_slider.ipynb",
             "Homework attention/Hana Sato/04_head_count_slider.ipynb",
             "Lab 1 - Ivo Pires/01.ipynb",  # a folder per student named with the lesson first stays the student's
             "Jo Lee/attempt 1/01.ipynb", "Jo Lee/attempt 2/01.ipynb"]  # versions in one student's folder
    for f in files:
        (tmp_path / "class" / f).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "class" / f).write_bytes(b"{}")
    found = collect([tmp_path / "class"])[0]
    assert sorted({s.student for s in found}) == ["Ana Lima", "Bruno Costa", "Carla Dias", "Dan Reis", "Eva Souza",
                                                  "Gus Melo", "Hana Sato", "Jo Lee", "Lab 1 - Ivo Pires"]


def test_an_earlier_lessons_function_the_notebook_calls_is_a_helper_when_the_title_was_edited():
    """`# Lab 2 (Will)` as the title, and lesson 01's attention_weights pasted above one_head, which calls it: the
    notebook was refused whole as "defines exercises of lessons 01 and 02" (sweep 31, BAD-2)."""
    cells, _ = cells_of(_bytes(_nb([
        {"cell_type": "markdown", "metadata": {}, "source": "# Lab 2: shrinking the head (Will)"},
        _code("def attention_weights(Q, K):\n    return (Q @ K.T / Q.shape[-1] ** 0.5).softmax(-1)\n\n"
              "def one_head(X, W_Q, W_K, W_V):\n    return attention_weights(X @ W_Q, X @ W_K) @ (X @ W_V)\n"),
        _code("def split_heads(x, n_heads):\n    return x\n")])))
    assert which_lesson(cells, lessons()) == "02"
    with pytest.raises(ValueError, match="defines exercises of lessons 01 and 02"):  # two lessons' own exercises
        which_lesson(cells_of(_bytes(_nb([_code("def attention_weights(Q, K):\n    return Q\n"),
                                          _code("def split_heads(x, n_heads):\n    return x\n")])))[0], lessons())


def test_the_definition_graded_is_the_one_the_check_call_saw():
    """A scratch redefinition below the ✓ check was graded (BAD-5); a helper in a cell between the definition and
    its check call was "only in a cell below" (BAD-6). A run from the top gives the check call what is graded."""
    check = "H.check_attention_weights(attention_weights)\n"
    right = "def attention_weights(Q, K):\n    return (Q @ K.T / Q.shape[-1] ** 0.5).softmax(-1)\n"
    scratch = "def attention_weights(Q, K):\n    return (Q @ K.T).softmax(-1)\n"
    taken = definitions.take([_code(right + check), _code(scratch)], "attention_weights",
                             check="check_attention_weights")
    assert taken.cell == right + check and not taken.earlier
    again = definitions.take([_code(right + check), _code(scratch), _code(check)], "attention_weights",
                             check="check_attention_weights")  # checked again after the scratch: that one is graded
    assert again.cell == scratch and again.earlier
    stub = 'def attention_weights(Q, K):\n    """Q, K -> weights."""\n    # your code here\n    ...\n'
    below = definitions.take([_code(stub + check), _code(right)], "attention_weights", check="check_attention_weights")
    assert below.cell == right  # the lesson's stub left with its check, the answer written at the end: the answer
    split = definitions.take([_code("def attention_weights(Q, K):\n    return stable(Q @ K.T)\n"),
                              _code("def stable(s):\n    return s.softmax(-1)\n"), _code(check),
                              _code("def later(s):\n    return s\n")], "attention_weights", check="check_attention_weights")
    assert "def stable" in split.code and "stable" not in split.below and "later" in split.below


@pytest.mark.parametrize("line", ["softmax = torch.nn.Softmax(dim=-1)", "softmax = partial(torch.softmax, dim=-1)",
                                  "MINUS_INF = torch.tensor(float('-inf'))",
                                  "CAUSAL = torch.ones(64, 64, dtype=torch.bool).triu(1)"])
def test_a_softmax_or_a_tensor_made_above_the_def_is_taken(line):
    """Such a line above the def, as tutorials write it, was "a line the grader does not run" where the notebook's
    check said ✓ (sweep 31, BAD-1)."""
    taken = _take("import torch\nimport torch.nn as nn\nfrom functools import partial\n" + line + "\n"
                  "def attention_weights(Q, K):\n    return Q\n")
    assert line.replace("'", '"').split(" = ")[0] + " = " in taken.code and not taken.left_out, (taken.code, taken.left_out)


@pytest.mark.parametrize("draft, final", [("c/attention (first try).ipynb", "c/attention (final version).ipynb"),
                                          ("e/hw1 working copy.ipynb", "e/hw1 submitted.ipynb"),
                                          ("f/01_single_head_attention.ipynb", "f/01_single_head_attention_final.ipynb")])
def test_the_notebook_named_final_or_submitted_is_graded_over_a_first_try(draft, final):
    """"first try" sorted after "final version", "working copy" after "submitted": the draft was graded (sweep 31,
    BAD-4)."""
    from helpers.grade.classroom import upload_order
    assert sorted([final, draft], key=upload_order)[-1] == final
