"""class_report.html in Debian's Chromium, opened from file:// with every request refused.

The table is built here (no grading, a second or two), with a student whose code and name hold
`</script><script>…` and markup: the page must show them as text, run no script of theirs, ask no
host for anything and log no console error. It sorts the student table and hides it for a projector.
Screenshots go to test-artifacts/browser/class_report*.png for a person to look at.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.figures.webpage import page_path, write_page
from helpers.grade.results import Row, Table, report_page
from test_browser import ARTIFACTS, CHROMIUM, chromium
from test_page_browser import OfflinePage

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(),
                       reason=f"{CHROMIUM} is missing: install Debian's browser with `apt-get install -y chromium`"),
]

ATTACK = "</script><script>window.pwned = 1</script><img src=x onerror=\"window.pwned = 2\">"
CODE = f"def attention_weights(Q, K):\n    '{ATTACK}'\n    return (Q @ K.T / Q.shape[0] ** 0.5).softmax(-1)\n"


def _record(column: str, outcome: str, code: str, graded: str = "") -> dict:
    key = column.split(" ", 1)[1]
    return {"exercise": key, "key": key, "outcome": outcome, "code": f"{key}.{code}", "line": f"✗ {key}: {ATTACK}",
            "printed": ATTACK, "sure": True, "graded": graded, "lesson": column[:2]}


def _table() -> Table:
    columns = ["01 attention_weights", "01 masked_weights"]
    rows = []
    for i in range(12):
        name = f"student{i:02d}" if i else f"Zoë {ATTACK}"
        aw = _record(columns[0], "mistake", "sqrt_of_T", CODE) if i % 3 == 0 else _record(columns[0], "right", "right")
        mw = _record(columns[1], "raised", "raised") if i % 4 == 0 else _record(columns[1], "not_attempted", "not_attempted")
        rows.append(Row(name, {columns[0]: aw, columns[1]: mw}, notes=[f"A note on {name}."] if i == 1 else []))
    return Table(columns, rows, {c: 1.0 for c in columns}, ["no network (own network namespace)"])


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    path = page_path("class_report", folder=tmp_path_factory.mktemp("report"))
    return write_page(report_page(_table()), path)


def test_the_report_opens_offline_and_shows_a_submission_as_text(report):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with chromium() as browser:
        watched = OfflinePage(browser)
        page = watched.page
        page.goto(report.as_uri())
        page.wait_for_selector("#students table")
        assert page.evaluate("() => window.pwned") is None
        assert ATTACK in page.inner_text("#top")  # the example code and line, shown as written
        assert page.locator("img").count() == 0
        assert page.inner_text("#top li:first-child .code") == "sqrt_of_T"
        says = page.inner_text("#top li:first-child").split(" students. ", 1)[1]
        assert says[:1].isupper() and says.splitlines()[0].endswith(".")  # a sentence after "1 of 3 students."
        page.screenshot(path=str(ARTIFACTS / "class_report.png"), full_page=True)
        notes = page.locator("#students tbody td.note").all_inner_texts()  # each row's note, as grades.csv has it
        assert "A note on student01." in notes and len(notes) == len(_table().rows)
        page.click("#students th:nth-child(2) button")  # sort by the first exercise
        first = page.inner_text("#students tbody tr:first-child td:nth-child(2)")
        page.click("#hide")
        hidden = page.evaluate("() => getComputedStyle(document.getElementById('students')).display")
        page.screenshot(path=str(ARTIFACTS / "class_report_projector.png"))
        assert watched.refused == [] and watched.errors == []
    assert first in ("sqrt_of_T", "✓") and hidden == "none"


def test_the_page_allows_only_its_own_script(report):
    text = report.read_text(encoding="utf-8")
    assert "script-src 'sha256-" in text and "unsafe-inline'; img-src" in text and "default-src 'none'" in text
    assert text.count("<script>") == 1 and "</script><script>window" not in text
