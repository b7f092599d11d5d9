"""Every notebook runs with its switch set to MODEL = "gpt2": with a (stand-in) GPT-2, and offline without one.

The stand-in is a 12 × 12 GPT-2 with GPT-2's real vocabulary and 1024 positions but a width of 24,
so it loads in a blink; HELPERS_GPT2_VERIFY=0 lets it past the checksum meant for the real file.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_gpt2_fakes import fake_gpt2_folder

from helpers.core import gpt2

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("tokenizers")

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("[0-9]*.ipynb"))
SWITCH = 'MODEL = "classroom"'


@pytest.fixture(scope="module")
def fake_dir(tmp_path_factory):
    return fake_gpt2_folder(tmp_path_factory.mktemp("fake-gpt2"))


def run_with_gpt2(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    switches = [c for c in nb.cells if c.cell_type == "code" and SWITCH in c.source]
    assert len(switches) == 1, f"{path.name} needs exactly one switch line {SWITCH!r} in a code cell"
    switches[0].source = switches[0].source.replace(SWITCH, 'MODEL = "gpt2"')
    client = nbclient.NotebookClient(nb, timeout=600, startup_timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(path.parent)}})
    client.execute()


@pytest.mark.notebook
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_with_gpt2(path, fake_dir, monkeypatch):
    monkeypatch.setenv(gpt2.DIR_ENV, str(fake_dir))
    monkeypatch.setenv(gpt2.VERIFY_ENV, "0")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # nothing may download during tests
    monkeypatch.setenv("MPLBACKEND", "Agg")
    run_with_gpt2(path)


@pytest.mark.notebook
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_with_gpt2_offline_and_no_file(path, tmp_path, monkeypatch):
    monkeypatch.setenv(gpt2.DIR_ENV, str(tmp_path / "no-gpt2-here"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-hf-cache"))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    run_with_gpt2(path)

