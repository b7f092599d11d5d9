"""The classroom app in Voilà: only the slider and the explorer, offline, without version warnings.

`python tools/classroom_app.py` (the optional `voila` extra) is what a teacher runs; here the
same command is started on 127.0.0.1 with temporary Jupyter folders and opened in Chromium at
1920 × 1080. The page must show the two widgets and nothing else (no code, no prose), reach no
host but this machine, log no "Unsatisfied version" warning, and both widgets must move.
"""

from __future__ import annotations

import importlib.util
import shutil

import pytest
from test_browser import (
    ARTIFACTS,
    CHROMIUM,
    ROOT,
    SLOW,
    Watched,
    badly_shown,
    chromium,
    free_port,
    head_slider_state,
    page_problems,
    press,
    server,
    timed_move,
    wait_for_heads,
    widget_images,
)

pytest.importorskip("voila", reason="Voilà is the optional extra `voila`: pip install -e '.[voila]'")

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not __import__("pathlib").Path(CHROMIUM).exists(),
                       reason=f"{CHROMIUM} is missing: install Debian's browser with `apt-get install -y chromium`"),
]


def classroom_app():
    spec = importlib.util.spec_from_file_location("classroom_app", ROOT / "tools" / "classroom_app.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_app_shows_only_the_two_widgets_offline_and_they_move(tmp_path):
    app = classroom_app()
    (tmp_path / "work").mkdir()
    notebook = shutil.copy(app.APP, tmp_path / "work" / app.APP.name)  # Voilà runs a copy
    port = free_port()
    cmd, env = app.command(notebook, ["--no-browser", f"--port={port}", "--Voila.ip=127.0.0.1",
                                      "--Voila.open_browser=False"])
    ready = f"http://127.0.0.1:{port}/voila/static/voila.js"  # static: asking it starts no kernel
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with server(cmd, tmp_path, ready, "voila", env={"JUPYTER_PATH": env["JUPYTER_PATH"]}), chromium() as browser:
        watched = Watched(browser)
        page = watched.page
        try:
            page.goto(f"http://127.0.0.1:{port}/", timeout=SLOW)  # Voilà runs the notebook, then shows it
            page.locator(".heads-slider .noUi-handle").first.wait_for()
            page.locator(".explorer-layer .noUi-handle").first.wait_for()
            page.wait_for_function("() => document.querySelector('.heads-maps')?.src"
                                   " && document.querySelector('.explorer-grid')?.src")
            shown = page.evaluate("""() => ({
                text: document.body.innerText,
                markdown: document.querySelectorAll('.jp-RenderedMarkdown').length,
                outputs: [...document.querySelectorAll('.jp-OutputArea-output')]
                    .filter(o => !o.querySelector('.jupyter-widgets'))  // the widgets' slider-naming script shows nothing
                    .filter(o => o.innerText.trim() || o.querySelector('img, canvas, svg, pre'))
                    .map(o => o.innerText.slice(0, 200)),
            })""")
            assert "import helpers" not in shown["text"] and "HeadCountExplorer" not in shown["text"], "code shows"
            assert shown["markdown"] == 0 and shown["outputs"] == [], f"more than the widgets shows: {shown}"
            assert not page_problems(page)["widgetErrors"]
            assert not badly_shown(widget_images(page)), badly_shown(widget_images(page))
            page.screenshot(path=ARTIFACTS / "voila_app.png", full_page=True)
            before = head_slider_state(page)
            ms = timed_move(page, press(".heads-slider .noUi-handle", "ArrowLeft"), ".heads-maps")
            wait_for_heads(page, 3, before["src"])
            print(f"voila heads slider: key to new picture {ms:.0f} ms")
            ms = timed_move(page, press(".explorer-layer .noUi-handle", "ArrowRight"), ".explorer-zoom")
            print(f"voila explorer layer: key to new picture {ms:.0f} ms")
            page.screenshot(path=ARTIFACTS / "voila_app_after.png", full_page=True)
        except Exception:
            page.screenshot(path=ARTIFACTS / "voila_failure.png", full_page=True)
            raise
        finally:
            print("console:", *watched.console, sep="\n  ")
    assert not watched.outside, f"the app reached for outside hosts: {watched.outside}"
    noisy = [m for m in watched.console if "Unsatisfied version" in m or "ERR_NAME_NOT_RESOLVED" in m]
    assert not noisy, f"console warnings a teacher would see: {noisy}"
