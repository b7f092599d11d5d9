"""Grading submissions in worker processes (worker.py), seen from the grading process: start them, read
what they send, stop them.

Each worker (started as worker.py says) is given its notebook's bytes and the write end of its own
pipe, and nothing else. The grading process reads every message as data: a length-prefixed JSON object
(never pickle, wire.py), at most MAX_MESSAGE bytes, of the kinds and fields it expects, in order, closed by the
worker's "end". Anything else (too long, not JSON, a record for the wrong exercise, a message after the
end) marks every exercise of that one notebook; the class goes on. A worker that runs past an
exercise's wall time or the notebook's is stopped, and a fresh one goes on from the next exercise, so
an exercise that kills its process costs only itself.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import multiprocessing.forkserver
import os
import select
import shutil
import signal
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from unittest import mock

from .confine import (PR_GET_DUMPABLE, PR_SET_DUMPABLE, Limits, enter_cgroup, launcher, libc, make_cgroup,
                      pool_cgroups, remove_cgroup)
from .lessons import lessons
from .runner import SPAWN, killed_by
from .submissions import lessons_in
from .wire import HEADER, parse
from .worker import MAX_CELL, MAX_MESSAGE, MAX_TEXT, plain_record, record, work

PRELOAD_ENV = "HELPERS_GRADE_LESSONS"  # preload.ENV


@dataclass
class Job:
    """One notebook: its bytes (for its worker only) and what its worker said."""

    source: str
    data: bytes | None
    lesson: str = ""
    taken: list[dict] = field(default_factory=list)  # per exercise: {"code", "cell"}
    records: list[dict] = field(default_factory=list)
    problem: str = ""  # one line when the notebook could not be graded at all
    note: str = ""  # one line about a graded notebook (it also holds another lesson's exercises)
    protections: list[str] = field(default_factory=list)
    setup: dict = field(default_factory=dict)  # lesson -> seconds its setup took in the server
    seconds: float = 0.0
    retry: bool = False  # its worker died part-way (a signal, or before it read the notebook): not kept, so the
    # same command grades it again

    def result(self) -> dict:
        """What is kept of it (a JSON file per notebook, results.py)."""
        return {"source": self.source, "lesson": self.lesson, "taken": self.taken, "records": self.records,
                "problem": self.problem, "note": self.note, "protections": self.protections,
                "seconds": round(self.seconds, 3)}


def context(numbers: list[str], script: str | None = None):
    """multiprocessing's forkserver with the lessons preloaded (Linux), else spawn (runner.SPAWN); `script`: one that starts
    the server (and so every worker) inside bubblewrap (confine.launcher)."""
    if script:
        multiprocessing.set_executable(script)
    if not SPAWN and "forkserver" in multiprocessing.get_all_start_methods():
        os.environ[PRELOAD_ENV] = ",".join(numbers)  # read by the server when it starts (preload.py)
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["helpers.grade.preload", "helpers.grade.worker"])
        return ctx
    return multiprocessing.get_context("spawn")


@contextlib.contextmanager
def _ctrl_c_ignored():
    """Ctrl-C ignored by what starts now (the forkserver, a spawned worker): it is still in the terminal's process
    group, and a Python interrupted while it imports prints a traceback; the grader stops it itself. Python keeps a
    SIGINT it finds ignored at startup ignored, and forked workers inherit that."""
    main = threading.current_thread() is threading.main_thread()
    handler = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
    try:
        yield
    finally:
        if main:
            signal.signal(signal.SIGINT, handler)


@contextlib.contextmanager
def _ctrl_c_deferred():
    """Ctrl-C noted while the block runs and obeyed (a KeyboardInterrupt) when it ends: the forkserver preloads torch
    and the lessons before it forks the first worker, seconds in which a Ctrl-C ignored was lost (sweep 30, BAD-1),
    and one obeyed inside multiprocessing's start would leave a worker the grader does not know to stop."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pressed: list[int] = []
    before = signal.signal(signal.SIGINT, lambda number, frame: pressed.append(number))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)
    if pressed:
        raise KeyboardInterrupt


@contextlib.contextmanager
def _as_a_spawned_worker_starts():
    """What a spawned worker inherits while it imports torch, before it confines itself: one OpenMP thread
    (a process with threads cannot unshare a user namespace, so it would run unconfined) and Ctrl-C ignored."""
    with _ctrl_c_ignored(), mock.patch.dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1"):
        yield


@dataclass
class _Running:
    job: Job
    process: object
    fd: int
    next: int  # the exercise whose record comes next
    workdir: Path
    started: float
    deadline: float
    cgroup: Path | None = None
    buffer: bytes = b""
    bad: str = ""  # why what the worker sent cannot be read (the submission is marked)
    said: bool = False  # the notebook message came
    runner_killed: bool = False  # the last record said its runner was killed (a kill the worker may die of next)
    ended: bool = False  # the worker said it sent everything (anything after that is not the worker's)
    sentinel: bool = True  # its process sentinel still tells when it ends (see Grader.grade)


