"""Key-to-picture time of every widget control in a real browser (target: median <= 300 ms).

    python bench/bench_browser.py [--moves 7] [--notebooks 04 05 06]

Starts JupyterLab on 127.0.0.1 (temporary folders), opens each notebook in Debian's Chromium
at 1920 × 1080, runs all cells, then moves every control back and forth `--moves` times and
prints the median and the largest time from the key press (or click, or choice) until the
widget's picture is replaced. The first move of each control is printed on its own: it may
build a figure that later moves reuse. Uses the browser test's helpers (tests/test_browser.py).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from test_browser import (  # noqa: E402
    CONTROLS,
    NOTEBOOKS,
    Watched,
    chromium,
    close_notebook,
    free_port,
    lab_command,
    notebook_copy,
    open_and_run_all,
    server,
    timed_move,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=7)
    parser.add_argument("--notebooks", nargs="*", default=["04", "05", "06"])
    args = parser.parse_args()
    names = [name for name in CONTROLS if name[:2] in args.notebooks]
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        for name in names:
            notebook_copy(tmp, NOTEBOOKS / f"{name}.ipynb")
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        with server(lab_command(port, tmp), tmp, f"{base}/api/status", "jupyterlab"), chromium() as browser:
            for name in names:
                page = Watched(browser).page
                open_and_run_all(page, base, f"{name}.ipynb")
                for control, forward, back, image in CONTROLS[name]:
                    times = [timed_move(page, back if i % 2 else forward, image) for i in range(args.moves + 1)]
                    first, rest = times[0], times[1:]
                    print(f"{name} {control:<16} first {first:6.0f} ms   then median {statistics.median(rest):6.0f} ms"
                          f"   max {max(rest):6.0f} ms   ({len(rest)} moves)", flush=True)
                close_notebook(page)


if __name__ == "__main__":
    main()
