"""Time each notebook run top to bottom headless, as the tests run it (kernel start included).

    python bench/bench_notebooks.py                 # every notebooks/NN_*.ipynb
    python bench/bench_notebooks.py 01 02 03        # only these numbers
    python bench/bench_notebooks.py --quick         # the yardstick and a one-cell notebook: proves the route runs

Targets on a 2-core laptop CPU: <= 15 s each for notebooks 01–03 and 06, <= 20 s for 08, <= 60 s for all together.
The machine's load is printed first: on a shared machine the numbers grow with it. So each time is also
given in "quiet-machine seconds": wall × (0.29 s ÷ this machine's yardstick now), the yardstick being a
fixed one-thread job that took 0.29 s on the quiet machine where the targets were met (machine_seconds).
"""

from __future__ import annotations

import os
import platform
import resource
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from benchlib import parser, record

ROOT = Path(__file__).resolve().parent.parent
TARGET_S = {"01": 15.0, "02": 15.0, "03": 15.0, "06": 15.0, "08": 20.0}  # 08: once tests/test_notebook08.py's bound
TOTAL_TARGET_S = 60.0
QUIET_YARDSTICK_S = 0.29  # machine_seconds() on the quiet 2-core machine that ran all six in 28.3-28.7 s


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
    options = parser(__doc__)
    options.add_argument("numbers", nargs="*", help="notebook numbers to run, e.g. 01 02 (default: all)")
    args = options.parse_args()
    paths = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    if args.numbers:
        paths = [p for p in paths if p.name[:2] in args.numbers]
    yardstick = machine_seconds()
    scale = QUIET_YARDSTICK_S / yardstick  # this machine's seconds -> the quiet machine's
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, "
          f"yardstick {yardstick:.2f} s (see machine_seconds; quiet machine {QUIET_YARDSTICK_S} s)")
    print(f"{'notebook':<48} {'wall s':>8} {'CPU s':>7} {'quiet s':>8}  target (quiet-machine s)")
    if args.quick:
        with tempfile.TemporaryDirectory() as folder:
            seconds, cpu = run(one_cell_notebook(Path(folder)))
        print(f"{'a one-cell notebook (--quick)':<48} {seconds:8.1f} {cpu:7.1f} {seconds * scale:8.1f}")
        return
    total = cpu_total = 0.0
    for path in paths:
        seconds, cpu = run(path)
        total, cpu_total = total + seconds, cpu_total + cpu
        target = TARGET_S.get(path.name[:2])
        verdict = "" if target is None else f"<= {target:.0f} s {'ok' if seconds * scale <= target else 'OVER'}"
        print(f"{path.name:<48} {seconds:8.1f} {cpu:7.1f} {seconds * scale:8.1f}  {verdict}", flush=True)
        if target is not None:
            record(f"notebook {path.name[:2]}, quiet-machine seconds", seconds * scale, "s", target,
                   note=f"wall {seconds:.1f} s × {QUIET_YARDSTICK_S} / yardstick {yardstick:.2f} s")
    everything = len(paths) == len(list((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")))
    verdict = f"<= {TOTAL_TARGET_S:.0f} s {'ok' if total * scale <= TOTAL_TARGET_S else 'OVER'}" if everything else ""
    print(f"{'all ' + str(len(paths)) + ' together':<48} {total:8.1f} {cpu_total:7.1f} {total * scale:8.1f}  {verdict}")
    if everything:
        record(f"all {len(paths)} notebooks, quiet-machine seconds", total * scale, "s", TOTAL_TARGET_S,
               note=f"wall {total:.1f} s, yardstick {yardstick:.2f} s")
    print(f"load after: {os.getloadavg()[0]:.1f}")


def one_cell_notebook(folder: Path) -> Path:
    """A notebook that only imports the package and loads the classroom model (--quick)."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import helpers as H\nH.load_model('classroom')")])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = folder / "quick.ipynb"
    nbformat.write(nb, str(path))
    return path


if __name__ == "__main__":
    main()
