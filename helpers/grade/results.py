"""The class's results: the table (a row per student, a column per exercise), what it counts, and the
files written from it (grades.csv, verdicts.json, class_report.html and its figure); and each notebook's
result kept in OUT/.grading/ as it is graded, so an interrupted class keeps what was graded.

A cell of the table is read from the verdict in ONE place, `column_text`: `✓`, the mistake's code
(`sqrt_of_T`, the part after the exercise's key), `generic`, `not attempted`, `raised`, `too slow`,
or `not submitted` when the student handed in no notebook of that lesson.

The three mistakes to address first: the named mistakes ranked by students × (1 + the share of the
graded exercises that come after theirs), so a mistake early in the course, which later lessons build
on, counts up to twice; ties go to the earlier exercise, then to the code in alphabetical order.

A kept result is known by where its notebook came from and a hash of its bytes: a file handed in again
with other contents is graded again. `--again` removes them all first.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import io
import json
import math
import os
import re
import shutil
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ..core.files import atomic_write, write_set
from ..exercises.catalogue import engine_codes, entries
from ..figures import webpage
from ..figures.class_plots import plot_class_mistakes
from ..figures.export import slide_files
from .lessons import SETUP_FAILED
from .submissions import csv_rows

RIGHT, NOT_SUBMITTED = "✓", "not submitted"
PLAIN = {"right": RIGHT, "generic": "generic", "not_attempted": "not attempted", "raised": "raised",
         "too_slow": "too slow", "stopped": "raised"}  # stopped: it ended its process instead of returning
GROUPS = ("generic", "raised", "too slow", "not attempted")  # the answers the report groups, not named mistakes
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # a spreadsheet reads a cell starting so as a formula (OWASP)
NAMES = ("grades.csv", "verdicts.json", "class_report.html", "class_report.png")
TEMPLATE = Path(webpage.__file__).with_name("report_template.html")
FOLDER = ".grading"
MAX_POINTS = 1000  # points of one exercise
VERSION = 1  # kept results of another layout are graded again


def column_text(record: dict | None) -> str:
    """What the table shows for one verdict record (None: the lesson was not handed in)."""
    if record is None:
        return NOT_SUBMITTED
    if record["outcome"] in PLAIN:
        return PLAIN[record["outcome"]]
    return record["code"].removeprefix(record["key"] + ".")  # mistake, patched: the stable code


@dataclass
class Row:
    """One student: a verdict record per exercise column, where the notebooks came from, what happened."""

    student: str
    records: dict[str, dict] = field(default_factory=dict)  # column -> record (with its "cell": the student's code)
    sources: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    unnamed: list[str] = field(default_factory=list)  # the same notes without file names (for --anonymous)


@dataclass
class Table:
    """The class: exercise columns ("01 attention_weights") in lesson order, and the rows."""

    columns: list[str]
    rows: list[Row]
    points: dict[str, float]  # column -> points
    protections: list[str] = field(default_factory=list)
    inputs: list[str] = field(default_factory=list)  # lines about what was skipped when reading
    timings: dict = field(default_factory=dict)  # seconds: "setup" per lesson, "notebooks" per lesson (the bench)

    def total(self, row: Row) -> float:  # rounded: three 0.1 points were 0.30000000000000004 in the report (sweep 27)
        return round(sum(self.points[c] for c in self.columns if column_text(row.records.get(c)) == RIGHT), 6)


def read_points(path: Path | None, columns: list[str], given: set | None = None) -> dict[str, float]:
    """Points per exercise from a CSV of `exercise,points` rows (the function's name, or "01 name"); default 1.
    `given`, when passed, gets the columns the file gives points to (the grader names the others)."""
    points, seen = {c: 1.0 for c in columns}, {}
    if path is None:
        return points
    if not Path(path).is_file():
        raise FileNotFoundError(f"{path} is a folder, not a points file: pass a CSV with exercise,points rows."
                                if Path(path).is_dir() else f"No points file {path}: pass a CSV with exercise,points rows.")
    rows = csv_rows(path, "exercise,points")
    if not any(len(row) >= 2 and row[0].strip() and row[0].strip().lower() != "exercise" for row in rows):
        raise ValueError(f"{path} has no exercise,points rows; write one per exercise (e.g. attention_weights,2), "
                         f"or leave --points out for 1 point each.")
    for row in rows:
        if len(row) < 2 or not row[0].strip() or row[0].strip().lower() == "exercise":  # a header row, "Exercise" too
            continue
        matches = [c for c in columns if row[0].strip() in (c, c.split(" ", 1)[1])]
        if not matches:
            raise ValueError(f"{path}: no exercise {row[0].strip()!r}; use one of {[c.split(' ', 1)[1] for c in columns]}.")
        try:  # 0,5: a decimal comma, from a spreadsheet that saved its CSV with ; between fields
            value = float(re.sub(r"^\s*(\d+),(\d+)\s*$", r"\1.\2", row[1]))
        except ValueError:
            raise ValueError(f"{path}: points {row[1]!r} for {row[0].strip()} is not a number; write e.g. 2.") from None
        if not math.isfinite(value) or not 0 < value <= MAX_POINTS:  # 1e308 twice would total inf
            raise ValueError(f"{path}: points {row[1].strip()!r} for {row[0].strip()}: write a finite number above 0 "
                             f"and at most {MAX_POINTS:g}, e.g. 2.")
        for column in matches:  # one exercise named twice: which row counts would be a guess
            if column in seen:
                raise ValueError(f"{path}: {column} is given points twice ({seen[column]!r} and {row[0].strip()!r}); "
                                 f"keep one row for it.")
            seen[column] = row[0].strip()
        points.update({c: value for c in matches})
    if given is not None:
        given.update(seen)
    return points


def safe_cell(text: str) -> str:
    """A cell a spreadsheet shows as text: one starting like a formula gets a leading single quote."""
    return "'" + text if text.startswith(FORMULA_START) else text


def csv_text(table: Table) -> str:
    """grades.csv: student, one column per exercise, total, out of, note (UTF-8 with a BOM, so a spreadsheet reads ✓)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(["student", *table.columns, "total", "out of", "note"])
    most = sum(table.points.values())
    for row in table.rows:
        cells = [row.student, *(column_text(row.records.get(c)) for c in table.columns),
                 f"{table.total(row):g}", f"{most:g}", " ".join(row.notes)]
        writer.writerow([safe_cell(c) for c in cells])
    return "\ufeff" + out.getvalue()


def verdicts_json(table: Table, anonymous: bool) -> str:
    """verdicts.json: every verdict with its line, what the student's code printed, and the student's code."""
    students = []
    for row in table.rows:
        verdicts = [dict(row.records[c], column=c, shown=column_text(row.records[c])) for c in table.columns
                    if c in row.records]
        entry = {"student": row.student, "total": table.total(row), "notes": row.notes, "verdicts": verdicts}
        if not anonymous:
            entry["sources"] = row.sources
        students.append(entry)
    data = {"columns": table.columns, "points": table.points, "protections": table.protections,
            "inputs": table.inputs, "students": students}
    return json.dumps(data, ensure_ascii=False, indent=1)


# --- what the class did, counted (the report page and its figure are drawn from this) ---------------------
def catalogue_lines() -> dict[str, str]:
    """Full code ("attention_weights.sqrt_of_T") -> the line the check prints for it (its fix included)."""
    lines = {f"{e.key}.{code}": says for e in entries() for code, says in e.mistakes + e.pairs}
    return lines | {f"*.{code}": meaning for code, (_, meaning) in engine_codes().items()}


CATCH_ALL = {"explained", "unreadable"}  # codes whose catalogue meaning says only how the line was found


def _says(record: dict, lines: dict[str, str]) -> str:
    """What a mistake's code says: the check's catalogued line, else the engine code's meaning; for a catch-all
    code, the line the check printed (one student's, which says what it saw)."""
    code = record["code"]
    short = code.removeprefix(record["key"] + ".")
    if short in CATCH_ALL:
        return record["line"]
    return lines.get(code) or lines.get(f"*.{short}") or record["line"]


def _grouped(records: list[dict]) -> list[dict]:
    """Verdict lines with how many students got each, most first."""
    return [{"line": line, "count": n} for line, n in Counter(r["line"] for r in records).most_common()]


def exercise_facts(table: Table, column: str, lines: dict[str, str]) -> dict:
    """One exercise: counts, named mistakes (code, count, line, example), grouped others, who did not attempt."""
    shown = {row.student: column_text(row.records.get(column)) for row in table.rows}
    handed = [row for row in table.rows if shown[row.student] != NOT_SUBMITTED]
    named = Counter(shown[r.student] for r in handed if shown[r.student] not in GROUPS and shown[r.student] != RIGHT)
    mistakes = []
    for code, count in sorted(named.items(), key=lambda kv: (-kv[1], kv[0])):
        first = next(r.records[column] for r in handed if shown[r.student] == code)
        mistakes.append({"code": code, "count": count, "says": _says(first, lines), "example": first.get("graded", "")})
    by_group = {g: [r.records[column] for r in handed if shown[r.student] == g] for g in GROUPS}
    right = sum(shown[r.student] == RIGHT for r in handed)
    return {"column": column, "lesson": column.split(" ", 1)[0], "name": column.split(" ", 1)[1],
            "handed_in": len(handed), "right": right, "right_share": right / len(handed) if handed else 0.0,
            "mistakes": mistakes, "generic": _grouped(by_group["generic"]), "raised": _grouped(by_group["raised"]),
            "too_slow": len(by_group["too slow"]), "not_attempted": [r.student for r in handed
                                                                       if shown[r.student] == "not attempted"],
            "not_submitted": len(table.rows) - len(handed)}


def top_three(exercises: list[dict]) -> list[dict]:
    """The three named mistakes to address first (see the module's rule)."""
    n = len(exercises)
    ranked = [(m["count"] * (1 + (n - 1 - i) / n), i, ex, m) for i, ex in enumerate(exercises) for m in ex["mistakes"]]
    ranked.sort(key=lambda t: (-t[0], t[1], t[3]["code"]))
    return [{"column": ex["column"], "code": m["code"], "count": m["count"], "handed_in": ex["handed_in"],
             "says": m["says"], "example": m["example"], "weight": round(score, 3)} for score, _, ex, m in ranked[:3]]


def summary(table: Table) -> dict:
    """Every number the report shows, from the table."""
    lines = catalogue_lines()
    exercises = [exercise_facts(table, c, lines) for c in table.columns]
    return {"students": len(table.rows), "exercises": exercises, "top": top_three(exercises),
            "protections": table.protections, "inputs": table.inputs}


# --- the files written from the table ------------------------------------------------------------------
def report_page(table: Table, facts: dict | None = None, title: str = "The class at a glance") -> str:
    """class_report.html: the class on ONE offline page, through the one page writer (figures/webpage.py:
    everything inline, a Content-Security-Policy from its script's hash, data as JSON that cannot close its
    tag). Its script puts every text from a submission in as text, so a student's `</script>` shows as such."""
    facts = summary(table) if facts is None else facts
    rows = [{"student": row.student, "cells": [column_text(row.records.get(c)) for c in table.columns],
             "total": table.total(row), "note": " ".join(row.notes)} for row in table.rows]
    data = dict(facts, table={"columns": table.columns, "rows": rows})
    return webpage.fill(TEMPLATE.read_text(encoding="utf-8"),
                        {"__TITLE__": webpage.text(title), "__DATA__": webpage.script_json(data)})


def write_outputs(table: Table, out: Path, anonymous: bool) -> list[Path]:
    """Write every file into `out` as one set (core/files.py `write_set`: a full disk part-way changes none of
    them, so grades.csv never disagrees with the report); the paths written."""
    facts = summary(table)
    if not facts["exercises"]:  # a class with nothing graded writes nothing, and says why
        why = [note for row in table.rows for note in row.notes] + table.inputs
        fix = ("the grader's own files are damaged: run `python -m helpers.doctor --grading`, which names them"
               if any(SETUP_FAILED in note for note in why) else "pass the students' lesson notebooks")
        raise ValueError("no exercise was graded" + (f" ({'; '.join(why[:3])[:600]})" if why else "") + f": {fix}.")
    figure = plot_class_mistakes(facts)
    texts = dict(zip(NAMES, (csv_text(table), verdicts_json(table, anonymous), report_page(table, facts))))
    files = {Path(out) / name: text.encode("utf-8") for name, text in texts.items()}
    files |= slide_files({"class_report": (figure, "16:9")}, out)
    write_set(files)
    return list(files)


# --- each notebook's result, kept as it is graded --------------------------------------------------------
def kept_name(source: str, data: bytes, setting: str = "") -> str:
    """The name a notebook's result is kept under; `setting`: what else a result depends on (the time limit),
    so a rerun with another --timeout grades again instead of keeping a "too slow" of the old limit."""
    digest = hashlib.sha256(data).hexdigest()
    key = f"{VERSION}\0{grader_digest()}\0{source}\0{digest}\0{setting}"
    return hashlib.sha256(key.encode("utf-8", "replace")).hexdigest()[:40]


@functools.cache
def grader_digest() -> str:
    """A checksum of what decides a verdict: the grader, the checks and the lessons' notebooks. A result kept by
    another version of any of them (a fixed check, an edited lesson) is graded again, not reused."""
    package = Path(__file__).resolve().parent.parent
    files = sorted([*package.glob("grade/*.py"), *package.glob("exercises/*.py"), *package.glob("core/*.py"),
                    *package.parent.glob("notebooks/0*.ipynb")])
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def kept_folder(out: Path) -> Path:
    """OUT/.grading, made now: a one-line ValueError when OUT cannot hold it (a file, read-only, full)."""
    where = Path(out) / FOLDER
    if Path(out).is_symlink() and not Path(out).exists():  # mkdir would say only "File exists"
        raise ValueError(f"--out {out} is a link to {os.readlink(out)}, which does not exist: make that folder, "
                         f"or pass another.")
    try:
        where.mkdir(parents=True, exist_ok=True)
        tempfile.NamedTemporaryFile(dir=where, prefix=".probe-", delete=True).close()
    except OSError as err:
        raise ValueError(f"--out {out}: cannot write there ({err.strerror or type(err).__name__}); "
                         f"pass a folder you can write to.") from None
    return where


def load_kept(where: Path, name: str) -> dict | None:
    """A kept result, or None when there is none (or it cannot be read: then it is graded again)."""
    try:
        data = json.loads((where / f"{name}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("version") == VERSION else None


def keep(where: Path, name: str, result: dict) -> None:
    """Keep one result: all of it or nothing, whatever stops the process."""
    text = json.dumps(dict(result, version=VERSION), ensure_ascii=False)
    atomic_write(where / f"{name}.json", lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))


def forget_kept(where: Path) -> None:
    """--again: forget every kept result."""
    shutil.rmtree(where, ignore_errors=True)
    where.mkdir(parents=True, exist_ok=True)


def forget_named(where: Path) -> None:
    """--anonymous: remove the results a run with names kept (their file name, their cells as written)."""
    for path in where.glob("*.json"):
        try:
            named = bool(json.loads(path.read_text(encoding="utf-8")).get("source"))
        except (OSError, ValueError, AttributeError):
            continue
        if named:
            path.unlink(missing_ok=True)


def remove_leftovers(where: Path) -> None:
    """Remove the temporary files a killed run left (atomic_write's `.NAME.XXXX.tmp`)."""
    for path in where.glob(".*.tmp"):
        path.unlink(missing_ok=True)
