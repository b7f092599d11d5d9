"""The grader's files, written together through the one writer (core/files.py `staged_files`):
grades.csv, verdicts.json, class_report.html and the report's figure (.png, .svg, .pdf)."""

from __future__ import annotations

from pathlib import Path

from ..core.files import staged_files
from ..figures.class_plots import plot_class_mistakes
from ..figures.export import save_for_slides
from .report import report_page, summary
from .results import Table, csv_text, verdicts_json

NAMES = ("grades.csv", "verdicts.json", "class_report.html", "class_report.png")


def write_outputs(table: Table, out: Path, anonymous: bool) -> list[Path]:
    """Write every file into `out` (all appear, or none); the paths written."""
    facts = summary(table)
    with staged_files(out) as staging:
        (staging / "grades.csv").write_text(csv_text(table), encoding="utf-8")
        (staging / "verdicts.json").write_text(verdicts_json(table, anonymous), encoding="utf-8")
        (staging / "class_report.html").write_text(report_page(table, facts), encoding="utf-8")
        figures = save_for_slides(plot_class_mistakes(facts), "class_report", folder=staging)
    return [Path(out) / n for n in NAMES[:3]] + [Path(out) / p.name for p in figures]
