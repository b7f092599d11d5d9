"""Notebook 04 in a real browser: JupyterLab + ipywidgets in Debian's Chromium, driven by Playwright.

Start JupyterLab on 127.0.0.1 (temporary config, runtime, settings and workspace folders,
no token), open a temporary copy of the notebook, run all cells, move the head slider with
the keyboard and check that the page shows the new head count and a different picture.
Screenshots land in test-artifacts/ (git-ignored). Every wait is on page state.
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
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "notebooks" / "04_head_count_slider.ipynb"
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"]
SLOW = 600_000  # ms: a loaded 2-core machine can take minutes to start a kernel and run the notebook

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(),
                       reason=f"{CHROMIUM} is missing: install Debian's browser with `apt-get install -y chromium`"),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def jupyter_env(tmp: Path) -> dict:
    """Environment with every Jupyter folder inside tmp, and the news/update toast switched off."""
    settings = tmp / "settings"
    notification = settings / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    notification.parent.mkdir(parents=True, exist_ok=True)
    notification.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(tmp / "config"), JUPYTER_RUNTIME_DIR=str(tmp / "runtime"),
               JUPYTERLAB_SETTINGS_DIR=str(settings), JUPYTERLAB_WORKSPACES_DIR=str(tmp / "workspaces"),
               MPLBACKEND="module://matplotlib_inline.backend_inline", PYTHONUNBUFFERED="1")
    env.pop("JUPYTER_TOKEN", None)
    return env


def notebook_copy(tmp: Path) -> str:
    """A temporary copy of notebook 04 (the server writes to what it opens)."""
    work = tmp / "work"
    work.mkdir()
    shutil.copy(NOTEBOOK, work / NOTEBOOK.name)
    return NOTEBOOK.name


@contextmanager
def server(cmd: list[str], tmp: Path, url: str, name: str):
    """Start a server in its own process group, wait until `url` answers, always stop it."""
    log = open(tmp / f"{name}.log", "wb")
    proc = subprocess.Popen(cmd, cwd=tmp / "work", env=jupyter_env(tmp), stdout=log, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True)
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


@contextmanager
def chromium_page():
    """A fresh headless Chromium page; the browser is closed whatever happens."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(SLOW)
            yield page
        finally:
            browser.close()


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
    handle = page.locator(f"{root} .heads-slider .noUi-handle").first
    handle.scroll_into_view_if_needed()
    handle.focus()
    page.keyboard.press(key)


def wait_for_heads(page, n: int, old_src: str, root: str = "") -> None:
    """Wait until the widget says n heads and its image has been replaced."""
    page.wait_for_function(
        """([root, n, oldSrc]) => {
            const info = document.querySelector(`${root} .heads-info`);
            const img = document.querySelector(`${root} .heads-maps`);
            return info && info.innerText.includes(`${n} heads`) && img && img.src && img.src !== oldSrc;
        }""", arg=[root, n, old_src], timeout=SLOW)


def test_jupyterlab_runs_notebook_04_and_the_head_slider_redraws(tmp_path):
    name = notebook_copy(tmp_path)
    port = free_port()
    cmd = [sys.executable, "-m", "jupyter", "lab", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
           "--ServerApp.token=", "--ServerApp.password=", "--allow-root", "--ServerApp.open_browser=False",
           f"--ServerApp.root_dir={tmp_path / 'work'}", f"--LabApp.workspaces_dir={tmp_path / 'workspaces'}",
           "--LabApp.expose_app_in_browser=True"]
    ARTIFACTS.mkdir(exist_ok=True)
    with server(cmd, tmp_path, f"http://127.0.0.1:{port}/api/status", "jupyterlab"), chromium_page() as page:
        try:
            page.goto(f"http://127.0.0.1:{port}/lab/tree/{name}?reset")
            page.wait_for_function(  # "Idle" also shows with no kernel: wait for the kernel's name first
                "() => (document.querySelector('.jp-KernelName')?.innerText || '').includes('Python')")
            page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").first.wait_for()
            page.locator(".jp-Notebook .jp-CodeCell").first.click()  # make this notebook the current one
            page.evaluate("() => window.jupyterapp.commands.execute('runmenu:run-all')")
            page.locator(".heads-slider .noUi-handle").first.wait_for()
            page.wait_for_function("() => document.querySelector('.heads-maps')?.src")
            before = head_slider_state(page)
            page.screenshot(path=ARTIFACTS / "jupyterlab_04_before.png", full_page=True)
            assert before["readout"] == "4" and "4 heads" in before["info"]

            move_head_slider(page, "ArrowRight")
            wait_for_heads(page, 6, before["src"])
            after = head_slider_state(page)
            page.locator(".heads-maps").first.screenshot(path=ARTIFACTS / "jupyterlab_04_maps_after.png")
            page.screenshot(path=ARTIFACTS / "jupyterlab_04_after.png", full_page=True)
        except Exception:
            page.screenshot(path=ARTIFACTS / "jupyterlab_04_failure.png", full_page=True)
            raise
    assert after["readout"] == "6"
    assert "6 heads" in after["info"] and "96 / 6 = 16" in after["info"]
    assert after["png"] != before["png"], "the maps image looks the same after moving the slider"
