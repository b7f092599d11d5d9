"""Run every bench and print ONE table of the project's speed figures, each with its target and ✓/✗.

    .venv/bin/python bench/run_all.py                 # every bench/*.py, one after another (13 min on a quiet 2-core machine)
    .venv/bin/python bench/run_all.py --write         # ... and save the table as bench/last_run.md
    .venv/bin/python bench/run_all.py --quick --jobs 2  # every bench in its quick mode: proves they run (the tests)

Each bench runs in its own process (as `python bench/NAME.py`), so one bench's imports, threads and
caches cannot colour another's figures; it hands its figures over through benchlib.record. In --quick
mode, which measures nothing, each bench is a process forked from one that has already imported torch,
matplotlib and helpers (about 3 s of every fresh start), still one fresh process per bench. A bench that
cannot run here (no Chromium, no transformers) says so in its row; a bench that fails is listed with
its last error line, and the exit status is then 1. A figure that compares two things (our GPT-2 and
transformers') is a ratio measured side by side in one run. Kernel times are
CPU times, notebook times are scaled to the quiet machine by bench_notebooks.py's yardstick. Run it on a
quiet machine: the load average is printed before and after.
"""

from __future__ import annotations

import argparse
import atexit
import json
import multiprocessing
import os
import runpy
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from benchlib import FIGURES_ENV
from helpers.core.files import atomic_write

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
NOT_BENCHES = {"run_all.py", "benchlib.py"}  # this runner and the library the benches share
LAST_RUN = HERE / "last_run.md"
MEASURED_ONCE = "## Measured once"  # last_run.md's hand-kept section from this heading on: --write keeps it
PRELOAD = ["torch", "matplotlib.figure", "matplotlib.backends.backend_agg", "ipywidgets", "nbformat",
           "helpers.widgets.explorer", "helpers.widgets.slider", "helpers.analysis.knockout", "benchlib"]


def benches() -> list[Path]:
    """Every script in bench/ but this runner and benchlib.py, by name."""
    return sorted(p for p in HERE.glob("*.py") if p.name not in NOT_BENCHES)


@dataclass
class Outcome:
    """One bench's run: its exit status, seconds, last lines and the figures it recorded."""

    name: str
    status: int
    seconds: float
    tail: str
    figures: list[dict] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return self.status != 0


def run_bench(path: Path, quick: bool, timeout: float) -> Outcome:
    """`python bench/NAME.py [--quick]` in a fresh process, its figures read back from a temporary JSON file."""
    with tempfile.TemporaryDirectory() as folder:
        figures = Path(folder) / "figures.json"
        env = {**os.environ, FIGURES_ENV: str(figures), "MPLBACKEND": "Agg", "PYTHONUNBUFFERED": "1"}
        start = time.perf_counter()
        try:
            done = subprocess.run([sys.executable, str(path)] + ["--quick"] * quick, cwd=ROOT, env=env,
                                  capture_output=True, text=True, timeout=timeout)
            status, out = done.returncode, done.stdout + done.stderr
        except subprocess.TimeoutExpired as err:
            status, out = 124, f"{err.stdout or ''}{err.stderr or ''}\nstopped after {timeout:.0f} s"
        seconds = time.perf_counter() - start
        recorded = json.loads(figures.read_text()) if figures.exists() else []
    return Outcome(path.stem, status, seconds, "\n".join(out.strip().splitlines()[-15:]), recorded)


def run_quick(paths: list[Path], jobs: int, timeout: float) -> list[Outcome]:
    """Every bench in `paths` with --quick, `jobs` at a time, each in its own process forked from a
    server that imported PRELOAD once (multiprocessing's forkserver): what a quick run of every bench
    costs is then mostly the benches, not 15 starts of torch and matplotlib."""
    os.environ.setdefault("MPLBACKEND", "Agg")  # before the server imports matplotlib
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(PRELOAD)
    with context.Pool(max(1, jobs)) as pool:
        return pool.starmap(_quick_outcome, [(path, timeout) for path in paths], chunksize=1)


def _quick_outcome(path: Path, timeout: float) -> Outcome:
    """In a pool worker: fork a child that runs `python NAME.py --quick` as __main__, and wait for it.
    The worker never runs a bench itself, so each bench starts from the same preloaded state."""
    folder = Path(tempfile.mkdtemp())  # no finalizer the child could inherit and run at its exit
    try:
        figures, log = folder / "figures.json", folder / "output.txt"
        start = time.perf_counter()
        child = os.fork()
        if child == 0:  # the bench's own process
            os._exit(_run_as_main(path, figures, log))
        deadline, status = start + timeout, None
        while status is None:
            done, code = os.waitpid(child, os.WNOHANG)
            if done:
                status = os.waitstatus_to_exitcode(code)
            elif time.perf_counter() > deadline:
                os.kill(child, signal.SIGKILL)
                os.waitpid(child, 0)
                status = 124
            else:
                time.sleep(0.05)
        out = log.read_text(errors="replace") if log.exists() else ""
        out += f"\nstopped after {timeout:.0f} s" if status == 124 else ""
        recorded = json.loads(figures.read_text()) if figures.exists() else []
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return Outcome(path.stem, status, time.perf_counter() - start, "\n".join(out.strip().splitlines()[-15:]),
                   recorded)


