"""Notebooks 01 and 04–08 in a real browser: JupyterLab + ipywidgets in Debian's Chromium (Playwright).

The launch helpers here (one JupyterLab server on 127.0.0.1, no token, every Jupyter folder temporary;
one browser at 1920 × 1080) serve every browser test. `assert_looks_right(watched, name)` LOOKS at a
notebook after Run All the way a teacher would:

- no "<Figure size …>" text (a figure that printed instead of showing) and no error output;
- no widget in an error state ("⚠");
- every widget image shown at its own aspect ratio (± 2 %) and never enlarged past 1.25 × its pixels;
- the first move of every control replaces its picture (the key-to-image time is printed;
  bench/bench_browser.py prints medians; speed is never asserted here);
- no request to any host but this machine.

tests/test_accessibility_browser.py calls it on the same page, after axe and the keyboard walk, so each
notebook is opened and run once for both. Screenshots (one per notebook, plus one per widget picture)
are written to test-artifacts/browser/ (git-ignored; BROWSER_ARTIFACTS overrides), for a person to
look at. Every wait is on page state.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
NOTEBOOK = NOTEBOOKS / "04_head_count_slider.ipynb"
ARTIFACTS = Path(os.environ.get("BROWSER_ARTIFACTS", ROOT / "test-artifacts" / "browser"))
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
                  # the browser's own background look-ups (DNS) never leave the machine: only this host resolves
                  "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost"]
SLOW = 600_000  # ms: a loaded 2-core machine can take minutes to start a kernel and run a notebook
SCREEN = {"width": 1920, "height": 1080}  # a projector

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(),
                       reason=f"{CHROMIUM} is missing: install Debian's browser with `apt-get install -y chromium`"),
]


# --- servers and the browser -------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def jupyter_env(tmp: Path) -> dict:
    """Environment with every Jupyter folder inside tmp, the news/update toast switched off and
    every notebook cell attached to the page (no windowing: off-screen outputs can be measured)."""
    settings = tmp / "settings" / "@jupyterlab"
    for name, value in (("apputils-extension/notification", {"fetchNews": "false", "checkForUpdates": False}),
                        ("notebook-extension/tracker", {"windowingMode": "none"})):
        path = settings / f"{name}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value))
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(tmp / "config"), JUPYTER_RUNTIME_DIR=str(tmp / "runtime"),
               JUPYTERLAB_SETTINGS_DIR=str(tmp / "settings"), JUPYTERLAB_WORKSPACES_DIR=str(tmp / "workspaces"),
               MPLBACKEND="module://matplotlib_inline.backend_inline", PYTHONUNBUFFERED="1")
    env.pop("JUPYTER_TOKEN", None)
    return env


def notebook_copy(tmp: Path, notebook: Path = NOTEBOOK) -> str:
    """A temporary copy of a notebook (the server writes to what it opens); returns its name."""
    work = tmp / "work"
    work.mkdir(exist_ok=True)
    shutil.copy(notebook, work / notebook.name)
    return notebook.name


@contextmanager
def server(cmd: list[str], tmp: Path, url: str, name: str, env: dict | None = None):
    """Start a server in its own process group, wait until `url` answers, always stop it.
    `env` adds variables to the temporary Jupyter environment."""
    log = open(tmp / f"{name}.log", "wb")
    proc = subprocess.Popen(cmd, cwd=tmp / "work", env=dict(jupyter_env(tmp), **(env or {})), stdout=log,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while True:
            if proc.poll() is not None:
                pytest.fail(f"{name} exited with {proc.returncode}:\n{(tmp / f'{name}.log').read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(url, timeout=5):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"{name} did not answer {url} within 300 s:\n{(tmp / f'{name}.log').read_text()[-3000:]}")
                time.sleep(0.5)  # polling a server that is starting, not waiting on the page
        yield proc
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)  # the server and the kernels it started
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=30)
        log.close()


def lab_command(port: int, tmp: Path) -> list[str]:
    return [sys.executable, "-m", "jupyter", "lab", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
            "--ServerApp.token=", "--ServerApp.password=", "--allow-root", "--ServerApp.open_browser=False",
            f"--ServerApp.root_dir={tmp / 'work'}", f"--LabApp.workspaces_dir={tmp / 'workspaces'}",
            "--LabApp.expose_app_in_browser=True"]


@contextmanager
def chromium():
    """A headless Chromium; closed whatever happens."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


