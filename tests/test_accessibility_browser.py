"""What this project puts on the screen, checked by tools made for accessibility, in Debian's Chromium.

One JupyterLab server and one browser for the module (helpers from tests/test_browser.py). Each
notebook is opened and run once, and that one page is checked for both: first what this file checks,
then what a teacher looks at (test_browser.assert_looks_right: no error, pictures at their aspect, every
control redraws its picture), for the notebooks test_browser.LOOKED_AT lists, and last notebook 08's
live training (its Train button, on the tiny recipe):
- axe-core (bundled by the PyPI package axe-playwright-python) over the output area of every cell of
  notebooks 01–07 after Run All, and over the offline page: no critical and no serious violation,
  except the one listed in UPSTREAM with its reason; every violation is printed by impact;
- a keyboard-only walk (focus, Tab, arrow keys, Enter; no mouse event) through 04's slider, 05's
  explorer (its "Show as table" toggle included), 06's knock-out list and 07's slider, each step's
  live line asserted;
- Chromium's accessibility tree (Playwright's aria_snapshot) names every widget picture in words.
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import nbformat
import pytest

from test_browser import (ARTIFACTS as LAB_ARTIFACTS, LOOKED_AT, NOTEBOOKS, SCREEN, SLOW, Watched, assert_looks_right,
                          badly_shown, chromium, close_notebook, free_port, lab_command, notebook_copy,
                          open_and_run_all, page_problems, server, widget_images)

AXE_SPEC = importlib.util.find_spec("axe_playwright_python")
AXE = Path(AXE_SPEC.origin).parent / "axe.min.js" if AXE_SPEC else None
LESSONS = sorted(p.stem for p in NOTEBOOKS.glob("0[1-8]_*.ipynb"))
ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts" / "accessibility"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="/usr/bin/chromium is missing: "
                       "install Debian's browser with `apt-get install -y chromium`"),
    pytest.mark.skipif(AXE is None or not AXE.exists(), reason="axe-core is missing: "
                       "pip install -e '.[test]' brings axe-playwright-python, which bundles axe.min.js"),
]

# ipywidgets 8.1 builds its sliders with noUiSlider and passes no `handleAttributes`, so the focusable
# handle (role=slider) has no accessible name of its own (axe-core: aria-input-field-name, serious);
# helpers/widgets/controls.py names each handle after its slider's label. Nothing is tolerated: any serious
# or critical violation fails.
UPSTREAM: dict[str, str] = {}

RUN_AXE = """async (selector) => {
    const result = await axe.run({include: [...document.querySelectorAll(selector)]});
    return result.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
                                        nodes: v.nodes.map(n => n.html.slice(0, 160))}));
}"""


def axe_violations(page, selector: str) -> list[dict]:
    if not page.evaluate("() => typeof axe !== 'undefined'"):
        page.evaluate(AXE.read_text())
    return page.evaluate(RUN_AXE, selector)


def not_upstream(violations: list[dict]) -> list[dict]:
    """Serious or critical violations beyond UPSTREAM's rule on its nodes."""
    return [v for v in violations if v["impact"] in ("serious", "critical")
            and not (v["id"] in UPSTREAM and all(UPSTREAM[v["id"]] in n for n in v["nodes"]))]


def report(name: str, violations: list[dict]) -> None:
    counts = {}
    for v in violations:
        counts[v["impact"]] = counts.get(v["impact"], 0) + len(v["nodes"])
    print(f"axe {name}: {counts or 'no violations'}; " + "; ".join(f"{v['impact']} {v['id']} ×{len(v['nodes'])}"
                                                                  for v in violations))


def live(page, cls: str) -> str:
    return page.locator(f".{cls} [role=status]").first.inner_text()


def step(page, key: str, cls: str, before: str) -> str:
    """Press one key on the focused element and wait until the live line says something new."""
    page.keyboard.press(key)
    page.wait_for_function("([c, b]) => (document.querySelector(`.${c} [role=status]`)?.innerText || b) !== b",
                           arg=[cls, before])
    return live(page, cls)


def focused(page) -> str:
    """The focused element's tag and role, and the classes of the widgets around it."""
    return page.evaluate("() => { const e = document.activeElement; const names = [];"
                         " for (let p = e; p; p = p.parentElement) names.push(p.className || '');"
                         " return `${e.tagName} ${e.getAttribute('role') || ''} ${names.slice(0, 6).join(' ')}`; }")


