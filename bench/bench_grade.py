"""Grading a class: `python -m helpers.grade` on a synthetic class of 30 students × 7 lessons, --workers 2.

    python bench/bench_grade.py [--students 30] [--workers 2] [--keep FOLDER] [--quick]   (--quick: 2 students of lesson 01)

Prints the wall time of the whole command, then where it goes: each lesson's setup (run once, from the
pristine notebook) and the median time per submission of each lesson (its worker: fork, confinement,
the student's definitions, every check of the lesson). Target (issue 31): 30 × 7 in at most 5 minutes
on a 2-core laptop with --workers 2.
"""

from __future__ import annotations

import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import parser, record  # noqa: E402

from helpers.grade.classroom import grade_class  # noqa: E402
from helpers.grade.confine import Limits  # noqa: E402
from helpers.grade.definitions import Taken  # noqa: E402
from helpers.grade.lessons import lessons  # noqa: E402
from helpers.grade.outputs import write_outputs  # noqa: E402
from helpers.grade.setup import prepare  # noqa: E402
from helpers.grade.synthetic import write_class  # noqa: E402
from helpers.grade.worker import Job, grade_jobs  # noqa: E402

TARGET_S = 300.0


def worker_overhead(n: int = 10) -> float:
    """Seconds per worker that grades nothing (no definition to run, no check): fork, confinement, records."""
    prepared = prepare(lessons()["01"])
    jobs = [Job(prepared, [Taken(name, None) for name in prepared.lesson.names]) for _ in range(n)]
    started = time.perf_counter()
    grade_jobs(jobs, Limits(), 1, [])
    return (time.perf_counter() - started) / n


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--students", type=int, default=30)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--keep", type=Path, help="also copy the written files into this folder, to look at them")
    args = p.parse_args()
    students, numbers = (2, ("01",)) if args.quick else (args.students, None)
    with tempfile.TemporaryDirectory() as tmp:
        write_class(Path(tmp) / "class", students, numbers)
        started = time.perf_counter()
        table = grade_class([Path(tmp) / "class"], Path(tmp) / "out", args.workers, Limits(), progress=False)
        graded = time.perf_counter()
        write_outputs(table, Path(tmp) / "out", anonymous=False)
        total = time.perf_counter() - started
        if args.keep:
            shutil.copytree(Path(tmp) / "out", args.keep, dirs_exist_ok=True)
    setups, notebooks = table.timings["setup"], table.timings["notebooks"]
    count = sum(len(v) for v in notebooks.values())
    print(f"{students} students × {len(setups)} lessons = {count} notebooks, --workers {args.workers}: "
          f"{total:.1f} s in all ({total / count:.2f} s per submission)")
    print(f"  lesson setups (once each): {sum(setups.values()):.1f} s — "
          + ", ".join(f"{n} {s:.1f} s" for n, s in setups.items()))
    print(f"  grading the submissions: {graded - started - sum(setups.values()):.1f} s wall; per submission "
          f"(its worker, median): " + ", ".join(f"{n} {statistics.median(v):.2f} s" for n, v in notebooks.items()))
    print(f"  writing grades.csv, verdicts.json, the page and the figure: {total - (graded - started):.1f} s")
    print(f"  of a submission's time, a worker that runs no check costs {worker_overhead(3 if args.quick else 10):.2f} s "
          f"(fork, confinement, PID namespace, records); the rest is the lesson's checks")
    record("grade a class (30 × 7, 2 workers)" if not args.quick else "grade a class (--quick)", total, "s",
           TARGET_S if not args.quick else None)


if __name__ == "__main__":
    main()