class Watched:
    """A page plus what it asked of the network and said in its console."""

    def __init__(self, browser, bypass_csp: bool = False):
        self.page = browser.new_page(viewport=SCREEN, device_scale_factor=1, bypass_csp=bypass_csp)
        self.page.set_default_timeout(SLOW)
        self.outside: list[str] = []  # requests to any host but this machine
        self.console: list[str] = []  # console messages and failed requests
        self.page.on("request", self._request)
        self.page.on("console", lambda m: self.console.append(f"{m.type}: {m.text}"))
        self.page.on("requestfailed", lambda r: self.console.append(f"request failed: {r.url} {r.failure}"))

    def _request(self, request) -> None:
        host = urllib.parse.urlsplit(request.url).hostname
        if request.url.startswith(("http:", "https:", "ws:", "wss:")) and host not in ("127.0.0.1", "localhost"):
            self.outside.append(request.url)


@contextmanager
def chromium_page():
    """A fresh headless Chromium page at 1920 × 1080; the browser is closed whatever happens."""
    with chromium() as browser:
        yield Watched(browser).page


# --- what the page shows -------------------------------------------------------------------------
PAGE_PROBLEMS = """() => {
    const outputs = [...document.querySelectorAll('.jp-OutputArea-output')];
    const text = outputs.map(o => o.innerText).join('\\n');
    return {
        figureText: text.split('\\n').filter(line => line.includes('<Figure size')),
        stderr: [...document.querySelectorAll('[data-mime-type="application/vnd.jupyter.stderr"]')]
            .map(e => e.innerText.slice(0, 400)),
        widgetErrors: [...document.querySelectorAll('.jupyter-widgets')].map(w => w.innerText)
            .filter(t => t.includes('⚠') || t.includes('Error displaying widget')).map(t => t.slice(0, 300)),
    };
}"""

WIDGET_IMAGES = """() => [...document.querySelectorAll('img.widget-image, .jupyter-widgets img')].map(img => {
    const r = img.getBoundingClientRect();
    return {cls: img.className, natural: [img.naturalWidth, img.naturalHeight], shown: [r.width, r.height],
            complete: img.complete};
})"""


def page_problems(page) -> dict:
    return page.evaluate(PAGE_PROBLEMS)


def widget_images(page) -> list[dict]:
    page.wait_for_function("() => [...document.querySelectorAll('img.widget-image')]"
                           ".every(img => img.complete && img.naturalWidth > 0)")
    return page.evaluate(WIDGET_IMAGES)


def badly_shown(images: list[dict]) -> list[str]:
    """Widget images whose aspect ratio is off by more than 2 % or that are enlarged beyond 1.25 ×."""
    bad = []
    for img in images:
        (nw, nh), (w, h) = img["natural"], img["shown"]
        if not (nw and nh and w and h):
            continue  # not laid out (a hidden tab): nothing on screen to judge
        aspect = (w / h) / (nw / nh)
        if abs(aspect - 1) > 0.02 or w > 1.25 * nw or h > 1.25 * nh:
            bad.append(f"{img['cls']}: {nw}×{nh} px shown at {w:.0f}×{h:.0f}")
    return bad