def tiny_08(tmp: Path) -> None:
    """Notebook 08 with its live cell on the tiny recipe: clicking Train takes seconds, not minutes."""
    nb = nbformat.read(NOTEBOOKS / "08_watch_the_heads_learn.ipynb", as_version=4)
    for cell in nb.cells:
        if "live-training" in cell.metadata.get("tags", []):
            cell.source = cell.source.replace('"induction"', '"tiny"')
    nbformat.write(nb, tmp / "work" / "08_watch_the_heads_learn.ipynb")


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("a11y")
    for name in LESSONS:
        notebook_copy(tmp, NOTEBOOKS / f"{name}.ipynb")
    tiny_08(tmp)
    port = free_port()
    with server(lab_command(port, tmp), tmp, f"http://127.0.0.1:{port}/api/status", "jupyterlab"), \
            chromium() as browser:
        yield f"http://127.0.0.1:{port}", browser


def walk_04(page) -> list[str]:
    page.locator(".widget-text input").first.focus()  # the sentence box: the widget's first control
    page.keyboard.press("Tab")
    assert "heads-slider" in focused(page) and "slider" in focused(page), focused(page)
    first = step(page, "ArrowRight", "slider-live", live(page, "slider-live"))
    assert first.startswith("heads-6: 6 heads of 16") and "held-out loss" in first, first
    return [first, step(page, "ArrowLeft", "slider-live", first)]


def walk_05(page) -> list[str]:
    page.locator(".explorer-text input").first.focus()
    page.keyboard.press("Tab")
    assert "explorer-layer" in focused(page), focused(page)
    start = live(page, "explorer-live")
    at_end = page.evaluate("() => document.activeElement.getAttribute('aria-valuenow') === "
                           "document.activeElement.getAttribute('aria-valuemax')")
    moved = step(page, "ArrowLeft" if at_end else "ArrowRight", "explorer-live", start)
    for _ in range(3):  # the layer's number box (its readout, editable) is a tab stop on the way
        page.keyboard.press("Tab")
        if "explorer-head" in focused(page) and "slider" in focused(page):
            break
    assert "explorer-head" in focused(page) and "slider" in focused(page), focused(page)
    head = step(page, "ArrowRight", "explorer-live", moved)
    assert moved.startswith("Layer ") and head.split(":")[0] != moved.split(":")[0], (moved, head)
    toggle = page.locator(".explorer-table-toggle").first
    toggle.focus()
    page.keyboard.press("Enter")
    table = page.locator(".explorer-table table").first
    table.wait_for()
    tree = page.locator(".explorer-table").first.aria_snapshot()
    assert "table" in tree and "columnheader" in tree and "(largest)" in tree, tree[:500]
    toggle.focus()
    page.keyboard.press("Enter")  # and off again: the explorer as it was, for test_browser's look
    table.wait_for(state="detached")
    return [start, moved, head, tree[:300]]


def walk_06(page) -> list[str]:
    page.locator(".widget-text input").last.focus()  # the knock-out explorer's sentence box
    page.keyboard.press("Tab")
    assert "knockout-heads" in focused(page), focused(page)
    start = live(page, "knockout-live")
    after = step(page, "End", "knockout-live", start)  # the last head alone instead of four
    assert after.startswith("Next word after") and "without L" in after, after
    return [start, after]


def walk_07(page) -> list[str]:
    page.locator(".widget-text input").first.focus()
    page.keyboard.press("Tab")
    assert "kv-slider" in focused(page), focused(page)
    start = live(page, "kv-live")
    after = step(page, "ArrowRight", "kv-live", start)
    assert after.startswith("12 query heads sharing 4 key/value heads"), after
    return [start, after]


def walk_08(page) -> list[str]:
    page.locator(".step-slider .noUi-handle").first.focus()  # keyboard focus, as Tab would put it there
    assert "step-slider" in focused(page) and "slider" in focused(page), focused(page)
    name = page.evaluate("() => document.activeElement.getAttribute('aria-label')")
    assert name == "training step", name  # named after its label by helpers/widgets/controls.py
    start = live(page, "step-live")
    back = step(page, "ArrowLeft", "step-live", start)
    assert start.startswith("Step 1953 of 1953") and back.startswith("Step 1039 of 1953"), (start, back)
    return [start, back]


WALKS = {"04_head_count_slider": walk_04, "05_all_144_heads": walk_05, "06_what_each_head_learns": walk_06,
         "07_shared_keys_and_values": walk_07, "08_watch_the_heads_learn": walk_08}


