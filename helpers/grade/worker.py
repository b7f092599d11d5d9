"""A grading worker: one fresh process per notebook that knows only that notebook (pool.py starts them).

Each worker is forked from multiprocessing's forkserver (Linux), a server started by exec before any
submission is read, with torch, the lessons and their prepared setups preloaded (preload.py); where
fork is not safe (macOS) it is spawned. It is given its notebook's bytes and the write end of its own
pipe, and nothing else: it closes every other pipe and socket it may have inherited, confines itself
(confine.py), parses the notebook and takes the student's definitions (definitions.py). It then runs
none of the student's code itself: the exercises run in a runner process of its own (runner.py) that
holds no pipe to the grader, and a ✓ counts only when the worker's own run of the check on the runner's
answers agrees.

Its messages: "protections" (what confinement holds), "notebook" (its lesson and what was taken, or
why it cannot be graded), one "record" per exercise, then "end". pool.py reads them as data.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import torch

from ..exercises import sandbox
from ..exercises.verdict import OUTCOMES
from . import preload, runner
from .confine import PR_SET_DUMPABLE, Limits, confine, die_with_parent, in_cgroup, libc, own_proc
from .definitions import Taken, cells_of, lesson_names, python_that_ran, take
from .lessons import lessons, other_exercises, which_lesson
from .wire import close_other_pipes, send

MAX_MESSAGE = 1 << 20  # bytes of one message a worker may send (longer: the submission is marked)
MAX_TEXT = 2000  # characters kept of a verdict's line and of what the student's code printed
MAX_CELL = 20_000  # characters kept of a student's cell (shown in the report) and of the code graded


def record(name: str, key: str, outcome: str, code: str, line: str, printed: str = "", sure: bool = True) -> dict:
    """One exercise's result as plain data (what verdicts.json keeps)."""
    return {"exercise": name, "key": key, "outcome": outcome, "code": code, "line": line[:MAX_TEXT],
            "printed": printed[:MAX_TEXT], "sure": sure}


def plain_record(ex, data: dict) -> dict:
    """A record from a process that ran student code, read as plain data of the expected kinds (such a
    process is not trusted to format it)."""
    text = {k: str(data.get(k, ""))[:MAX_TEXT] for k in ("outcome", "code", "line", "printed")}
    outcome = text["outcome"] if text["outcome"] in OUTCOMES else "raised"
    code = text["code"] if text["code"].startswith(ex.key + ".") else f"{ex.key}.raised"
    return record(ex.name, ex.key, outcome, code, text["line"], text["printed"], data.get("sure") is not False)


# --- in the worker ----------------------------------------------------------------------------------------
def _grade_one(prepared, i: int, taken, runner_) -> dict:
    """Exercise i's record: the runner's verdict, confirmed here when it says right."""
    ex = prepared.lesson.exercises[i][1]
    if taken.problem:
        return plain_record(ex, runner.raised(ex, f"{taken.problem}."))
    if taken.code is None:
        return record(ex.name, ex.key, "not_attempted", f"{ex.key}.not_attempted",
                      f"… {ex.title}: not attempted (the notebook defines no {ex.name}).{_renamed(taken, ex)}")
    done = _name_left_out(runner.grade(prepared, i, runner_, plain_record), ex, taken)
    done = _stopped_itself(_stub_last(done, ex, taken), ex)
    return dict(done, line=done["line"] + _renamed(taken, ex)) if done["outcome"] == "not_attempted" else \
        _copy_above(done, ex, taken)


def _copy_above(done: dict, ex, taken) -> dict:
    """A wrong answer with another definition above it: the student's notebook may show that one's ✓ (run last)."""
    if not taken.earlier or done["outcome"] in ("right", "not_attempted"):
        return done
    return dict(done, line=done["line"] + f" (A cell above defines {ex.name} too: the last definition in the "
                                         f"notebook is graded, as a run from the top keeps it.)")


def _renamed(taken, ex) -> str:
    """The answer written under another name (attention_weights2), which the check never calls: said."""
    if not taken.similar:
        return ""
    names = " and ".join(taken.similar)
    return (f" Your notebook defines {names}, but the grader grades the function named {ex.name}: name your "
            f"answer {ex.name} (or add `{ex.name} = {taken.similar[0]}` below it).")