def _run_as_main(path: Path, figures: Path, log: Path) -> int:
    """Run a bench script as `python path --quick` would, its output into `log`; its exit status."""
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(fd, 1)
    os.dup2(fd, 2)  # the bench's own subprocesses write here too
    os.environ.update({FIGURES_ENV: str(figures), "MPLBACKEND": "Agg", "PYTHONUNBUFFERED": "1"})
    os.chdir(ROOT)
    sys.argv, sys.path[0] = [str(path), "--quick"], str(path.parent)
    # A pool's worker is daemonic and this fork inherits the flag, but a bench may start processes of its own
    # (bench_grade grades a class on workers), as it would when run as `python NAME.py --quick`.
    multiprocessing.current_process().daemon = False
    status = 0
    try:
        runpy.run_path(str(path), run_name="__main__")
    except SystemExit as stop:  # sys.exit(n), sys.exit("message") or argparse's exit
        if isinstance(stop.code, int) or stop.code is None:
            status = stop.code or 0
        else:
            print(stop.code, file=sys.stderr)
            status = 1
    except BaseException:  # noqa: BLE001 - the traceback is the bench's failure, as python prints it
        traceback.print_exc()
        status = 1
    atexit._run_exitfuncs()  # what the interpreter does at exit (a bench's semaphores, temporary folders)
    sys.stdout.flush()
    sys.stderr.flush()
    return status


def verdict(figure: dict, quick: bool) -> str:
    if quick:
        return "(quick)"
    if figure["value"] is None or figure["target"] is None:
        return ""
    return "✓" if figure["value"] <= figure["target"] else "✗"


def number(value: float | None, unit: str) -> str:
    if value is None:
        return "not measured"
    digits = 3 if unit == "×" else 1 if abs(value) < 100 else 0
    return f"{value:.{digits}f}{'×' if unit == '×' else ' ' + unit}"


def rows(outcome: Outcome, quick: bool) -> list[str]:
    """The table rows of one bench: one per figure, or one saying why there is none."""
    if outcome.failed:
        last = outcome.tail.splitlines()[-1] if outcome.tail else ""
        return [f"| {outcome.name} | FAILED (exit {outcome.status}) | {last[:120]} | | ✗ |"]
    if not outcome.figures:
        return [f"| {outcome.name} | ran in {outcome.seconds:.0f} s; prints its figures, records none | | | |"]
    found = []
    for f in outcome.figures:
        target = "" if f["target"] is None else f"≤ {number(f['target'], f['unit'])}"
        measured = number(f["value"], f["unit"]) + (f" ({f['note']})" if f["note"] else "")
        found.append(f"| {outcome.name} | {f['figure']} | {measured} | {target} | {verdict(f, quick)} |")
    return found


def table(outcomes: list[Outcome], quick: bool, load: tuple[float, float]) -> str:
    """The one table, in Markdown, with a header that says when, where and how quiet the machine was."""
    from helpers.analysis.seeds import cpu_kind  # here: it imports torch, which the runner itself never needs

    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    head = [f"# Speed figures ({'QUICK MODE: one repeat, small inputs; not measurements' if quick else 'full run'})",
            "",
            f"{when}; {cpu_kind().split(':')[0]}, {os.cpu_count()} cores; load average {load[0]:.1f} before, {load[1]:.1f} after; "
            f"`python bench/run_all.py{' --quick' if quick else ''}`. Lower is better; ✓ meets the target.",
            "", "| bench | figure | measured | target | |", "|---|---|---|---|---|"]
    body = [row for outcome in outcomes for row in rows(outcome, quick)]
    times = ", ".join(f"{o.name} {o.seconds:.0f} s" for o in outcomes)
    return "\n".join(head + body + ["", f"Seconds per bench: {times}.", ""])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="every bench in its quick mode (a few seconds each)")
    parser.add_argument("--write", action="store_true", help=f"also save the table as {LAST_RUN.relative_to(ROOT)}")
    parser.add_argument("--jobs", type=int, default=1, help="benches at once (1 for figures worth keeping)")
    parser.add_argument("--only", nargs="*", help="bench names to run, e.g. bench_views bench_gpt2")
    args = parser.parse_args()
    if args.write and args.quick:
        parser.error("--write keeps measurements, and --quick measures nothing: drop one of them")
    chosen = [p for p in benches() if not args.only or p.stem in args.only]
    if args.only and len(chosen) != len(set(args.only)):
        parser.error(f"--only names a bench that does not exist; choose from {', '.join(p.stem for p in benches())}")
    before = os.getloadavg()[0]
    if args.quick:
        outcomes = run_quick(chosen, args.jobs, timeout=600)
    else:
        with ThreadPoolExecutor(max(1, args.jobs)) as pool:
            outcomes = list(pool.map(lambda p: run_bench(p, False, 3600), chosen))
    text = table(outcomes, args.quick, (before, os.getloadavg()[0]))
    print(text)
    for outcome in outcomes:
        if outcome.failed:
            print(f"\n--- {outcome.name} failed (exit {outcome.status}); its last lines:\n{outcome.tail}", file=sys.stderr)
    if args.write:
        kept = LAST_RUN.read_text(encoding="utf-8").partition(MEASURED_ONCE) if LAST_RUN.exists() else ("", "", "")
        text += "\n" + kept[1] + kept[2] if kept[1] else ""
        atomic_write(LAST_RUN, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))
        print(f"wrote {LAST_RUN.relative_to(ROOT)}")
    return 1 if any(o.failed for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