def live_training_08(watched: Watched) -> None:
    """Notebook 08's live cell: Train draws its plot while it trains (tiny recipe) and ends saying so."""
    page = watched.page
    page.locator(".live-train").first.evaluate("e => e.scrollIntoView({block: 'center'})")
    page.locator(".live-train").first.click()
    page.wait_for_function("() => (document.querySelector('.live-status')?.innerText || '').startsWith('finished')",
                           timeout=SLOW)
    shown = page.evaluate("() => { const i = document.querySelector('.live-plot'); "
                          "return [i.naturalWidth, i.naturalHeight]; }")
    assert shown[0] > 0 and shown[1] > 0, shown  # the live plot was drawn
    assert not badly_shown(widget_images(page)), badly_shown(widget_images(page))
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=ARTIFACTS / "08_live_training.png")
    assert not page_problems(page)["widgetErrors"] and not watched.outside


AFTER_LOOK = {"08_watch_the_heads_learn": live_training_08}  # what only one notebook has, checked last


@pytest.mark.parametrize("name", LESSONS)
def test_outputs_pass_axe_work_by_keyboard_and_look_right(lab, name):
    base, browser = lab
    watched = Watched(browser, bypass_csp=True)  # axe is injected into the page
    page = watched.page
    try:
        open_and_run_all(page, base, f"{name}.ipynb")
        images = page.evaluate("() => [...document.querySelectorAll('.jp-OutputArea-output img')]"
                               ".map(i => i.alt || i.title || '')")
        assert images and all(len(words) > 20 for words in images), f"{name}: unnamed images {images}"
        violations = axe_violations(page, ".jp-OutputArea-output")
        report(name, violations)
        assert not not_upstream(violations), json.dumps(not_upstream(violations), indent=1)
        if name in WALKS:
            for line in WALKS[name](page):
                print(f"{name} live: {line[:240]}")
            tree = page.locator(".jp-OutputArea-output .jupyter-widgets.widget-vbox").first.aria_snapshot()
            pictures = [line for line in tree.splitlines() if re.match(r"\s*- '?img", line)]  # YAML may quote it
            assert pictures and all(len(line) > 40 for line in pictures), tree[:800]
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.locator("[role=status]").first.scroll_into_view_if_needed()
            page.screenshot(path=ARTIFACTS / f"{name}_keyboard.png")
        if name in LOOKED_AT:
            assert_looks_right(watched, name)
        if name in AFTER_LOOK:
            AFTER_LOOK[name](watched)
    except Exception:
        LAB_ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=LAB_ARTIFACTS / f"lab_{name}_failure.png")
        raise
    finally:
        close_notebook(page)  # two cores: the next notebook gets them


def test_the_offline_page_passes_axe_and_names_its_parts(lab, tmp_path):
    import helpers as H

    path = H.export_page(H.load_model("classroom"), ["I like to draw"], "a11y_page", tmp_path)
    _, browser = lab
    context = browser.new_context(viewport=SCREEN, bypass_csp=True)
    page = context.new_page()
    try:
        page.goto(path.as_uri())
        page.wait_for_load_state("load")
        violations = axe_violations(page, "body")
        report("offline page", violations)
        tree = page.locator("body").aria_snapshot()
        print("offline page tree:", tree[:1500])
        assert not [v for v in violations if v["impact"] in ("serious", "critical")], violations
    finally:
        context.close()


def test_the_voila_app_passes_axe(lab, tmp_path):
    """The classroom app (tools/classroom_app.py): the slider and the explorer, as Voilà shows them."""
    import shutil

    pytest.importorskip("voila", reason="Voilà is the optional extra `voila`: pip install -e '.[voila]'")
    from test_voila import classroom_app

    app = classroom_app()
    (tmp_path / "work").mkdir()
    notebook = shutil.copy(app.APP, tmp_path / "work" / app.APP.name)
    port = free_port()
    cmd, env = app.command(notebook, ["--no-browser", f"--port={port}", "--Voila.ip=127.0.0.1",
                                      "--Voila.open_browser=False"])
    _, browser = lab
    with server(cmd, tmp_path, f"http://127.0.0.1:{port}/voila/static/voila.js", "voila",
                env={"JUPYTER_PATH": env["JUPYTER_PATH"]}):
        context = browser.new_context(viewport=SCREEN, bypass_csp=True)
        page = context.new_page()
        page.set_default_timeout(600_000)
        try:
            page.goto(f"http://127.0.0.1:{port}/")
            page.locator(".slider-live [role=status]").first.wait_for()
            page.locator(".explorer-live [role=status]").first.wait_for()
            violations = axe_violations(page, "body")
            report("voila app", violations)
            assert not not_upstream(violations), json.dumps(not_upstream(violations), indent=1)
        finally:
            context.close()