def _stopped_itself(done: dict, ex) -> dict:
    """No one presses Stop while a class is graded: a KeyboardInterrupt came from the function itself."""
    if not done["code"].endswith(".stopped"):
        return done
    return dict(done, line=f"✗ {ex.title}: your function raised KeyboardInterrupt itself (nobody pressed Stop while "
                           f"the class was graded): take out the raise, or the loop that waits for Ctrl-C.")


def _stub_last(done: dict, ex, taken) -> dict:
    """The answer in a cell above and the stub left in the exercise's cell: Jupyter keeps the stub (run last);
    or the answer pasted into a Markdown cell, which Jupyter never runs."""
    if done["outcome"] == "not_attempted" and taken.in_text:
        return dict(done, line=done["line"].rstrip() + (
            f" A {taken.in_text} cell defines {ex.name} too, which Jupyter does not run: put your answer in the "
            f"exercise's code cell (or make that cell a Code cell again: select it, press Esc, then Y)."))
    if done["outcome"] != "not_attempted" or not taken.earlier:
        return done
    return dict(done, line=f"… {ex.title}: not attempted: the last cell that defines {ex.name} (the one Jupyter "
                           f"keeps) still returns None; a cell above defines it too: put your answer in the last "
                           f"one, or delete the stub.")


def _name_left_out(done: dict, ex, taken) -> dict:
    """A NameError for a name that only a line the grader left out sets: that line is named, not "not defined"."""
    found = re.search(r"your function uses (\w+), which (is not defined in it|is not imported where it runs)", done["line"])
    if done["code"] not in (f"{ex.key}.error.name_not_defined", f"{ex.key}.error.module_not_imported") or not found:
        return done
    name, left_out = found.group(1), taken.left_out or {}
    if found.group(2) != "is not defined in it":  # a module: only an import below the exercise says more
        return done if name not in taken.below else dict(done, line=(
            f"✗ {ex.title}: your function uses {name}, which only a cell below the exercise imports: Jupyter runs "
            f"a notebook top to bottom, so move that import above the exercise (or into its cell)."))
    if name in (taken.imports or {}):  # `import einops` above: installed on the laptop, not here
        return dict(done, line=f"✗ {ex.title}: your function uses {name}, which `{taken.imports[name]}` (a cell "
                               f"above) sets, and that import fails where the class is graded (the module is not "
                               f"installed there): use torch's own operations, as the lesson does.")
    if name in taken.below and name not in left_out:
        return dict(done, line=f"✗ {ex.title}: your function uses {name}, which only a cell below the exercise "
                               f"defines: Jupyter runs a notebook top to bottom, so move that cell above it.")
    if name not in left_out and taken.runs:  # `%run my_helpers.py` above: the file was not handed in
        return dict(done, line=f"✗ {ex.title}: your function uses {name}, which no cell of the notebook sets; "
                               f"`{taken.runs[0][:80]}` (a cell above) may, but the grader has the notebook only, "
                               f"not that file: define {name} in a cell of the notebook.")
    if name not in left_out:
        return done
    line = left_out[name]
    fix = (f"define {name} without the decorator" if line.startswith("@")
           else f"write {name}'s default values as constants" if re.match(r"(async )?def ", line)
           else f"set {name} inside the function")
    return dict(done, line=f"✗ {ex.title}: your function uses {name}, which only `{line}` sets, a line the grader "
                           f"does not run (it takes imports, plain definitions without decorators "
                           f"and simple constants from your cells): {fix}.")


def _take(cells: list[dict], name: str, names: frozenset, ran: tuple[int, int] | None, check: str):
    try:
        return take(cells, name, names, ran, check)
    except (RecursionError, MemoryError) as err:
        return Taken(name, None, f"the cell defining {name} is nested too deeply for Python's parser "
                                 f"({type(err).__name__})")


def _lesson(cells: list[dict]) -> tuple[str, str]:
    """(the lesson's number, "") or ("", one line why the notebook is no lesson)."""
    try:
        return which_lesson(cells, lessons()), ""
    except ValueError as err:
        return "", str(err)
    except (RecursionError, MemoryError) as err:
        return "", f"cannot be read as a lesson ({type(err).__name__}: nested too deeply)"


