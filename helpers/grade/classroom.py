"""Grading a class, start to end: read the submissions, know each one's lesson, prepare each lesson once,
grade every submission in its worker, and build the table the files are written from."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from tqdm import tqdm

from .confine import Limits
from .definitions import take
from .lessons import lessons, which_lesson
from .results import Row, Table
from .setup import prepare
from .submissions import Submission, collect
from .worker import Job, grade_jobs


def _assign_lessons(subs: list[Submission]) -> None:
    known = lessons()
    for sub in subs:
        if sub.cells is not None and not sub.problem:
            try:
                sub.lesson = which_lesson(sub.cells, known)
            except ValueError as err:
                sub.problem = str(err)


def _chosen(subs: list[Submission], rows: dict[str, Row]) -> list[Submission]:
    """One notebook per student and lesson: when there are several, the one whose name without ".ipynb"
    sorts last (a platform numbers a later upload higher: "ana_01-1" after "ana_01"); the row says which."""
    by_pair: dict[tuple[str, str], list[Submission]] = {}
    for sub in subs:
        row = rows.setdefault(sub.student, Row(sub.student))
        row.sources.append(sub.source)
        if sub.problem:
            row.notes.append(f"{sub.source} {sub.problem}.")
            row.unnamed.append(f"a notebook {sub.problem}.")
        else:
            by_pair.setdefault((sub.student, sub.lesson), []).append(sub)
    chosen = []
    for (student, lesson), group in sorted(by_pair.items()):
        group.sort(key=lambda s: s.source.removesuffix(".ipynb"))
        if len(group) > 1:
            rows[student].notes.append(f"{len(group)} notebooks of lesson {lesson}: graded {group[-1].source}; "
                                       f"not graded: {', '.join(s.source for s in group[:-1])}.")
            rows[student].unnamed.append(f"{len(group)} notebooks of lesson {lesson}: graded the one whose file "
                                         f"name sorts last.")
        chosen.append(group[-1])
    return chosen


def _hidden(paths: list[Path], out: Path) -> list[Path]:
    """The folders a worker must not see: where the submissions are, the output folder, $HOME."""
    folders = [p.resolve() if p.is_dir() else p.resolve().parent for p in paths] + [out.resolve()]
    if os.environ.get("HOME"):
        folders.append(Path(os.environ["HOME"]).resolve())
    return list(dict.fromkeys(folders))


def _anonymised(rows: list[Row]) -> list[Row]:
    """Numbers instead of names, and no file names (they carry the names)."""
    width = len(str(len(rows)))
    return [Row(f"student {i:0{width}d}", row.records, [], row.unnamed) for i, row in enumerate(rows, 1)]


def grade_class(paths: list[Path], out: Path, workers: int = 2, limits: Limits = Limits(),
                anonymous: bool = False, names: dict[str, str] | None = None, progress: bool = True) -> Table:
    """Grade every submission; the table grades.csv, verdicts.json and the report are written from."""
    if not hasattr(os, "fork"):
        raise ValueError("grading needs os.fork (Linux or macOS): on Windows run it in WSL or in the docker line "
                         "of docs/teaching.md, 'Grading a class'.")
    subs, inputs = collect(paths)
    Path(out).mkdir(parents=True, exist_ok=True)  # before the workers start, so they can be kept out of it
    for sub in subs:
        sub.student = (names or {}).get(sub.student, sub.student)
    _assign_lessons(subs)
    rows: dict[str, Row] = {}
    chosen = _chosen(subs, rows)
    numbers = sorted({sub.lesson for sub in chosen})
    prepared = {}
    for number in numbers:
        if progress:
            print(f"preparing lesson {number} (its setup, from notebooks/) …", file=sys.stderr, flush=True)
        prepared[number] = prepare(lessons()[number])
    jobs = [Job(prepared[sub.lesson], [take(sub.cells, name) for name in lessons()[sub.lesson].names]) for sub in chosen]
    bar = tqdm(total=len(jobs), desc="grading", unit="notebook", file=sys.stderr, disable=not progress)
    grade_jobs(jobs, limits, workers, _hidden(list(map(Path, paths)), out), done=lambda job: bar.update(1))
    bar.close()
    columns = [f"{n} {name}" for n in numbers for name in lessons()[n].names]
    for sub, job in zip(chosen, jobs):
        for record, taken in zip(job.records, job.taken):
            written = {"printed": ""} if anonymous else {"cell": taken.cell}  # what they wrote or printed may name them
            rows[sub.student].records[f"{sub.lesson} {record['exercise']}"] = dict(
                record, lesson=sub.lesson, graded=taken.code or "", **written)
    ordered = [rows[s] for s in sorted(rows, key=str.casefold)]
    protections = next((job.protections for job in jobs if job.protections), [])
    timings = {"setup": {n: p.seconds for n, p in prepared.items()},
               "notebooks": {n: [job.seconds for job in jobs if job.prepared is p] for n, p in prepared.items()}}
    return Table(columns, _anonymised(ordered) if anonymous else ordered, {c: 1.0 for c in columns}, protections,
                 [] if anonymous else inputs, timings)
