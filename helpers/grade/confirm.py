"""One exercise graded by a worker that runs no student code: the student's code runs in a runner process
(runner.py), and a ✓ counts only when the worker's own run of the pristine check agrees.

The runner sends its verdict (the named mistake, what the function printed). Any verdict but "right" is
kept as it is: a submission that lies there only loses its own points. A "right" is checked again here,
in the worker, where none of the student's code ever ran: the same check, with the student's function
replaced by a stand-in that hands each input to the runner and reads the answer back as plain data
(plain.py, at most MAX_ANSWER bytes). So a forged message, a patched check or a function that misbehaves
only in the runner gets no ✓: the check that counts reads answers, never the student's objects.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal

import torch

from . import plain, runner
from .messages import Gone, Unreadable, receive, send

MAX_ANSWER = 8 << 20  # bytes of one message from the runner (a verdict, or one answer as data)


class Lost(Exception):
    """The runner cannot answer any more (it ended, or an answer was cut off by the time limit)."""


class Runner:
    """The worker's end of a runner: checks and calls sent as data, verdicts and answers read back as data."""

    def __init__(self, prepared, taken: list, closes: list[int]):
        self.pid, self.to, self.back = runner.start(prepared, taken, closes)
        self.broken = False  # True: it stopped answering in step (a fresh one is needed)

    def verdict(self, i: int) -> dict:
        """The runner's verdict on exercise i; Gone when it ended before sending one (or cannot be written to)."""
        self.broken = True
        try:
            send(self.to, {"check": i})
        except OSError:
            raise Gone("the runner ended") from None
        said = receive(self.back, MAX_ANSWER)
        if said.get("kind") != "verdict":
            raise Unreadable("a message that is not the verdict asked for")
        self.broken = False
        return said

    def call(self, target, args: tuple, kwargs: dict, weights=None, training: bool = False):
        """target(*args, **kwargs) in the runner; its answer as a value (or an error raised here)."""
        if self.broken:
            raise Lost("the runner stopped answering")
        self.broken = True  # until the whole answer is read: an alarm in between leaves the pipe mid-message
        try:
            send(self.to, {"target": target, "args": plain.encode(args), "kwargs": plain.encode(kwargs),
                           "weights": None if weights is None else plain.encode(weights), "training": training})
            reply = receive(self.back, MAX_ANSWER)
            if reply.get("kind") != "answer":
                raise Unreadable("a message that is not the answer asked for")
        except (Gone, Unreadable, OSError) as err:
            raise Lost(f"the runner's answer could not be read ({err})") from None
        self.broken = False
        if "module" in reply:
            return RemoteModule(self, reply)
        if "raised" in reply:
            raise RuntimeError(f"{str(reply.get('raised'))[:60]}: {str(reply.get('message'))[:500]}")
        return plain.decode(reply.get("answer"))

    def stop(self) -> None:
        for fd in (self.to, self.back):
            with contextlib.suppress(OSError):
                os.close(fd)
        with contextlib.suppress(OSError):
            os.kill(self.pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            os.waitpid(self.pid, 0)


class RemoteFunction:
    """Stands for the student's function or class in the worker's check: a call runs it in the runner."""

    def __init__(self, runner_: Runner):
        self.runner = runner_

    def __call__(self, *args, **kwargs):
        return self.runner.call("defined", args, kwargs)


class RemoteModule(torch.nn.Module):
    """Stands for a module the student's class built in the runner: its linear layers, of the sizes the
    runner reported (the check fills them with the trained weights), and a forward that runs the student's
    forward in the runner with those weights."""

    def __init__(self, runner_: Runner, reply: dict):
        super().__init__()
        self.runner, self.handle, self.sent = runner_, reply.get("module"), False
        linears = reply.get("linears") if isinstance(reply.get("linears"), dict) else {}
        for name, sizes in list(linears.items())[:20]:
            if _linear(name, sizes):
                setattr(self, name, torch.nn.Linear(sizes[0], sizes[1], bias=sizes[2]))

    def forward(self, *args, **kwargs):
        weights = None if self.sent else {name: dict(m.state_dict()) for name, m in self.named_children()}
        self.sent = True
        return self.runner.call(self.handle, args, kwargs, weights, self.training)


def _linear(name, sizes) -> bool:
    return isinstance(name, str) and name.isidentifier() and not name.startswith("_") \
        and not hasattr(torch.nn.Module, name) and isinstance(sizes, list) and len(sizes) == 3 \
        and all(type(s) is int and 0 < s <= 1 << 16 for s in sizes[:2]) and isinstance(sizes[2], bool)


def stand_in(runner_: Runner, defined) -> object:
    """What the worker's check is given in place of the student's definition."""
    if isinstance(defined, dict) and defined.get("callable") is True:
        return RemoteFunction(runner_)
    try:
        return plain.decode(defined.get("value")) if isinstance(defined, dict) else plain.Opaque("nothing")
    except plain.Unreadable:
        return plain.Opaque("unreadable")


def check_here(prepared, i: int, runner_: Runner, defined):
    """The pristine check of exercise i, run in the worker on the stand-in; its Verdict (or None when it raised)."""
    ex = prepared.lesson.exercises[i][1]
    namespace = dict(prepared.namespaces[i])
    namespace[ex.name] = stand_in(runner_, defined)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            return eval(ex.test, namespace)
    except Exception:
        return None


def grade(prepared, i: int, runner_: Runner, as_record) -> dict:
    """Exercise i's record: the runner's verdict, or, when it says right and the worker's check does not,
    the worker's. `as_record(ex, fields)` reads the runner's fields as a plain record. Gone when the runner
    ended before its verdict (the grader then says the submission ended its process)."""
    ex = prepared.lesson.exercises[i][1]
    try:
        said = runner_.verdict(i)
    except Unreadable as err:  # (the runner stays marked broken: the next exercise gets a fresh one)
        return as_record(ex, {"outcome": "stopped", "code": f"{ex.key}.exited", "line": (
            f"✗ {ex.title}: not graded: the submission wrote into the grader's pipe (its process sent {err}).")})
    record = as_record(ex, said)
    if record["outcome"] != "right":
        return record
    here = check_here(prepared, i, runner_, said.get("defined"))
    if here is not None and here.outcome == "right":
        return record
    runner_.broken = True  # what it sends next may be out of step: the next exercise gets a fresh runner
    return as_record(ex, unconfirmed(ex, here, record))


def unconfirmed(ex, here, record: dict) -> dict:
    """The worker's verdict on an answer the runner called right (what it printed is the runner's)."""
    why = ("The check run in the submission's own process said right; run again where none of its code runs, on "
           "the answers it gave, it does not: the submission changed the check or what the grader reads, or its "
           "function does not give the same answer twice.")
    if here is None:
        return {"outcome": "raised", "code": f"{ex.key}.raised", "line": f"✗ {ex.title}: not confirmed. {why}",
                "printed": record.get("printed", "")}
    return {"outcome": here.outcome, "code": here.code, "line": f"{here.line.rstrip()} ({why})",
            "printed": record.get("printed", ""), "sure": here.sure}
