"""class_report.html: the class at a glance on ONE offline page, through the one page writer
(figures/webpage.py: everything inline, a Content-Security-Policy from the page's own script hash,
data as JSON that cannot close its tag). Its script puts every text from a submission in as text
(textContent), so a student's `</script><script>…` shows as what it is."""

from __future__ import annotations

from pathlib import Path

from ..figures import webpage
from .results import Table, column_text
from .summary import summary

TEMPLATE = Path(webpage.__file__).with_name("report_template.html")

__all__ = ["page_data", "report_page", "summary"]


def page_data(table: Table, facts: dict) -> dict:
    """What the page's script draws: the summary and the student table."""
    rows = [{"student": row.student, "cells": [column_text(row.records.get(c)) for c in table.columns],
             "total": table.total(row)} for row in table.rows]
    return dict(facts, table={"columns": table.columns, "rows": rows})


def report_page(table: Table, facts: dict | None = None, title: str = "The class at a glance") -> str:
    """The page's text, ready for webpage.write_page (or the staged set of outputs.py)."""
    facts = summary(table) if facts is None else facts
    return webpage.fill(TEMPLATE.read_text(encoding="utf-8"),
                        {"__TITLE__": webpage.text(title), "__DATA__": webpage.script_json(page_data(table, facts))})
