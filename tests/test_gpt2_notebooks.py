"""Every notebook runs with its switch set to MODEL = "gpt2": with a (stand-in) GPT-2, and offline without one.

The stand-in is a 12 × 12 GPT-2 with GPT-2's real vocabulary and 1024 positions but a width of 24,
so it loads in a blink; HELPERS_GPT2_VERIFY=0 lets it past the checksum meant for the real file.
The runs the selected tests need start together when the module starts, two at a time; each kernel gets
its settings as its own environment (not this process's), so two runs at once cannot mix them up.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import execute_once_started
from test_gpt2_fakes import fake_gpt2_folder

from helpers.core import gpt2

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("tokenizers")

ALL_NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("[0-9]*.ipynb"))
SWITCH = 'MODEL = "classroom"'
NO_SWITCH = "no GPT-2 switch"  # what a notebook about the classroom recipe's own training says instead
NOTEBOOKS = [p for p in ALL_NOTEBOOKS if NO_SWITCH not in p.read_text(encoding="utf-8")]
_POOL = ThreadPoolExecutor(2)  # notebook runs at once (each kernel is its own process)
_started: dict[tuple[str, Path], Future] = {}  # (test, notebook) -> its run
_LOCKS = {path: threading.Lock() for path in ALL_NOTEBOOKS}  # never two runs of one notebook at once: same figure files


@pytest.fixture(scope="module")
def fake_dir(tmp_path_factory):
    return fake_gpt2_folder(tmp_path_factory.mktemp("fake-gpt2"))


def with_fake(fake: Path, tmp: Path) -> dict:
    return {gpt2.DIR_ENV: str(fake), gpt2.VERIFY_ENV: "0", "HF_HUB_OFFLINE": "1"}  # nothing may download


def with_no_file(fake: Path, tmp: Path) -> dict:
    return {gpt2.DIR_ENV: str(tmp / "no-gpt2-here"), "HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(tmp / "empty-hf-cache")}


SETTINGS = {"test_notebook_runs_with_gpt2": with_fake, "test_notebook_runs_with_gpt2_offline_and_no_file": with_no_file}


@pytest.fixture(scope="module", autouse=True)
def _start_the_runs(request, fake_dir, tmp_path_factory):
    """Start the run of every selected test here, two at a time; cancel the unstarted ones at the end."""
    for item in request.session.items:
        if item.module is request.module and item.originalname in SETTINGS:
            path, name = item.callspec.params["path"], item.originalname
            env = {**os.environ, **SETTINGS[name](fake_dir, tmp_path_factory.mktemp("gpt2-run")), "MPLBACKEND": "Agg"}
            _started[name, path] = _POOL.submit(_alone, path, env)
    yield
    for future in _started.values():
        future.cancel()


def _alone(path: Path, env: dict) -> None:
    with _LOCKS[path]:
        run_with_gpt2(path, env)


def run_with_gpt2(path: Path, env: dict | None = None) -> None:
    nb = nbformat.read(path, as_version=4)
    switches = [c for c in nb.cells if c.cell_type == "code" and SWITCH in c.source]
    assert len(switches) == 1, f"{path.name} needs exactly one switch line {SWITCH!r} in a code cell"
    switches[0].source = switches[0].source.replace(SWITCH, 'MODEL = "gpt2"')
    execute_once_started(lambda: nbclient.NotebookClient(nb, timeout=600, startup_timeout=300, kernel_name="python3",
                                                         resources={"metadata": {"path": str(path.parent)}}),
                         env=env)  # the kernel's environment: this process's unless given


@pytest.mark.notebook
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_with_gpt2(path):
    _started["test_notebook_runs_with_gpt2", path].result()  # with_fake: the stand-in GPT-2, offline


@pytest.mark.notebook
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_with_gpt2_offline_and_no_file(path):
    _started["test_notebook_runs_with_gpt2_offline_and_no_file", path].result()  # with_no_file



def test_a_notebook_without_the_switch_says_why_in_its_introduction():
    """Only 08 (training snapshots, which GPT-2 small does not ship) goes without the switch, and says so."""
    without = [p for p in ALL_NOTEBOOKS if p not in NOTEBOOKS]
    assert [p.name[:2] for p in without] == ["08"]
    intro = nbformat.read(without[0], as_version=4).cells[1].source
    assert NO_SWITCH in intro and "GPT-2" in intro and SWITCH not in without[0].read_text(encoding="utf-8")