def remove_abandoned(tmp: Path) -> None:
    """The folders of graders that were killed (kill -9 runs no cleanup): each holds its grader's pid, and one
    whose process is gone is removed. A folder of a grader still running, or of another user, stays."""
    if os.name != "posix":  # os.kill(pid, 0) is a Ctrl-C on Windows, not a question
        return
    for folder in tmp.glob("helpers-grade-*"):
        try:
            pid = int((folder / "grader.pid").read_text())
            os.kill(pid, 0)  # raises ProcessLookupError when no such process runs
        except ProcessLookupError:
            shutil.rmtree(folder, ignore_errors=True)
        except (OSError, ValueError):  # no pid file (not ours to judge), another user's process, unreadable
            continue


class Grader:
    """Starts workers, reads their messages, stops them; `close` leaves no worker and no folder behind."""

    def __init__(self, limits: Limits, workers: int, hidden: list[Path], numbers: list[str], sandbox: str = "none"):
        self.limits, self.workers, self.hidden = limits, max(1, workers), [str(h) for h in hidden]
        remove_abandoned(Path(tempfile.gettempdir()))
        self.root = Path(tempfile.mkdtemp(prefix="helpers-grade-"))
        (self.root / "grader.pid").write_text(str(os.getpid()))
        self.ctx = context(numbers, launcher(self.root, hidden) if sandbox == "bwrap" else None)
        self.running: dict[int, _Running] = {}
        self.server_started = False  # the forkserver runs: a worker's start starts no new Python here

    def names(self, job: Job) -> list:
        return [ex for _, ex in lessons()[job.lesson].exercises] if job.lesson else []

    def start(self, job: Job, start: int) -> None:
        recv, send = self.ctx.Pipe(duplex=False)
        workdir = Path(tempfile.mkdtemp(prefix="w-", dir=self.root))
        cgroup = make_cgroup(f"{self.root.name}-{workdir.name}", self.limits.processes)
        process = self.ctx.Process(target=work, args=(send, job.data, start, str(workdir), self.hidden, self.limits,
                                                      str(cgroup) if cgroup else None), daemon=True)
        # Ctrl-C ignored only while a new Python starts, which keeps it ignored (an exec keeps an ignored signal
        # ignored): the forkserver, once, or a spawned worker; else noted and obeyed once the worker is known
        if self.ctx.get_start_method() == "forkserver" and not self.server_started:
            with _ctrl_c_ignored():
                multiprocessing.forkserver.ensure_running()  # starts the server and returns: it preloads on its own
            self.server_started = True
        with _as_a_spawned_worker_starts() if SPAWN else _ctrl_c_deferred():
            process.start()
            enter_cgroup(cgroup, process.pid)
            os.environ.pop(PRELOAD_ENV, None)  # read once, by the server as it started: no later process prepares
            send.close()
            fd = os.dup(recv.fileno())
            recv.close()
            os.set_blocking(fd, False)
            now = time.monotonic()
            self.running[fd] = _Running(job, process, fd, start, workdir, now, now + self._wall(job), cgroup)

    def _wall(self, job: Job) -> float:
        """Seconds the next step may take: an exercise's limit, or what is left of the notebook's."""
        return max(0.0, min(self.limits.exercise_wall_s, self.limits.notebook_s - job.seconds)) + 30 * (not job.lesson)

    def end(self, run: _Running) -> None:
        """Stop the worker and everything it started, close its pipe, remove its folder."""
        _kill(run.process)
        os.close(run.fd)
        run.job.seconds += time.monotonic() - run.started
        shutil.rmtree(run.workdir, ignore_errors=True)
        remove_cgroup(run.cgroup)

    def close(self) -> None:
        for run in list(self.running.values()):
            self.end(run)
        self.running.clear()
        for child in multiprocessing.active_children():  # a worker that Ctrl-C or SIGTERM stopped being registered
            _kill(child)
        for cgroup in pool_cgroups(self.root.name):  # one made for a worker that Ctrl-C stopped being started
            remove_cgroup(cgroup)
        shutil.rmtree(self.root, ignore_errors=True)

    # --- reading what a worker sends ---------------------------------------------------------------------
    def read(self, run: _Running) -> bool:
        """Read what the worker sent; False once it ended, sent every record, or sent what cannot be read."""
        try:
            chunk = os.read(run.fd, 1 << 16)
        except BlockingIOError:
            return True
        except OSError:
            return False
        if not chunk:
            return False
        run.buffer += chunk
        while len(run.buffer) >= HEADER.size and not run.bad:
            size = HEADER.unpack_from(run.buffer)[0]
            if size > MAX_MESSAGE:
                run.bad = f"a message of {size:,} bytes, more than {MAX_MESSAGE:,}"
                break
            if len(run.buffer) < HEADER.size + size:
                break
            body, run.buffer = run.buffer[HEADER.size:HEADER.size + size], run.buffer[HEADER.size + size:]
            try:
                self.take(run, parse(body))
            except (ValueError, RecursionError, MemoryError):
                run.bad = "bytes that are not a JSON message"
        return not run.bad

    def all_sent(self, run: _Running) -> bool:
        """The notebook message came, then every record (none when it could not be graded)."""
        return run.said and (bool(run.job.problem) or run.next >= len(self.names(run.job)))

    def take(self, run: _Running, data) -> None:
        """One message, read as data of the kinds and fields expected at this point; else run.bad says why."""
        kind = data.get("kind") if isinstance(data, dict) else None
        if run.ended:
            run.bad = "a message after the worker's last one"
        elif kind == "end" and self.all_sent(run):
            run.ended = True
            run.deadline = time.monotonic() + 10  # for the pipe to close (a process it left may still hold it)
        elif kind == "protections" and isinstance(data.get("protections"), list) and not run.said:
            run.job.protections = run.job.protections or [str(p)[:200] for p in data["protections"][:30]]
        elif kind == "notebook" and not run.said:
            run.bad = self._notebook(run, data)
        elif kind == "record" and run.said and data.get("index") == run.next and not run.job.problem:
            run.job.records.append(plain_record(self.names(run.job)[run.next], data))
            run.runner_killed = data.get("again") is True  # its runner was killed: not kept
            run.job.retry = run.job.retry or run.runner_killed
            run.next += 1
            run.deadline = time.monotonic() + self._wall(run.job)
        else:
            run.bad = f"a message the grader did not expect here ({str(kind)[:40]})"

    def _notebook(self, run: _Running, data: dict) -> str:
        """The notebook message: its lesson and what was taken, or why it cannot be graded ("" when fine)."""
        run.said = True
        if isinstance(data.get("problem"), str) and not run.job.lesson:
            run.job.problem = data["problem"][:MAX_TEXT]
            return ""
        lesson, taken = data.get("lesson"), data.get("taken")
        if lesson not in lessons() or (run.job.lesson and lesson != run.job.lesson):
            return f"a lesson the grader does not know ({str(lesson)[:20]})"
        names = lessons()[lesson].names
        if not isinstance(taken, list) or len(taken) != len(names) or not all(
                isinstance(t, dict) and isinstance(t.get("code"), str) and isinstance(t.get("cell"), str) for t in taken):
            return "a list of definitions that does not fit the lesson"
        run.job.lesson = lesson
        run.job.note = data["note"][:MAX_TEXT] if isinstance(data.get("note"), str) else ""
        run.job.taken = [{"code": t["code"][:MAX_CELL], "cell": t["cell"][:MAX_CELL]} for t in taken]
        if isinstance(data.get("setup"), dict) and not run.job.setup:
            run.job.setup = {str(k)[:4]: float(v) for k, v in list(data["setup"].items())[:10]
                             if isinstance(v, (int, float))}
        return ""

    # --- after a worker ------------------------------------------------------------------------------------
    def _stopped(self, job: Job, i: int, outcome: str, why: str) -> dict:
        ex = self.names(job)[i]
        code = "too_slow" if outcome == "too_slow" else "exited"
        return record(ex.name, ex.key, outcome, f"{ex.key}.{code}", f"✗ {ex.title}: {why}")

    def after(self, run: _Running, timed_out: bool, signalled: int = 0) -> int | None:
        """Record what stopped the worker (`signalled`: the signal it died of, 0 if none or ours); the exercise to
        restart from, or None when the notebook is done."""
        job, limits, n = run.job, self.limits, len(self.names(run.job))
        # a signal may come from the submission (os.kill), the machine (its memory ran out) or a person: which one
        # cannot be told, so the line names all three and the result is not kept (a rerun grades it again)
        killed = killed_by(signal.Signals(signalled).name) if signalled in set(signal.Signals) else ""
        if run.bad and not job.lesson:
            job.problem = f"was not graded: its grading process sent {run.bad}"
            return None
        if not run.bad and not run.said:
            job.retry = not timed_out  # ended before it read the notebook: nothing of it was graded
            job.problem = (f"was not graded: reading it took longer than {self._wall(job):.0f} s" if timed_out else
                           f"was not graded: {killed}" if killed else
                           "was not graded: its grading process ended while reading it (a crash or the memory limit; "
                           "the same command grades it again)")
            return None
        if not run.bad and run.ended and self.all_sent(run):
            return None
        if killed and not run.bad and run.runner_killed:  # the kill its runner was said to die of reached the
            # worker too, after that record: the next exercise never ran, so it is run by a fresh worker, not
            # blamed ("killed … during this exercise" on a right answer, one run in twelve; sweep 31, BAD-7)
            return run.next if run.next < n else None
        if run.bad or run.next >= n:  # every record is doubtful, the ones read before as well (every record but
            bad = run.bad or "records without the worker's last message"  # no last message: not the worker's)
            why = f"not graded: the submission wrote into the grader's pipe ({bad})."
            job.records = [self._stopped(job, i, "stopped", why) for i in range(n)]
            return None
        if timed_out:
            why = f"stopped after {limits.exercise_wall_s:.0f} s (too slow, or a loop that never ends)."
            job.records.append(self._stopped(job, run.next, "too_slow", why))
        elif killed:
            job.retry = True
            job.records.append(self._stopped(job, run.next, "stopped", f"not graded: {killed}, during this exercise."))
        else:
            why = ("the submission ended the grading process (os._exit, a crash, the memory limit, more output "
                   "than a record may hold, or closed files or replaced builtins such as len that the grader "
                   "answers with) during this exercise: run it in the notebook on a fresh kernel; it should return "
                   "its answer without exiting, printing pages, holding gigabytes or changing Python itself.")
            job.records.append(self._stopped(job, run.next, "stopped", why))
        if job.seconds >= limits.notebook_s:  # the notebook's own limit: the rest is not run
            why = f"not run: the notebook used up its {limits.notebook_s:.0f} s."
            job.records += [self._stopped(job, i, "too_slow", why) for i in range(run.next + 1, n)]
            return None
        return run.next + 1 if run.next + 1 < n else None

    def grade(self, jobs: list[Job], done=lambda job: None) -> None:
        """Grade every job, `workers` at a time; `done(job)` is called as each finishes (its result is kept)."""
        waiting = [(job, 0) for job in jobs]
        while waiting or self.running:
            while waiting and len(self.running) < self.workers:
                job, start = waiting.pop(0)
                self.start(job, start)
            timeout = max(0.0, min(r.deadline for r in self.running.values()) - time.monotonic())
            sentinels = {r.process.sentinel: fd for fd, r in self.running.items() if r.sentinel}
            ready, _, _ = select.select(list(self.running) + list(sentinels), [], [], timeout)
            for fd, by_sentinel in [(sentinels.get(fd, fd), fd in sentinels) for fd in ready]:
                run = self.running.get(fd)
                if run is not None and (not self.read(run) or not run.process.is_alive()):
                    self._drain(run)
                    self._finish(fd, False, waiting, done)
                elif run is not None and by_sentinel:  # a spawned worker closed its end of the sentinel's pipe
                    run.sentinel = False  # (close_other_pipes) and lives on: its own pipe's end tells instead
            for fd in [fd for fd, r in self.running.items() if time.monotonic() > r.deadline]:
                self._finish(fd, True, waiting, done)

    def _drain(self, run: _Running) -> None:
        """After the worker ended: read what is left in its pipe."""
        while not run.bad and select.select([run.fd], [], [], 0)[0] and self.read(run):
            pass

    def _finish(self, fd: int, timed_out: bool, waiting: list, done) -> None:
        run = self.running.pop(fd)
        if not timed_out and not run.ended and not run.bad:  # its pipe closed before its last message: it is
            run.process.join(1.0)  # dying, and how (a signal?) is known once it is reaped
        code = None if timed_out or run.process.is_alive() else run.process.exitcode  # before end() kills it
        self.end(run)  # a worker dies of signal N as -N, or as 128 + N where its namespace's first process did
        again = self.after(run, timed_out, -code if code is not None and code < 0 else
                           code - 128 if code is not None and code > 128 else 0)
        if again is None:
            done(run.job)
        else:
            waiting.insert(0, (run.job, again))


def _kill(process) -> None:
    """Kill a worker and its process group (it called setsid), then reap it."""
    for kill in (os.killpg, os.kill):
        with contextlib.suppress(OSError):
            kill(process.pid, signal.SIGKILL)
    process.join(10)


def grade_jobs(jobs: list[Job], limits: Limits, workers: int, hidden: list[Path], done=lambda job: None,
               sandbox: str = "none") -> None:
    """Grade every job in fresh workers; nothing is left running when it returns or is interrupted."""
    grader = Grader(limits, workers, hidden, lessons_in([job.data or b"" for job in jobs]), sandbox)
    lib, was = libc(), None
    if lib is not None:  # not dumpable while grading: where a worker sees the machine's /proc, no code of a
        was = lib.prctl(PR_GET_DUMPABLE, 0, 0, 0, 0)  # submission can reopen this process's pipes through it
        lib.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    try:
        grader.grade(jobs, done)
    finally:
        grader.close()
        if lib is not None and was == 1:
            lib.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)
