"""Grading submissions in worker processes: one fork of the prepared lesson per submission.

The parent holds each lesson's prepared namespaces (setup.py) and the student's definitions as text
(definitions.py); it never hands a worker a path. A worker is forked from the parent, confined
(confine.py), and grades the lesson's exercises in order: the student's definitions run in a copy of
the exercise's namespace, then the check from the PRISTINE cell (whose own fork runs the student's
function, exercises/isolation.py). It sends one JSON record per exercise through a pipe; the parent
reads them as plain data (json, never pickle or marshal), stops a worker that runs past an
exercise's wall time or the notebook's, and starts a fresh one from the next exercise, so an
exercise that kills its process costs only itself.
"""

from __future__ import annotations

import __future__
import json
import os
import select
import shutil
import signal
import struct
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch

from ..exercises import sandbox
from ..exercises.verdict import OUTCOMES
from .confine import Limits, confine
from .definitions import Taken
from .setup import Prepared

_HEADER = struct.Struct("<I")
MAX_RECORD = 64 << 10  # bytes of one record a worker may send (longer: the worker is stopped)
MAX_TEXT = 2000  # characters kept of a verdict's line and of what the student's code printed


@dataclass
class Job:
    """One submission of one lesson: the lesson's prepared state and what was taken from the notebook."""

    prepared: Prepared
    taken: list[Taken]  # one per exercise of the lesson, in its order
    records: list[dict] = field(default_factory=list)
    protections: list[str] = field(default_factory=list)
    seconds: float = 0.0


def record(name: str, key: str, outcome: str, code: str, line: str, printed: str = "", sure: bool = True) -> dict:
    """One exercise's result as plain data (what verdicts.json keeps)."""
    return {"exercise": name, "key": key, "outcome": outcome, "code": code, "line": line[:MAX_TEXT],
            "printed": printed[:MAX_TEXT], "sure": sure}


def _grade_one(prepared: Prepared, i: int, taken: Taken) -> dict:
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


def _send(fd: int, data: dict) -> None:
    body = json.dumps(data).encode()
    os.write(fd, _HEADER.pack(len(body)) + body)


def _worker(job: Job, start: int, fd: int, workdir: Path, hidden: list[Path], limits: Limits) -> None:
    """The forked worker: confine, grade exercises start…, send each; never returns."""
    try:
        cpu_s = int(limits.exercise_wall_s * (len(job.taken) - start)) + 5
        protections, pid_namespace = confine(workdir, hidden, limits, cpu_s)
        if pid_namespace and os.fork() != 0:  # the namespace's first process grades; this one waits for it
            os._exit(os.waitstatus_to_exitcode(os.wait()[1]) & 0xFF)
        torch.set_num_threads(1)  # the parent's OpenMP threads did not come with the fork: do not wait on them
        sandbox.TIME_LIMIT_S = limits.exercise_s
        _send(fd, {"protections": protections})
        for i in range(start, len(job.taken)):
            _send(fd, _grade_one(job.prepared, i, job.taken[i]))
    except BaseException:
        pass
    finally:
        os._exit(0)


def _stopped(job: Job, i: int, outcome: str, why: str) -> dict:
    ex = job.prepared.lesson.exercises[i][1]
    code = "too_slow" if outcome == "too_slow" else "exited"
    return record(ex.name, ex.key, outcome, f"{ex.key}.{code}", f"✗ {ex.title}: {why}")


def _checked(job: Job, data: dict, i: int) -> dict:
    """A record from a worker, read as plain data of the expected kinds (a worker is not trusted to format it)."""
    ex = job.prepared.lesson.exercises[i][1]
    text = {k: str(data.get(k, ""))[:MAX_TEXT] for k in ("outcome", "code", "line", "printed")}
    outcome = text["outcome"] if text["outcome"] in OUTCOMES else "raised"
    code = text["code"] if text["code"].startswith(ex.key + ".") else f"{ex.key}.raised"
    return record(ex.name, ex.key, outcome, code, text["line"], text["printed"], data.get("sure") is not False)


@dataclass
class _Running:
    job: Job
    pid: int
    fd: int
    next: int  # the exercise whose record comes next
    workdir: Path
    started: float
    deadline: float
    buffer: bytes = b""


