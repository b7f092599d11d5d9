"""Notebook 04 as a classroom app: Voilà renders it without code, and the head slider works.

`voila notebooks/04_head_count_slider.ipynb` (the optional `voila` extra) is what a teacher
runs; here it is started on 127.0.0.1 with temporary Jupyter folders and opened in Chromium.
"""

from __future__ import annotations

import sys

import pytest

from test_browser import (ARTIFACTS, CHROMIUM, CHROMIUM_FLAGS, SLOW, chromium_page, free_port, head_slider_state,
                          move_head_slider, notebook_copy, server, wait_for_heads)

pytest.importorskip("voila", reason="Voilà is the optional extra `voila`: pip install -e '.[voila]'")

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not __import__("pathlib").Path(CHROMIUM).exists(),
                       reason=f"{CHROMIUM} is missing: install Debian's browser with `apt-get install -y chromium`"),
]
assert CHROMIUM_FLAGS  # the same browser flags as the JupyterLab test


def test_voila_shows_the_head_slider_and_it_moves(tmp_path):
    name = notebook_copy(tmp_path)
    port = free_port()
    cmd = [sys.executable, "-m", "voila", name, "--no-browser", f"--port={port}", "--Voila.ip=127.0.0.1",
           "--Voila.open_browser=False"]
    ARTIFACTS.mkdir(exist_ok=True)
    ready = f"http://127.0.0.1:{port}/voila/templates/lab/static/voila.js"  # static: asking it starts no kernel
    with server(cmd, tmp_path, ready, "voila"), chromium_page() as page:
        try:
            page.goto(f"http://127.0.0.1:{port}/", timeout=SLOW)  # Voilà runs the notebook, then shows it
            page.locator(".heads-slider .noUi-handle").first.wait_for()
            page.wait_for_function("() => document.querySelector('.heads-maps')?.src")
            before = head_slider_state(page)
            assert "import helpers as H" not in page.locator("body").inner_text(), "Voilà should hide the code"
            move_head_slider(page, "ArrowLeft")
            wait_for_heads(page, 3, before["src"])
            after = head_slider_state(page)
            page.screenshot(path=ARTIFACTS / "voila_04_after.png", full_page=True)
        except Exception:
            page.screenshot(path=ARTIFACTS / "voila_04_failure.png", full_page=True)
            raise
    assert before["readout"] == "4" and after["readout"] == "3"
    assert "3 heads" in after["info"] and after["png"] != before["png"]
