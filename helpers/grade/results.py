"""The class's results as a table: one row per student, a column per exercise; grades.csv and verdicts.json.

A cell of the table is read from the verdict in ONE place, `column_text`: `✓`, the mistake's code
(`sqrt_of_T`, the part after the exercise's key), `generic`, `not attempted`, `raised`, `too slow`,
or `not submitted` when the student handed in no notebook of that lesson.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

RIGHT, NOT_SUBMITTED = "✓", "not submitted"
PLAIN = {"right": RIGHT, "generic": "generic", "not_attempted": "not attempted", "raised": "raised",
         "too_slow": "too slow", "stopped": "raised"}  # stopped: it ended its process instead of returning


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

    def total(self, row: Row) -> float:
        return sum(self.points[c] for c in self.columns if column_text(row.records.get(c)) == RIGHT)


def read_points(path: Path | None, columns: list[str]) -> dict[str, float]:
    """Points per exercise from a CSV of `exercise,points` rows (the function's name, or "01 name"); default 1."""
    points = {c: 1.0 for c in columns}
    if path is None:
        return points
    if not Path(path).is_file():
        raise FileNotFoundError(f"No points file {path}: pass a CSV with exercise,points rows.")
    with open(path, newline="", encoding="utf-8-sig") as f:
        for row in csv.reader(f):
            if len(row) < 2 or not row[0].strip() or row[0].strip() == "exercise":
                continue
            matches = [c for c in columns if row[0].strip() in (c, c.split(" ", 1)[1])]
            if not matches:
                raise ValueError(f"{path}: no exercise {row[0].strip()!r}; use one of {[c.split(' ', 1)[1] for c in columns]}.")
            try:
                value = float(row[1])
            except ValueError:
                raise ValueError(f"{path}: points {row[1]!r} for {row[0].strip()} is not a number; write e.g. 2.") from None
            if not math.isfinite(value) or value <= 0:
                raise ValueError(f"{path}: points {row[1].strip()!r} for {row[0].strip()}: write a finite number "
                                 f"above 0, e.g. 2.")
            points.update({c: value for c in matches})
    return points


def _number(value: float) -> str:
    return f"{value:g}"


FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # a spreadsheet reads a cell starting so as a formula (OWASP)


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
                 _number(table.total(row)), _number(most), " ".join(row.notes)]
        writer.writerow([safe_cell(c) for c in cells])
    return "\ufeff" + out.getvalue()


def verdicts_data(table: Table, anonymous: bool) -> dict:
    """verdicts.json: every verdict with its line, what the student's code printed, and the student's code."""
    students = []
    for row in table.rows:
        verdicts = [dict(row.records[c], column=c, shown=column_text(row.records[c])) for c in table.columns
                    if c in row.records]
        entry = {"student": row.student, "total": table.total(row), "notes": row.notes, "verdicts": verdicts}
        if not anonymous:
            entry["sources"] = row.sources
        students.append(entry)
    return {"columns": table.columns, "points": table.points, "protections": table.protections,
            "inputs": table.inputs, "students": students}


def verdicts_json(table: Table, anonymous: bool) -> str:
    return json.dumps(verdicts_data(table, anonymous), ensure_ascii=False, indent=1)