def open_and_run_all(page, base: str, name: str) -> None:
    """Open a notebook, run every cell, wait until every code cell has its execution number."""
    page.goto(f"{base}/lab/tree/{name}?reset")
    page.wait_for_function(  # "Idle" also shows with no kernel: wait for the kernel's name first
        "() => (document.querySelector('.jp-KernelName')?.innerText || '').includes('Python')")
    page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").first.wait_for()
    page.locator(".jp-Notebook .jp-CodeCell").first.click()  # make this notebook the current one
    page.evaluate("() => window.jupyterapp.commands.execute('runmenu:run-all')")
    # Done when no cell is queued or running ("[*]") and some ran; a cell that fails stops the run,
    # and the cells after it keep an empty prompt.
    page.wait_for_function("""() => {
        const prompts = [...document.querySelectorAll('.jp-Notebook .jp-CodeCell .jp-InputArea-prompt')]
            .map(p => p.innerText.trim());
        return prompts.some(p => /^\\[\\d+\\]:$/.test(p)) && !prompts.some(p => p.includes('*'));
    }""", timeout=SLOW)
    page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").first.wait_for()
    skipped = page.evaluate("""() => [...document.querySelectorAll('.jp-Notebook .jp-CodeCell .jp-InputArea-prompt')]
        .filter(p => !/^\\[\\d+\\]:$/.test(p.innerText.trim())).length""")
    assert not skipped, f"{name}: {skipped} cells did not run; errors: {page_problems(page)['stderr']}"


def close_notebook(page) -> None:
    """End the notebook's kernel (a closed page leaves it running) and close the page."""
    try:
        page.evaluate("() => window.jupyterapp.serviceManager.sessions.shutdownAll()")
    finally:
        page.close()


# --- moving a control and timing its picture ------------------------------------------------------
START_CLOCK = """() => {
    window.__moveStart = null;
    for (const type of ['keydown', 'pointerdown', 'change']) {
        document.addEventListener(type, () => { if (window.__moveStart === null) window.__moveStart = performance.now(); },
                                  {capture: true, once: true});
    }
}"""

WATCH_IMAGE = """(selector) => {
    const img = document.querySelector(selector);
    window.__imageChanged = null;
    window.__oldSrc = img.src;
    new MutationObserver((_, observer) => {
        if (img.src !== window.__oldSrc) { window.__imageChanged = performance.now(); observer.disconnect(); }
    }).observe(img, {attributes: true, attributeFilter: ['src']});
}"""


SETTLED = """() => new Promise(resolve => {
    const done = () => { observer.disconnect(); resolve(); };
    let timer = setTimeout(done, 300);
    const observer = new MutationObserver(() => { clearTimeout(timer); timer = setTimeout(done, 300); });
    observer.observe(document.body, {subtree: true, attributes: true, attributeFilter: ['src']});
})"""


def timed_move(page, move, image: str) -> float:
    """Do `move(page)` (a key press, click or choice) and return the ms until `image` shows a new picture.
    Waits first until no picture has changed for 300 ms: a picture still arriving from the last move
    (a second grid further down) would otherwise be taken for this move's."""
    page.evaluate(SETTLED)
    page.locator(image).first.scroll_into_view_if_needed()
    page.evaluate(WATCH_IMAGE, image)
    page.evaluate(START_CLOCK)
    move(page)
    page.wait_for_function("() => window.__imageChanged !== null && window.__moveStart !== null", timeout=SLOW)
    return page.evaluate("() => window.__imageChanged - window.__moveStart")


def press(handle: str, key: str):
    def move(page):
        target = page.locator(handle).first
        target.scroll_into_view_if_needed()
        target.focus()
        page.keyboard.press(key)
    return move


def enter(box: str, text: str):
    """Type a whole sentence into a text box and press Enter (the box sends its value on Enter)."""
    def move(page):
        field = page.locator(box).first
        field.fill(text)
        field.press("Enter")
    return move


def choose(select: str, label: str):
    return lambda page: page.locator(select).first.select_option(label=label)


def click(button: str):
    return lambda page: page.locator(button).first.click()


