"""What every bench shares: the `--quick` flag, and the figures that bench/run_all.py gathers into one table.

A bench prints its own lines as before; `record(...)` also hands one figure (a value with its target)
to run_all.py, through the JSON file named by the BENCH_FIGURES environment variable. Without that
variable `record` only keeps the figure in memory, so a bench run by hand writes nothing.
Not a bench itself: `python bench/benchlib.py --quick` does nothing and exits 0.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
from pathlib import Path

from helpers.core.files import atomic_write

FIGURES_ENV = "BENCH_FIGURES"  # run_all.py points this at a fresh JSON file per bench
FIGURES: list[dict] = []  # what this process recorded, in order


def parser(doc: str) -> argparse.ArgumentParser:
    """An argument parser titled by the bench's first docstring line, with --quick already on it."""
    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    p.add_argument("--quick", action="store_true",
                   help="one repeat, small inputs, a few seconds: proves the bench still runs (tests/test_benches.py)")
    return p


def record(figure: str, value: float | None, unit: str, target: float | None = None, *, note: str = "") -> None:
    """Hand one measured figure to run_all.py; the target is an upper bound (lower is better).
    value=None says the figure could not be measured here, and `note` says why."""
    FIGURES.append({"figure": figure, "value": None if value is None else float(value), "unit": unit,
                    "target": None if target is None else float(target), "note": note})
    path = os.environ.get(FIGURES_ENV)
    if path:
        atomic_write(Path(path), lambda tmp: Path(tmp).write_text(json.dumps(FIGURES, indent=1)))


def no_browser(chromium: str) -> str:
    """Why a browser bench cannot run on this machine ('' when it can): Playwright or Chromium missing."""
    if importlib.util.find_spec("playwright") is None:
        return 'Playwright is not installed: pip install -e ".[test]"'
    return "" if Path(chromium).exists() else f"no Chromium at {chromium}"


def unavailable(figure: str, why: str) -> None:
    """Say in the table that a figure cannot be measured on this machine (no Chromium, no transformers)."""
    print(f"{figure}: not measured here ({why})")
    record(figure, None, "", note=why)


if __name__ == "__main__":
    parser(__doc__).parse_args()
