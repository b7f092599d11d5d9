"""Notebook 08 in JupyterLab in Chromium: it runs with no error, its pictures keep their aspect, the first
move of the training-step slider redraws the maps, and the live cell's plot updates while it trains
(on the tiny recipe, as in the headless test). Uses the launch helpers of test_browser.py."""

from pathlib import Path

import nbformat
import pytest

from test_browser import (ARTIFACTS, CHROMIUM, NOTEBOOKS, SLOW, Watched, badly_shown, chromium, close_notebook,
                          free_port, lab_command, open_and_run_all, page_problems, press, server, timed_move,
                          widget_images)

NAME = "08_watch_the_heads_learn"

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is missing")]


def tiny_copy(tmp: Path) -> str:
    """The notebook with its live cell on the tiny recipe (a few seconds instead of two minutes)."""
    nb = nbformat.read(NOTEBOOKS / f"{NAME}.ipynb", as_version=4)
    for cell in nb.cells:
        if "live-training" in cell.metadata.get("tags", []):
            cell.source = cell.source.replace('"heads-12"', '"tiny"')
    (tmp / "work").mkdir(exist_ok=True)
    nbformat.write(nb, tmp / "work" / f"{NAME}.ipynb")
    return f"{NAME}.ipynb"


def test_notebook_08_in_jupyterlab(tmp_path):
    name = tiny_copy(tmp_path)
    port = free_port()
    with server(lab_command(port, tmp_path), tmp_path, f"http://127.0.0.1:{port}/api/status", "jupyterlab"), \
            chromium() as browser:
        watched = Watched(browser)
        page = watched.page
        try:
            open_and_run_all(page, f"http://127.0.0.1:{port}", name)
            problems = page_problems(page)
            assert not any(problems.values()), problems
            images = widget_images(page)
            assert len(images) >= 2 and not badly_shown(images), badly_shown(images)
            ms = timed_move(page, press(".step-slider .noUi-handle", "ArrowLeft"), ".step-maps")
            print(f"08 training-step slider: key to new picture {ms:.0f} ms")
            assert "step 768" in page.locator(".step-slider").first.inner_text() or \
                "768" in page.locator(".step-slider .widget-readout").first.inner_text()
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.locator(".step-maps").first.evaluate("e => e.scrollIntoView({block: 'start'})")
            page.screenshot(path=ARTIFACTS / "lab_08_slider.png")
            page.locator(".live-train").first.evaluate("e => e.scrollIntoView({block: 'center'})")
            page.locator(".live-train").first.click()  # the plot appears with its first picture
            page.wait_for_function("() => (document.querySelector('.live-status')?.innerText || '')"
                                   ".startsWith('finished')", timeout=SLOW)
            shown = page.evaluate("() => { const i = document.querySelector('.live-plot'); "
                                  "return [i.naturalWidth, i.naturalHeight]; }")
            assert shown[0] > 0 and shown[1] > 0  # the live plot was drawn
            assert not badly_shown(widget_images(page))
            page.screenshot(path=ARTIFACTS / "lab_08_live.png")
            assert not page_problems(page)["widgetErrors"] and not watched.outside
        except Exception:
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=ARTIFACTS / "lab_08_failure.png")
            raise
        finally:
            close_notebook(page)
