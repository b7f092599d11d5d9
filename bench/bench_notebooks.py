"""Time each notebook run top to bottom headless, as the tests run it (kernel start included).

    python bench/bench_notebooks.py                 # every notebooks/NN_*.ipynb
    python bench/bench_notebooks.py 01 02 03        # only these numbers

Targets on a 2-core laptop CPU: <= 15 s each for notebooks 01–03 and 06, <= 60 s for all six together.
The machine's load is printed first: on a shared machine the numbers grow with it.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
TARGET_S = {"01": 15.0, "02": 15.0, "03": 15.0, "06": 15.0}
TOTAL_TARGET_S = 60.0


def run(path: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the kernel). The kernel's CPU time hardly depends on what else
    the machine is doing, so on a shared machine it is the better guess at a quiet laptop's time."""
    nb = nbformat.read(path, as_version=4)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)  # the kernel has exited and been waited for
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def machine_seconds() -> float:
    """Seconds for a fixed one-thread job (torch import excluded): a yardstick, so that readings taken on
    different machines can be compared. 2026-12-01: 0.29 s on the quiet 2-core machine that measured all six in 28.3-28.7 s."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        a = torch.randn(256, 256, generator=torch.Generator().manual_seed(0))
        start = time.perf_counter()
        for _ in range(400):
            a = torch.tanh(a @ a.T / 16)
        sum(i * i for i in range(2_000_000))  # and some plain Python, as a notebook's glue code is
        return time.perf_counter() - start
    finally:
        torch.set_num_threads(threads)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("numbers", nargs="*", help="notebook numbers to run, e.g. 01 02 (default: all)")
    args = parser.parse_args()
    paths = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    if args.numbers:
        paths = [p for p in paths if p.name[:2] in args.numbers]
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, "
          f"yardstick {machine_seconds():.2f} s (see machine_seconds)")
    print(f"{'notebook':<48} {'wall s':>8} {'CPU s':>7}  target (wall)")
    total = cpu_total = 0.0
    for path in paths:
        seconds, cpu = run(path)
        total, cpu_total = total + seconds, cpu_total + cpu
        target = TARGET_S.get(path.name[:2])
        verdict = "" if target is None else f"<= {target:.0f} s {'ok' if seconds <= target else 'OVER'}"
        print(f"{path.name:<48} {seconds:8.1f} {cpu:7.1f}  {verdict}", flush=True)
    verdict = f"<= {TOTAL_TARGET_S:.0f} s {'ok' if total <= TOTAL_TARGET_S else 'OVER'}" if len(paths) == 6 else ""
    print(f"{'all ' + str(len(paths)) + ' together':<48} {total:8.1f} {cpu_total:7.1f}  {verdict}")
    print(f"load after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
