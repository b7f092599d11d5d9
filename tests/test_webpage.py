"""The one page writer (helpers/figures/webpage.py): escaping, the Content-Security-Policy by hash,
and, in Chromium, that the page's own script runs while a script added afterwards does not."""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path

import pytest

from helpers.figures import webpage

TEMPLATE = """<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="__CSP__"><title>__TITLE__</title></head>
<body><p id="name">__NAME__</p><script id="d" type="application/json">__DATA__</script>
<script>document.body.dataset.ran = JSON.parse(document.getElementById('d').textContent).word;</script>
</body></html>"""
HOSTILE = "</script><script>document.body.dataset.pwned = 1</script> __TITLE__ __CSP__"


def hostile_page() -> str:
    return webpage.fill(TEMPLATE, {"__TITLE__": webpage.text(HOSTILE), "__NAME__": webpage.text(HOSTILE),
                                   "__DATA__": webpage.script_json({"word": HOSTILE})})


def test_data_and_text_cannot_close_a_tag_or_fill_a_marker():
    page = hostile_page()
    assert page.count("<script>") == 1 and page.count("</script>") == 2  # the template's own, no more
    assert webpage.read_script_json(page, "d") == {"word": HOSTILE}
    assert page.count("__CSP__") == 3 and page.count("__TITLE__") == 3  # the values' markers stay as written


def test_the_policy_allows_exactly_the_pages_own_script():
    page = hostile_page()
    body = webpage.INLINE_SCRIPT.findall(page)
    assert len(body) == 1
    digest = base64.b64encode(hashlib.sha256(body[0].encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}';" in page and "default-src 'none'" in page
    assert "unsafe-inline'; img" not in page.split("style-src")[0]  # scripts: no unsafe-inline, no eval


@pytest.mark.parametrize("template, why", [(TEMPLATE.replace("__CSP__", ""), "exactly one __CSP__"),
                                           (TEMPLATE + "__CSP__", "exactly one __CSP__"),
                                           (TEMPLATE, "needs values for ['__DATA__']")])
def test_a_template_without_its_policy_or_values_is_refused(template, why):
    values = {"__TITLE__": "t", "__NAME__": "n"} if "needs values" in why else \
        {"__TITLE__": "t", "__NAME__": "n", "__DATA__": "{}"}
    with pytest.raises(ValueError, match=why.replace("[", r"\[").replace("]", r"\]")):
        webpage.fill(template, values)


def test_page_path_checks_before_anything_is_written(tmp_path):
    assert webpage.page_path("report.html", tmp_path) == tmp_path / "report.html"
    with pytest.raises(ValueError, match="not a plain file name"):
        webpage.page_path("../report", tmp_path)
    assert webpage.write_page("<p>x</p>", tmp_path / "x.html").read_text() == "<p>x</p>"


@pytest.mark.browser
def test_in_chromium_the_own_script_runs_and_an_added_one_does_not(tmp_path):
    from test_browser import CHROMIUM, chromium
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is missing: install Debian's browser with `apt-get install -y chromium`")
    page = hostile_page().replace("</body>", "<script>document.body.dataset.added = 1</script></body>")
    path = tmp_path / "p.html"
    path.write_text(page, encoding="utf-8")
    with chromium() as browser:
        tab = browser.new_page()
        tab.goto(path.as_uri())
        data = tab.evaluate("() => ({...document.body.dataset, name: document.getElementById('name').textContent})")
    assert data == {"ran": HOSTILE, "name": HOSTILE}  # ran; neither the added nor the injected script did
