"""The command line of the grader: `python -m helpers.grade SUBMISSION... --out FOLDER`.

    python -m helpers.grade submissions.zip --out graded/            # a Moodle or Canvas download
    python -m helpers.grade class/ --out graded/ --workers 2 --anonymous
    python -m helpers.grade --nbgrader source/                        # lessons 01-07 for nbgrader
    python -m helpers.grade --otter otter/                            # … for otter-grader

Writes grades.csv, verdicts.json, class_report.html and class_report.png (.svg, .pdf) into FOLDER.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sys
from pathlib import Path

STOPPED_LOADING = "before any notebook was graded: nothing was written."


class Stopped(KeyboardInterrupt):
    """A kill signal (SIGTERM, SIGHUP) ends the grading the way Ctrl-C does: workers stopped, what was graded kept."""


def _stop(number, _frame):
    raise Stopped(signal.Signals(number).name)


if __name__ == "__main__":  # from the first line: a kill while torch loads stopped the grader without a word (sweep 30)
    for _number in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(_number) is not signal.SIG_IGN:  # `nohup` ignores SIGHUP: it stays ignored
            signal.signal(_number, _stop)
try:  # the grader and torch take a second or more to load: a Ctrl-C or kill then gets one line, not a traceback
    from ..core.files import atomic_write
    from . import nbgrader, otter
    from .classroom import grade_class
    from .confine import Limits, choose
    from .lessons import lessons
    from .results import FOLDER, NAMES, read_points, write_outputs
    from .submissions import read_names
except KeyboardInterrupt as stopped:
    _how = stopped.args[0] if isinstance(stopped, Stopped) else "Ctrl-C"
    print(f"✗ Stopped ({_how}) {STOPPED_LOADING}", file=sys.stderr)
    raise SystemExit(128 + (signal.Signals[_how] if isinstance(stopped, Stopped) else signal.SIGINT)) from None


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m helpers.grade", description="Grade a class's notebooks and show "
                                "which mistakes the class made.")
    p.add_argument("submissions", nargs="*", type=Path, help="students' .ipynb files, folders of them, or .zip archives")
    p.add_argument("--out", type=Path, help="the folder for grades.csv, verdicts.json and the report")
    p.add_argument("--workers", type=int, default=2, help="submissions graded at once (default 2)")
    p.add_argument("--timeout", type=float, default=10.0, help="seconds per exercise for the student's function")
    p.add_argument("--anonymous", action="store_true", help="numbers instead of names in everything written")
    p.add_argument("--points", type=Path, help="CSV of exercise,points rows (default: 1 per exercise)")
    p.add_argument("--names", type=Path, help="CSV of key,name rows: the name the file gives -> the student's name")
    p.add_argument("--sandbox", choices=("auto", "bwrap", "none"), default="auto",
                   help="bwrap: run the workers inside bubblewrap; none: the grader's own confinement only; "
                        "auto (default): bwrap when it is installed")
    p.add_argument("--again", action="store_true", help="grade every notebook again (by default a rerun grades only "
                   "the notebooks not graded before, kept in OUT/.grading)")
    p.add_argument("--nbgrader", type=Path, metavar="SOURCE_FOLDER", help="write lessons 01-07 as nbgrader sources")
    p.add_argument("--otter", type=Path, metavar="FOLDER", help="write lessons 01-07 in otter-grader's format")
    return p


def _check(args: argparse.Namespace) -> None:
    if not args.submissions:
        raise ValueError("no submissions: pass students' .ipynb files, folders or .zip archives, and --out FOLDER.")
    if args.out is None:
        raise ValueError("no --out FOLDER: pass the folder to write grades.csv, verdicts.json and the report into.")
    if args.workers < 1 or args.workers > 64:
        raise ValueError(f"--workers {args.workers}: pass a whole number from 1 to 64 (e.g. the number of cores).")
    if args.out.exists() and not args.out.is_dir():
        raise ValueError(f"--out {args.out} is a file: pass a folder for grades.csv, verdicts.json and the report.")
    if not 0.5 <= args.timeout <= 600:
        raise ValueError(f"--timeout {args.timeout}: pass seconds per exercise from 0.5 to 600 (default 10).")
    for name in NAMES:
        if (args.out / name).is_dir():
            raise ValueError(f"{args.out / name} is a folder, where the grader writes that file: move it away or "
                             f"pass another --out.")
    out = args.out.resolve()
    for folder in (p.resolve() for p in args.submissions if p.is_dir()):
        if out == folder or folder in out.parents:
            raise ValueError(f"--out {args.out} is inside the submissions folder {folder}: a rerun would read the "
                             f"outputs as submissions; pass a folder outside it.")
    graded = _graded_class(args.out)
    # the same class with more handed in (lesson 02's folder beside 01's) is not another class
    if graded and not set(graded) <= set(_class_of(args)) and (args.out / NAMES[0]).exists() and not args.again:
        raise ValueError(f"--out {args.out} holds the grades of another class ({', '.join(graded)}): pass another "
                         f"--out for this one, or add --again to replace those grades with this class's.")


CLASS_FILE = "class.json"  # in OUT/.grading: the submissions whose grades OUT holds


def _class_of(args: argparse.Namespace) -> list[str]:
    return sorted(str(p.resolve()) for p in args.submissions)


def _graded_class(out: Path) -> list[str] | None:
    """The submissions OUT's grades were written for, or None (a new folder, or one graded before this was kept)."""
    try:
        graded = json.loads((out / FOLDER / CLASS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return graded if isinstance(graded, list) and all(isinstance(p, str) for p in graded) else None


@contextlib.contextmanager
def _stopped_by_signals():
    before = {number: signal.signal(number, _stop) for number in (signal.SIGTERM, signal.SIGHUP)
              if signal.getsignal(number) is not signal.SIG_IGN}  # `nohup` ignores SIGHUP: it stays ignored
    try:
        yield
    finally:
        for number, handler in before.items():
            signal.signal(number, handler)


@contextlib.contextmanager
def _signals_held():
    """Ctrl-C, SIGTERM and SIGHUP are noted, not obeyed, in the block (writing the results: grades.csv without its
    report would be half a result); yields the list they are noted in, for the caller to say and exit with.
    A second one stops at once (a write that hangs on a full or lost disk must still be stoppable)."""
    held: list[signal.Signals] = []

    def note(number, _frame):
        if held:  # Ctrl-C is said as Ctrl-C, a kill by its name
            raise KeyboardInterrupt if number == signal.SIGINT else Stopped(signal.Signals(number).name)
        held.append(signal.Signals(number))

    numbers = [n for n in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP) if signal.getsignal(n) is not signal.SIG_IGN]
    before = {n: signal.signal(n, note) for n in numbers}
    try:
        yield held
    finally:
        for number, handler in before.items():
            signal.signal(number, handler)


def main(argv: list[str] | None = None) -> int:
    """Run the command; 0 when every file was written, 2 with one line on bad input."""
    args = _parser().parse_args(argv)
    step, kept = "start", None  # what a Ctrl-C or kill interrupts: "start" (reading the options), "grading", "writing"
    try:
        with _stopped_by_signals():  # from the first line: a kill while writing must not leave half the outputs
            if args.nbgrader or args.otter:
                return _write_lessons(args)
            _check(args)
            names = read_names(args.names)
            every = [f"{n} {name}" for n, lesson in lessons().items() for name in lesson.names]
            given: set = set()
            points = read_points(args.points, every, given)  # read before grading, so a typo in it costs nothing
            sandbox = choose(args.sandbox)
            step, kept = "grading", args.out / FOLDER
            table = grade_class(args.submissions, args.out, args.workers, Limits(exercise_s=args.timeout),
                                args.anonymous, names, again=args.again, sandbox=sandbox)
            table.points = {column: points[column] for column in table.columns}
            if args.points and (unset := [c for c in table.columns if c not in given]):
                print(f"note: {args.points} gives no points for {', '.join(unset)}: each counts 1 point.",
                      file=sys.stderr)
            step = "writing"
            with _signals_held() as held:  # a few seconds: the files are finished as a set, then the stop is said
                for path in write_outputs(table, args.out, args.anonymous):
                    print(path)
                atomic_write(args.out / FOLDER / CLASS_FILE,
                             lambda tmp: Path(tmp).write_text(json.dumps(_class_of(args)), encoding="utf-8"))
            if held:
                print(f"✗ Stopped ({held[0].name}) while writing the results: they were finished first, every file "
                      f"is complete.", file=sys.stderr)
                return 128 + held[0]
    except (ValueError, OSError) as err:  # bad input, or the output folder (full, read-only): one line
        line = _for_flag(err, "--out")
        done = [f for f in kept.glob("*.json") if f.name != CLASS_FILE] if isinstance(err, OSError) and kept and \
            kept.is_dir() else []
        if done:  # "Nothing was changed there" was the one file's: what this run graded is kept (sweep 27)
            line = line.replace(" Nothing was changed there.", "") + (
                f" The {len(done)} notebook(s) graded so far are kept in {kept}: once there is room, run the same "
                f"command again to grade the rest and write the results.")
        print(f"✗ {line}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as err:
        how = f"{err.args[0]}" if isinstance(err, Stopped) else "Ctrl-C"
        print(f"✗ Stopped ({how}) {_STOPPED[step].format(kept=kept)}", file=sys.stderr)
        return 128 + (signal.Signals[how] if isinstance(err, Stopped) else signal.SIGINT)
    return 0


_STOPPED = {  # what was done when the grader was stopped, and what to do
    "start": STOPPED_LOADING,
    "grading": "while grading: the notebooks graded so far are kept in {kept}; run the same command again to grade "
               "the rest.",
    "writing": "twice while writing the results: every notebook was graded and is kept in {kept}; run the same "
               "command again to write the results (nothing is graded again).",
}


def _write_lessons(args: argparse.Namespace) -> int:
    """--nbgrader or --otter: the lessons in that grader's format (nbgrader.py, otter.py), nothing graded."""
    flag = "--nbgrader" if args.nbgrader else "--otter"
    if (args.nbgrader and args.otter) or args.submissions or args.out:
        raise ValueError(f"{flag} writes the lessons and grades nothing: pass it alone (one of --nbgrader "
                         f"or --otter, no submissions, no --out), then grade with a command of its own.")
    try:
        for path in (nbgrader if args.nbgrader else otter).write_source(args.nbgrader or args.otter,
                                                                       overwrite=args.again):
            print(path)
    except OSError as err:
        raise OSError(err.errno, _for_flag(err, flag)) from None
    return 0


def _for_flag(err: Exception, flag: str) -> str:
    """The error's one line; core.files words a folder as a notebook's folder= argument: here it is `flag`'s."""
    said = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
    return said.replace("pass folder= another directory", f"pass {flag} another folder")


if __name__ == "__main__":
    raise SystemExit(main())
