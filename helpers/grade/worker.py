"""A grading worker: one fresh process per notebook that knows only that notebook (pool.py starts them).

Each worker is forked from multiprocessing's forkserver (Linux), a server started by exec before any
submission is read, with torch, the lessons and their prepared setups preloaded (preload.py); where
fork is not safe (macOS, Windows) it is spawned. It is given its notebook's bytes and the write end of
its own pipe, and nothing else: it closes every other pipe and socket it may have inherited, confines
itself (confine.py), parses the notebook, takes the student's definitions (definitions.py), runs each
exercise's check from the PRISTINE cell in the exercise's namespace, and writes one message per step.

Its messages: "protections" (what confinement holds), "notebook" (its lesson and what was taken, or
why it cannot be graded), one "record" per exercise, then "end". pool.py reads them as data.
"""

from __future__ import annotations

import __future__
import json
import os
import stat
import struct
from pathlib import Path

import torch

from ..exercises import sandbox
from . import cgroups, preload
from .confine import Limits, confine
from .definitions import Taken, take
from .lessons import lessons, which_lesson
from .reading import cells_of

HEADER = struct.Struct("<I")
MAX_MESSAGE = 1 << 20  # bytes of one message a worker may send (longer: the submission is marked)
MAX_TEXT = 2000  # characters kept of a verdict's line and of what the student's code printed
MAX_CELL = 20_000  # characters kept of a student's cell (shown in the report) and of the code graded


def record(name: str, key: str, outcome: str, code: str, line: str, printed: str = "", sure: bool = True) -> dict:
    """One exercise's result as plain data (what verdicts.json keeps)."""
    return {"exercise": name, "key": key, "outcome": outcome, "code": code, "line": line[:MAX_TEXT],
            "printed": printed[:MAX_TEXT], "sure": sure}


# --- in the worker ----------------------------------------------------------------------------------------
def _send(fd: int, data: dict) -> None:
    """One message: its length, then its JSON (written whole: a pipe may take a long one in parts)."""
    body = json.dumps(data).encode()
    view = memoryview(HEADER.pack(len(body)) + body)
    while view:
        view = view[os.write(fd, view):]


def _open_fds() -> list[int]:
    try:
        return [int(n) for n in os.listdir("/proc/self/fd")]
    except OSError:
        return list(range(3, 256))


def close_other_pipes(keep: int) -> None:
    """Close every pipe and socket but `keep` (what a forkserver or spawn start may leave: its own ends)."""
    for fd in _open_fds():
        if fd in (0, 1, 2, keep):
            continue
        try:
            mode = os.fstat(fd).st_mode
        except OSError:
            continue
        if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
            try:
                os.close(fd)
            except OSError:
                pass


def _grade_one(prepared, i: int, taken) -> dict:
    """Run the student's definitions in exercise i's namespace, then the pristine check on them."""
    ex = prepared.lesson.exercises[i][1]
    if taken.problem:
        return record(ex.name, ex.key, "raised", f"{ex.key}.raised", f"✗ {ex.title}: {taken.problem}.")
    if taken.code is None:
        return record(ex.name, ex.key, "not_attempted", f"{ex.key}.not_attempted",
                      f"… {ex.title}: not attempted (the notebook defines no {ex.name}).")
    namespace = dict(prepared.namespaces[i])
    flags = __future__.annotations.compiler_flag  # annotations stay text: nothing of theirs is evaluated
    try:
        exec(compile(taken.code, f"<{ex.name}>", "exec", flags=flags, dont_inherit=True), namespace)
    except Exception as err:  # an import that fails, a class whose base is wrong
        return record(ex.name, ex.key, "raised", f"{ex.key}.raised",
                      f"✗ {ex.title}: the definitions raised {type(err).__name__}: {str(err)[:200]}")
    try:
        verdict = eval(ex.test, namespace)
    except Exception as err:  # the check itself could not read what it was given
        return record(ex.name, ex.key, "raised", f"{ex.key}.raised",
                      f"✗ {ex.title}: the check could not grade it ({type(err).__name__}: {str(err)[:200]})")
    return record(ex.name, ex.key, verdict.outcome, verdict.code, verdict.line, verdict.printed, verdict.sure)


def _take(cells: list[dict], name: str):
    try:
        return take(cells, name)
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
    del data
    number = ""
    if not problem:
        number, problem = _lesson(cells)
    if problem:
        _send(fd, {"kind": "notebook", "problem": problem[:MAX_TEXT]})
        return
    try:
        prepared = preload.prepared(number)
    except ValueError as err:
        _send(fd, {"kind": "notebook", "problem": str(err)[:MAX_TEXT]})
        return
    taken = [_take(cells, name) for name in prepared.lesson.names]
    del cells
    _send(fd, {"kind": "notebook", "lesson": number, "setup": preload.SECONDS,
               "taken": [{"code": (t.code or "")[:MAX_CELL], "cell": t.cell[:MAX_CELL]} for t in taken]})
    for i in range(start, len(taken)):
        _send(fd, dict(_grade_one(prepared, i, taken[i]), kind="record", index=i))


def work(conn, data: bytes, start: int, workdir: str, hidden: list[str], limits: Limits, cgroup: str | None) -> None:
    """The worker's whole life: its own pipe only, confined, one notebook graded; never returns."""
    fd = conn.fileno()
    try:
        os.setsid()  # its own session: a Ctrl-C at the terminal reaches the grader, which stops it
        close_other_pipes(fd)
        counted = cgroups.inside(cgroup)  # moved there by the grader before it starts anything
        cpu_s = int(limits.exercise_wall_s * 20) + 5
        protections, pid_namespace = confine(Path(workdir), [Path(h) for h in hidden], limits, cpu_s)
        protections += [f"at most {limits.processes} processes and threads (a pids cgroup, root included)"] * counted
        if pid_namespace and os.fork() != 0:  # the namespace's first process grades; this one waits for it
            os._exit(os.waitstatus_to_exitcode(os.wait()[1]) & 0xFF)
        torch.set_num_threads(1)
        sandbox.TIME_LIMIT_S = limits.exercise_s
        _send(fd, {"kind": "protections", "protections": protections})
        grade_notebook(fd, data, start)
        _send(fd, {"kind": "end"})
    except BaseException:
        pass
    finally:
        os._exit(0)
