"""Running a student's function where nothing it does can reach the notebook: a forked child process.

`run_cases(fn, inputs, seconds)` calls fn on each input in a child (os.fork, Linux and macOS) and
returns one sandbox.Outcome per input. In the child, whatever the function changes (math.sqrt,
torch, helpers), exits (os._exit), loops (even inside `except BaseException`) or raises
(GeneratorExit) stays there: the parent kills it at the time limit, reads only plain data back
and never unpickles anything. What the function changed is named (integrity.changes), so the
check can refuse the answer. Where there is no fork (Windows), the function runs in this process
as before (sandbox.run_student: exit() and a soft time limit are caught), and integrity.restore
puts back what it changed; os._exit and a loop that swallows every exception are then not
contained there.
"""

from __future__ import annotations

import marshal
import os
import select
import signal
import struct
import sys
import time
import warnings
from functools import lru_cache

import numpy as np
import torch

from . import integrity, sandbox

GRACE_S = 0.5  # after the time limit, how long the parent waits before it kills the child
_MAX_ITEMS = 100_000  # elements of a list/dict answer read back (beyond: "too large to read")
_HEADER = struct.Struct("<Q")
CAN_FORK = hasattr(os, "fork")


# --- answers and errors as plain data (marshal: no code runs when they are read) ----------------------
def freeze(value, depth: int = 0):
    """A marshal-able copy of an answer: tensors and arrays as bytes, containers item by item."""
    kind = type(value)
    if value is None or value is Ellipsis or kind in (bool, int, float, complex, str, bytes):
        return ("v", value)
    if depth > 20:
        return ("x", kind.__name__, "too deeply nested to read")
    if isinstance(value, torch.Tensor):
        return _freeze_tensor(value)
    if isinstance(value, (np.ndarray, np.generic)) and np.asarray(value).dtype != object:
        array = np.array(value, copy=True, order="C")  # (ascontiguousarray would make a 0-d array 1-d)
        return ("a", array.dtype.str, array.shape, array.tobytes(), isinstance(value, np.generic))
    if isinstance(value, (list, tuple)) and len(value) <= _MAX_ITEMS:
        return ("l" if isinstance(value, list) else "u", [freeze(v, depth + 1) for v in value])
    if isinstance(value, dict) and len(value) <= _MAX_ITEMS:
        return ("d", [(freeze(k, depth + 1), freeze(v, depth + 1)) for k, v in list(value.items())])
    return ("x", kind.__name__, _short_repr(value))


def _freeze_tensor(t: torch.Tensor):
    with torch._C.DisableTorchFunction():  # a subclass's own __torch_function__ does not run here
        try:
            plain = torch.Tensor.detach(t).to("cpu")
            keep = plain.dtype
            if plain.dtype == torch.bfloat16:
                plain = plain.to(torch.float32)  # numpy has no bfloat16; the dtype is kept by name
            array = np.array(plain.numpy(), copy=True, order="C")
        except Exception:  # meta, sparse or otherwise unreadable tensors
            return ("x", type(t).__name__, "a tensor whose numbers cannot be read")
    return ("t", str(keep).removeprefix("torch."), array.dtype.str, array.shape, array.tobytes())


def _short_repr(value) -> str:
    try:
        return repr(value)[:80]
    except Exception:
        return object.__repr__(value)


class Foreign:
    """Stands in for an answer of a type that does not travel (a function, a module …): readers see
    its type's name and its repr, which is all they report."""

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return self.text


@lru_cache(maxsize=None)
def _stand_in(name: str, base: type) -> type:
    """A class named like the student's (readers print type(answer).__name__), cached by name."""
    return type(name, (base,), {})


def thaw(frozen):
    """The answer back from its frozen form."""
    tag = frozen[0]
    if tag == "v":
        return frozen[1]
    if tag == "t":
        _, dtype, array_dtype, shape, data = frozen
        array = np.frombuffer(data, dtype=np.dtype(array_dtype)).reshape(shape).copy()
        return torch.from_numpy(array).to(getattr(torch, dtype))
    if tag == "a":
        _, dtype, shape, data, scalar = frozen
        array = np.frombuffer(data, dtype=np.dtype(dtype)).reshape(shape).copy()
        return array[()] if scalar else array
    if tag in ("l", "u"):
        items = [thaw(v) for v in frozen[1]]
        return items if tag == "l" else tuple(items)
    if tag == "d":
        return {thaw(k): thaw(v) for k, v in frozen[1]}
    return _stand_in(frozen[1], Foreign)(frozen[2])


def freeze_error(err: BaseException):
    args = tuple(a for a in err.args if type(a) in (str, int, float, bool))
    return (type(err).__module__, type(err).__qualname__, args if len(args) == len(err.args) else (str(err),))


def thaw_error(frozen) -> BaseException:
    """The student's exception, of its own class when that is a library one (so it compares equal
    to the same slip in the catalogue), else of a stand-in class with its name."""
    module, qualname, args = frozen
    cls = sys.modules.get(module) if module == "builtins" or module.split(".")[0] in ("torch", "numpy") else None
    for part in qualname.split(".") if cls is not None else ():
        cls = getattr(cls, part, None)
    if not (isinstance(cls, type) and issubclass(cls, BaseException)):
        cls = _stand_in(qualname.rsplit(".", 1)[-1], Exception)
    try:
        err = cls.__new__(cls)
        err.args = tuple(args)
        str(err)
        return err
    except Exception:
        return _stand_in(qualname.rsplit(".", 1)[-1], Exception)(*args)


