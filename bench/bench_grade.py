"""Grading a class: `python -m helpers.grade` on a synthetic class of 30 students × lessons 01-07, --workers 2.

    python bench/bench_grade.py [--students 30] [--workers 2] [--sandbox auto] [--keep FOLDER] [--quick]
    (--quick: 2 students of lesson 01)

Prints the wall time of the whole command, then where it goes: each lesson's setup (run once, in the
grader's forkserver, before any submission is read, with each check run once on the reference), the
median time per submission of each lesson (its worker: forked from that server, confined, the notebook
parsed, then a runner forked for the student's code, which runs every check of the lesson, and each ✓
checked again by the worker on the runner's answers), and what a worker that grades nothing costs.
Target (issue 53): 30 × 7 in at most 2 minutes with --workers 2. macOS's way (spawned workers, runners
started by exec) on Linux: HELPERS_GRADE_START=spawn python bench/bench_grade.py --students 2.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import parser, record  # noqa: E402

from helpers.grade.classroom import grade_class  # noqa: E402
from helpers.grade.confine import Limits, choose  # noqa: E402
from helpers.grade.results import write_outputs  # noqa: E402
from helpers.grade.runner import SPAWN  # noqa: E402
from helpers.grade.synthetic import notebook, write_class  # noqa: E402
from helpers.grade.lessons import LESSONS, lessons  # noqa: E402

TARGET_S = 120.0


def worker_overhead(folder: Path, sandbox: str, n: int) -> float:
    """Seconds per notebook that defines no exercise (every stub left): start, confinement, parsing, records."""
    folder.mkdir()
    stubs = {name: "blank" for name in lessons()["01"].names}
    for i in range(n):
        (folder / f"blank{i}_01.ipynb").write_text(json.dumps(notebook(lessons()["01"].path, stubs)))
    started = time.perf_counter()
    grade_class([folder], folder.parent / "blank-out", 1, Limits(), progress=False, sandbox=sandbox)
    return (time.perf_counter() - started) / n


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--students", type=int, default=30)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--sandbox", choices=("auto", "bwrap", "none"), default="auto")
    p.add_argument("--keep", type=Path, help="also copy the written files into this folder, to look at them")
    args = p.parse_args()
    students, numbers = (2, ("01",)) if args.quick else (args.students, LESSONS)
    sandbox = choose(args.sandbox)
    with tempfile.TemporaryDirectory() as tmp:
        write_class(Path(tmp) / "class", students, numbers)
        started, cpu = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
        table = grade_class([Path(tmp) / "class"], Path(tmp) / "out", args.workers, Limits(), progress=False,
                            sandbox=sandbox)
        graded, cpu_after = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
        own_cpu = cpu_after.ru_utime + cpu_after.ru_stime - cpu.ru_utime - cpu.ru_stime
        write_outputs(table, Path(tmp) / "out", anonymous=False)
        total = time.perf_counter() - started
        if args.keep:
            shutil.copytree(Path(tmp) / "out", args.keep, dirs_exist_ok=True)
        overhead = worker_overhead(Path(tmp) / "blank", sandbox, 3 if args.quick else 10)
    setups, notebooks = table.timings["setup"], table.timings["notebooks"]
    count = sum(len(v) for v in notebooks.values())
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"{students} students × {len(notebooks)} lessons = {count} notebooks, --workers {args.workers}, "
          f"--sandbox {sandbox}, load average {load:.1f} on {os.cpu_count()} cores: {total:.1f} s in all")
    if SPAWN:
        print("  lesson setups: in every worker and again in its runner, so inside each submission's time below")
    else:
        print(f"  lesson setups (once each, in the forkserver): {sum(setups.values()):.1f} s — "
              + ", ".join(f"{n} {s:.1f} s" for n, s in sorted(setups.items())))
    print(f"  grading the submissions: {graded - started:.1f} s wall; per submission (its worker, median): "
          + ", ".join(f"{n} {statistics.median(v):.2f} s" for n, v in notebooks.items() if v))
    print(f"  the grading process's own CPU while the workers graded: {own_cpu:.1f} s (it waits in select; a "
          f"busy loop would show here as most of the wall time)")
    print(f"  writing grades.csv, verdicts.json, the page and the figure: {total - (graded - started):.1f} s")
    start = "spawned" if SPAWN else "start from the server"
    print(f"  a worker that runs no check costs {overhead:.2f} s ({start}, confinement, parsing, "
          f"records); the rest is the lesson's checks")
    way = ", macOS's way" if SPAWN else ""
    the_target = not args.quick and (students, args.workers) == (30, 2)  # the class
    record(f"grade a class ({students} × {len(notebooks)}, {args.workers} workers{way})" if not args.quick
           else "grade a class (--quick)", total, "s", TARGET_S if the_target else None)


if __name__ == "__main__":
    main()