# Every control of every widget: (name, the move, its opposite, the picture it redraws).
CONTROLS = {
    "04_head_count_slider": [
        ("heads slider", press(".heads-slider .noUi-handle", "ArrowRight"),
         press(".heads-slider .noUi-handle", "ArrowLeft"), ".heads-maps"),
        ("merge slider", press(".merge-slider .noUi-handle", "ArrowRight"),
         press(".merge-slider .noUi-handle", "ArrowLeft"), ".merge-maps"),
        ("sentence, top grid", enter(".sentence-box input", "the cat near the dogs is tired ."),
         enter(".sentence-box input", "list : red fox old mat . again : red fox old mat ."), ".heads-maps"),
        ("sentence, both", enter(".sentence-box input", "the cat is tired ."),  # another: the test types each once
         enter(".sentence-box input", "list : red fox old mat . again : red fox old mat ."),
         ".merge-maps"),  # the later of its two pictures (the merged grid, below the fold at 1920 × 1080)
    ],
    "05_all_144_heads": [
        ("explorer layer", press(".explorer-layer .noUi-handle", "ArrowRight"),
         press(".explorer-layer .noUi-handle", "ArrowLeft"), ".explorer-zoom"),
        ("explorer head", press(".explorer-head .noUi-handle", "ArrowRight"),
         press(".explorer-head .noUi-handle", "ArrowLeft"), ".explorer-zoom"),
        ("explorer query", choose(".explorer-query select", "1: list"),
         choose(".explorer-query select", "all words"), ".explorer-links"),
    ],
    "06_what_each_head_learns": [
        ("knock-out mode", click(".knockout-mode button:has-text('mean')"),
         click(".knockout-mode button:has-text('zero')"), ".knockout-bars"),
        ("knock-out heads", choose(".knockout-heads select", "L0 H0"),
         choose(".knockout-heads select", "L0 H1"), ".knockout-bars"),
    ],
    "07_shared_keys_and_values": [
        ("key/value-head slider", press(".kv-slider .noUi-handle", "ArrowRight"),
         press(".kv-slider .noUi-handle", "ArrowLeft"), ".kv-maps"),
    ],
    "08_watch_the_heads_learn": [
        ("training-step slider", press(".step-slider .noUi-handle", "ArrowLeft"),
         press(".step-slider .noUi-handle", "ArrowRight"), ".step-maps"),
    ],
}