# --- the child -------------------------------------------------------------------------------------------
def _record(outcome: sandbox.Outcome, echo: sandbox.Echo, patched: list[str]) -> bytes:
    data = {"answer": freeze(outcome.answer) if outcome.error is None else ("v", None),
            "error": freeze_error(outcome.error) if outcome.error is not None else None,
            "problem": outcome.problem, "attempted": outcome.attempted, "echo": echo.text(), "patched": patched}
    body = marshal.dumps(data)
    return _HEADER.pack(len(body)) + body


def _child(fn, inputs: list[tuple], seconds: float, out: int, before: integrity.Snapshot) -> None:
    """Run fn on every input, send one record per input; never return (os._exit). `before`: the state
    the function starts from (taken by the parent just before the fork): what differs after it is its doing."""
    try:
        torch.set_num_threads(1)  # the parent's OpenMP threads do not exist here: one thread cannot wait on them
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # Stop in the notebook ends the child too
        deadline, echo = time.monotonic() + seconds, sandbox.Echo()  # one time limit, one echo for all inputs
        for i, args in enumerate(inputs):
            outcome = sandbox.run_student(fn, args, echo, max(0.01, deadline - time.monotonic()))
            if outcome.code == "too_slow":
                outcome = sandbox.Outcome(problem=sandbox.too_slow(seconds), code="too_slow")
            patched = integrity.changes(before)
            os.write(out, _record(outcome, echo, patched))
            if patched or outcome.problem:
                break
            if time.monotonic() > deadline and i + 1 < len(inputs):  # the time ran out between two inputs:
                slow = sandbox.Outcome(problem=sandbox.too_slow(seconds), code="too_slow")  # say so, not "ended"
                os.write(out, _record(slow, echo, []))
                break
    except BaseException:
        pass
    finally:
        os._exit(0)


# --- the parent ------------------------------------------------------------------------------------------
def _read_records(fd: int, deadline: float, expected: int) -> tuple[list[dict], str | None]:
    """Records until the child ends or all `expected` are in; (records, None), or (records, why it ended early).
    Not until the pipe closes: a process the function forked holds the pipe open (it was 10 s, the time limit)."""
    buffer, records = b"", []
    while len(records) < expected:
        left = deadline - time.monotonic()
        if left <= 0:
            return records, "slow"
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            continue
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return records, None
        buffer += chunk
        while len(buffer) >= _HEADER.size and len(buffer) >= _HEADER.size + _HEADER.unpack_from(buffer)[0]:
            size = _HEADER.unpack_from(buffer)[0]
            records.append(marshal.loads(buffer[_HEADER.size:_HEADER.size + size]))
            buffer = buffer[_HEADER.size + size:]
    return records, None


def _outcome(record: dict) -> sandbox.Outcome:
    if record["patched"]:
        return sandbox.Outcome(patched=record["patched"])
    error = thaw_error(record["error"]) if record["error"] else None
    return sandbox.Outcome(answer=thaw(record["answer"]), error=error, problem=record["problem"],
                           attempted=record["attempted"])


def _ended(status: int) -> str:
    if os.WIFSIGNALED(status):  # called only when the parent did not kill it
        return (f"your function crashed the Python process running it ({signal.Signals(os.WTERMSIG(status)).name}); "
                f"the notebook is fine: check the function on a small input.")
    return ("your function ended the Python process running it (os._exit, or a crash) before it returned; "
            "return the answer instead (the notebook is fine).")


def run_cases(fn, inputs: list[tuple], seconds: float) -> tuple[list[sandbox.Outcome], str]:
    """(one Outcome per input, in order, and what the function printed, cut to the echo limit). An input the function
    never finished (time limit, exit, crash) ends the list with the Outcome that says so."""
    if not CAN_FORK:
        return _run_here(fn, inputs, seconds)
    # The snapshot is taken here, not in the child: reading every watched module's names after the fork
    # touches thousands of objects the child shares with the parent, and each touched page is copied.
    # In the child it took 113 ms of a 130 ms check of lesson 01 (cProfile); here it takes a few ms.
    before = integrity.Snapshot()
    read_fd, write_fd = os.pipe()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # "fork() of a multi-threaded process": handled
        pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        _child(fn, inputs, seconds, write_fd, before)
    os.close(write_fd)
    status, stopped, records, why = None, False, [], None
    try:
        records, why = _read_records(read_fd, time.monotonic() + seconds + GRACE_S, len(inputs))
    except KeyboardInterrupt:
        records, why, stopped = [], "stopped", True
    finally:
        os.close(read_fd)
        if why is not None or stopped:
            os.kill(pid, signal.SIGKILL)
        status = os.waitpid(pid, 0)[1]
    outcomes = [_outcome(r) for r in records]
    printed = records[-1]["echo"] if records else ""  # each record holds all that was printed so far
    if len(outcomes) < len(inputs) and not (outcomes and (outcomes[-1].problem or outcomes[-1].patched)):
        if why == "slow":
            outcomes.append(sandbox.Outcome(problem=sandbox.too_slow(seconds), code="too_slow"))
        elif why == "stopped":
            outcomes.append(sandbox.Outcome(problem=sandbox.STOPPED, code="stopped"))
        else:
            outcomes.append(sandbox.Outcome(problem=_ended(status), code="exited"))
    return outcomes, printed


def _run_here(fn, inputs: list[tuple], seconds: float) -> tuple[list[sandbox.Outcome], str]:
    """Without fork: in this process, with what the function changed put back after each call."""
    outcomes, echo, deadline = [], sandbox.Echo(), time.monotonic() + seconds
    before = integrity.Snapshot()
    for args in inputs:
        outcome = sandbox.run_student(fn, args, echo, max(0.01, deadline - time.monotonic()))
        patched = integrity.changes(before)
        if patched:
            integrity.restore(before)
            outcome = sandbox.Outcome(patched=patched)
        outcomes.append(outcome)
        if outcome.problem or outcome.patched:
            break
    return outcomes, echo.text()