def _start(job: Job, start: int, hidden: list[Path], limits: Limits) -> _Running:
    read_fd, write_fd = os.pipe()
    workdir = Path(tempfile.mkdtemp(prefix="grade-worker-"))
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        os.setpgid(0, 0)
        _worker(job, start, write_fd, workdir, hidden, limits)
    os.close(write_fd)
    try:
        os.setpgid(pid, pid)  # also here, so a kill cannot come before the child made its group
    except OSError:
        pass
    now = time.monotonic()
    return _Running(job, pid, read_fd, start, workdir, now, now + _wall(job, limits))


def _wall(job: Job, limits: Limits) -> float:
    """Seconds the next exercise may take: its own limit, or what is left of the notebook's."""
    return max(0.0, min(limits.exercise_wall_s, limits.notebook_s - job.seconds))


def _end(run: _Running) -> None:
    """Stop the worker and everything it started, close the pipe, remove its folder."""
    for kill in (lambda: os.killpg(run.pid, signal.SIGKILL), lambda: os.kill(run.pid, signal.SIGKILL)):
        try:
            kill()
        except OSError:
            pass
    os.waitpid(run.pid, 0)
    os.close(run.fd)
    run.job.seconds += time.monotonic() - run.started
    shutil.rmtree(run.workdir, ignore_errors=True)


def _read(run: _Running, limits: Limits) -> bool:
    """Read what the worker sent; False once it ended, sent every record, or must be stopped (too much data)."""
    chunk = os.read(run.fd, 1 << 16)
    if not chunk:
        return False
    run.buffer += chunk
    while len(run.buffer) >= _HEADER.size:
        size = _HEADER.unpack_from(run.buffer)[0]
        if size > MAX_RECORD:
            return False
        if len(run.buffer) < _HEADER.size + size:
            break
        data = json.loads(run.buffer[_HEADER.size:_HEADER.size + size].decode("utf-8", "replace"))
        run.buffer = run.buffer[_HEADER.size + size:]
        if isinstance(data, dict) and "protections" in data and not run.job.protections:
            run.job.protections = [str(p) for p in data["protections"]][:20]
        elif isinstance(data, dict) and run.next < len(run.job.taken):
            run.job.records.append(_checked(run.job, data, run.next))
            run.next += 1
            run.deadline = time.monotonic() + _wall(run.job, limits)
    done = run.next >= len(run.job.taken)  # every record is in: no need to wait for what the student left running
    return not done and len(run.buffer) <= MAX_RECORD + _HEADER.size


def _after(run: _Running, limits: Limits, timed_out: bool) -> int | None:
    """Record what stopped the worker; the exercise to restart from, or None when the job is done."""
    if run.next >= len(run.job.taken):
        return None
    if timed_out:
        why = f"stopped after {limits.exercise_wall_s:.0f} s (too slow, or a loop that never ends)."
        run.job.records.append(_stopped(run.job, run.next, "too_slow", why))
    else:
        why = ("the submission ended the grading process (os._exit, a crash, the memory limit, or more output "
               "than a record may hold) during this exercise.")
        run.job.records.append(_stopped(run.job, run.next, "stopped", why))
    if run.job.seconds >= limits.notebook_s:  # the notebook's own limit: the rest is not run
        why = f"not run: the notebook used up its {limits.notebook_s:.0f} s."
        run.job.records += [_stopped(run.job, i, "too_slow", why) for i in range(run.next + 1, len(run.job.taken))]
        return None
    return run.next + 1 if run.next + 1 < len(run.job.taken) else None


def grade_jobs(jobs: list[Job], limits: Limits, workers: int, hidden: list[Path], done=lambda job: None) -> None:
    """Grade every job, `workers` at a time; `done(job)` is called as each finishes (the progress bar)."""
    waiting, running = [(job, 0) for job in jobs], {}
    while waiting or running:
        while waiting and len(running) < max(1, workers):
            job, start = waiting.pop(0)
            run = _start(job, start, hidden, limits)
            running[run.fd] = run
        timeout = max(0.0, min(r.deadline for r in running.values()) - time.monotonic())
        ready, _, _ = select.select(list(running), [], [], timeout)
        for fd in ready:
            if not _read(running[fd], limits):
                _finish(running.pop(fd), limits, False, waiting, done)
        for fd in [fd for fd, r in running.items() if time.monotonic() > r.deadline]:
            _finish(running.pop(fd), limits, True, waiting, done)


def _finish(run: _Running, limits: Limits, timed_out: bool, waiting: list, done) -> None:
    _end(run)
    again = _after(run, limits, timed_out)
    if again is None:
        done(run.job)
    else:
        waiting.insert(0, (run.job, again))