def screenshots(page, name: str) -> list[Path]:
    """The screen at the first widget (or the last output), then the screen at each widget picture."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    widgets = page.locator(".jp-OutputArea-output .jupyter-widgets.widget-vbox")
    figures = page.locator(".jp-OutputArea-output .jp-RenderedImage")
    anchor = widgets.first if widgets.count() else figures.last if figures.count() else \
        page.locator(".jp-OutputArea-output").last
    anchor.evaluate("e => e.scrollIntoView({block: 'start'})")
    paths = [ARTIFACTS / f"lab_{name}.png"]
    page.screenshot(path=paths[-1])
    images = page.locator("img.widget-image")
    for i in range(images.count()):
        images.nth(i).evaluate("e => e.scrollIntoView({block: 'center'})")  # the notebook scrolls, not the page
        paths.append(ARTIFACTS / f"lab_{name}_picture{i}.png")
        page.screenshot(path=paths[-1])
    return paths


# --- what a teacher would look at --------------------------------------------------------------------
LOOKED_AT = {"01_single_head_attention": 0, "04_head_count_slider": 3, "05_all_144_heads": 3,
             "06_what_each_head_learns": 1, "07_shared_keys_and_values": 2,
             "08_watch_the_heads_learn": 2}  # notebook -> widget pictures at least


def assert_looks_right(watched: Watched, name: str) -> None:
    """After Run All (and whatever a test did since): no problem on the page, every picture at its own
    aspect, the first move of every control redraws its picture, screenshots written."""
    page = watched.page
    problems = page_problems(page)
    assert not problems["figureText"], f"figures printed as text: {problems['figureText']}"
    assert not problems["stderr"], f"error output: {problems['stderr']}"
    assert not problems["widgetErrors"], f"a widget opens in an error state: {problems['widgetErrors']}"
    images = widget_images(page)
    assert not badly_shown(images), f"stretched or enlarged widget images: {badly_shown(images)}"
    assert len(images) >= LOOKED_AT[name]
    if name == "05_all_144_heads":
        assert_explorer_fits_the_screen(page)
        assert_export_keeps_the_button(page)
    for control, move, _, image in CONTROLS.get(name, []):
        ms = timed_move(page, move, image)
        print(f"{name} {control}: key to new picture {ms:.0f} ms")
        assert not badly_shown(widget_images(page))
    assert not page_problems(page)["widgetErrors"], "a move left a widget in an error state"
    if name == "04_head_count_slider":  # the slider moved from 4 to 6 heads, and the text says so
        state = head_slider_state(page)
        assert state["readout"] == "6" and "6 heads" in state["info"] and "96 / 6 = 16" in state["info"]
    for path in screenshots(page, name):
        print("screenshot:", path)
    assert not watched.outside, f"requests to outside hosts: {watched.outside}"


def assert_export_keeps_the_button(page) -> None:
    """Clicking "Export for slides" writes the files and says where, and so does "Export as web page";
    the note never squeezes the button."""
    button = page.locator(".explorer-export").first
    button.scroll_into_view_if_needed()
    width = button.bounding_box()["width"]
    button.click()
    page.wait_for_function("() => /Wrote \\d+ files in/.test(document.body.innerText)", timeout=SLOW)
    assert button.inner_text().strip() == "Export for slides" and button.bounding_box()["width"] >= width - 1
    page.locator(".explorer-page").first.click()  # its sibling writes the offline web page
    page.wait_for_function("() => /no internet needed/.test(document.body.innerText)", timeout=SLOW)
    assert button.bounding_box()["width"] >= width - 1


def assert_explorer_fits_the_screen(page) -> None:
    """The explorer's controls, grid and zoomed head fit on one 1080p screen, side by side, uncut."""
    page.locator(".explorer-text").first.evaluate("e => e.scrollIntoView({block: 'start'})")
    box = page.evaluate("""() => {
        const rect = s => document.querySelector(s).getBoundingClientRect();
        const panel = document.querySelector('.jp-NotebookPanel-notebook').getBoundingClientRect();
        const parts = ['.explorer-text', '.explorer-layer', '.explorer-grid', '.explorer-zoom'].map(rect);
        return {top: Math.min(...parts.map(r => r.top)), bottom: Math.max(...parts.map(r => r.bottom)),
                right: Math.max(...parts.map(r => r.right)), panel: [panel.top, panel.bottom, panel.right]};
    }""")
    top, bottom, right = box["panel"]
    assert box["bottom"] - box["top"] <= bottom - top, f"the explorer is taller than the screen: {box}"
    assert box["right"] <= right, f"the explorer is wider than the notebook: {box}"


# --- kept for test_voila.py: notebook 04's head slider ---------------------------------------------
def head_slider_state(page, root: str = "") -> dict:
    """What the page shows: slider readout, the info text, and the maps image."""
    page.locator(f"{root} .heads-maps").first.scroll_into_view_if_needed()  # off-screen cells may not render
    page.wait_for_function(
        "root => (document.querySelector(`${root} .heads-slider .widget-readout`)?.innerText || '').trim()", arg=root)
    readout = page.locator(f"{root} .heads-slider .widget-readout").first.inner_text().strip()
    info = page.locator(f"{root} .heads-info").first.inner_text()
    image = page.locator(f"{root} .heads-maps").first
    return {"readout": readout, "info": info, "src": image.get_attribute("src"), "png": image.screenshot()}


def move_head_slider(page, key: str = "ArrowRight", root: str = "") -> None:
    press(f"{root} .heads-slider .noUi-handle", key)(page)


def wait_for_heads(page, n: int, old_src: str, root: str = "") -> None:
    """Wait until the widget says n heads and its image has been replaced."""
    page.wait_for_function(
        """([root, n, oldSrc]) => {
            const info = document.querySelector(`${root} .heads-info`);
            const img = document.querySelector(`${root} .heads-maps`);
            return info && info.innerText.includes(`${n} heads`) && img && img.src && img.src !== oldSrc;
        }""", arg=[root, n, old_src], timeout=SLOW)