def grade_notebook(fd: int, data: bytes, start: int) -> None:
    """Parse this notebook, say its lesson and what was taken, then grade exercises start… one by one."""
    cells, problem = cells_of(data)
    ran = python_that_ran(data)
    del data
    number = ""
    if not problem:
        number, problem = _lesson(cells)
    if problem:
        send(fd, {"kind": "notebook", "problem": problem[:MAX_TEXT]})
        return
    names = lesson_names(lessons()[number].cells)
    note = other_exercises(cells, number, lessons())
    taken = [_take(cells, ex.name, names, ran, ex.check) for _, ex in lessons()[number].exercises]
    del cells
    # A runner started by exec (macOS's way) imports torch and prepares the lesson while this worker does
    # the same, not after it: a notebook takes one setup's time, not two.
    early = runner.Runner(number, taken, [fd]) if runner.SPAWN and any(map(_runs, taken[start:])) else None
    try:
        prepared = preload.prepared(number)
    except ValueError as err:
        if early is not None:
            early.stop()
        send(fd, {"kind": "notebook", "problem": str(err)[:MAX_TEXT]})
        return
    send(fd, {"kind": "notebook", "lesson": number, "setup": preload.SECONDS, "note": note[:MAX_TEXT],
               "taken": [{"code": (t.shown or t.code or "")[:MAX_CELL], "cell": t.cell[:MAX_CELL]} for t in taken]})
    _grade_all(fd, prepared, taken, start, early)


def _runs(taken: Taken) -> bool:
    """The exercise has student code to run."""
    return taken.code is not None and not taken.problem


def _grade_all(fd: int, prepared, taken: list, start: int, runner_=None) -> None:
    """Send a record for each exercise from `start` on; the student's code in one runner (`runner_`: one
    already started)."""
    try:
        for i in range(start, len(taken)):
            if _runs(taken[i]) and (runner_ is None or runner_.broken):  # fresh after one that stopped answering
                if runner_ is not None:
                    runner_.stop()
                runner_ = runner.Runner(prepared.lesson.number, taken, [fd], prepared)
            send(fd, dict(_grade_one(prepared, i, taken[i], runner_), kind="record", index=i))
    finally:
        if runner_ is not None:
            runner_.stop()


def work(conn, data: bytes, start: int, workdir: str, hidden: list[str], limits: Limits, cgroup: str | None) -> None:
    """The worker's whole life: its own pipe only, confined, one notebook graded; never returns."""
    fd = conn.fileno()
    try:
        os.setsid()  # its own session: a Ctrl-C at the terminal reaches the grader, which stops it
        die_with_parent()  # the forkserver, which ends when the grader does (kill -9 included)
        close_other_pipes({fd})
        counted = in_cgroup(cgroup)  # moved there by the grader before it starts anything
        cpu_s = int(limits.exercise_wall_s * 20) + 5
        protections, pid_namespace = confine(Path(workdir), [Path(h) for h in hidden], limits, cpu_s)
        protections += [f"at most {limits.processes} processes and threads (a pids cgroup, root included)"] * counted
        protections += [RUNNER] + _guarded()  # before the fork: the process that only waits is not dumpable either
        if pid_namespace and os.fork() != 0:  # the namespace's first process grades; this one waits for it
            os.close(fd)
            code = os.waitstatus_to_exitcode(os.wait()[1])  # -N: killed by signal N, said as a shell does
            os._exit(128 - code if code < 0 else code & 0x7F)
        if pid_namespace:
            die_with_parent()  # and ends with the process that waits for it
        if pid_namespace and own_proc():
            protections.append("own /proc: sees only its own processes")
        torch.set_num_threads(1)
        sandbox.TIME_LIMIT_S = limits.exercise_s
        send(fd, {"kind": "protections", "protections": protections})
        grade_notebook(fd, data, start)
        send(fd, {"kind": "end"})
    except BaseException:
        pass
    finally:
        os._exit(0)


RUNNER = ("the student's code runs in a process of its own, without the grader's pipe; a ✓ is checked again where "
          "none of it runs, on its answers as plain data")


def _guarded() -> list[str]:
    """Make this worker not dumpable (after confinement, which writes its own /proc files), so no runner can
    open its pipe through /proc/PID/fd or read its memory (Linux)."""
    lib = libc()
    if lib is None or lib.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        return []
    return ["the worker is not dumpable: no runner opens its pipe through /proc or reads its memory"]
