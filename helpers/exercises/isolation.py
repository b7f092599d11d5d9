"""Running a student's function in the kernel's own process, the same way on Linux, macOS and Windows.

`run_cases(fn, inputs, seconds)` calls fn on each input and returns one sandbox.Outcome per input:
- the function gets copies of the inputs (the caller's own copies: grading computes the reference
  on private copies first); afterwards each copy is compared with a pristine one, and an argument
  changed in place is named (Outcome.changed: "Q"), since in the notebook it would be the notebook's
  own tensor that changed;
- what the function replaced in math, torch, numpy or helpers (integrity.py) is put back at once and
  named (Outcome.patched), so the next check and the notebook run with the originals;
- a notebook variable the function rebinds (`global T`), or a notebook tensor it reads and edits in
  place, is put back and named too;
- a time limit (sandbox.py: a repeating alarm on Linux and macOS, a timer thread elsewhere) stops an
  endless loop, even one inside `except BaseException`, where Python can interrupt it.
There is no child process: nothing is forked (fork is unsafe on macOS once torch has started its
threads). So, as anywhere in Python, a function that calls os._exit() or crashes the interpreter
(a segfault in a C extension) ends the kernel, and a loop inside one long C call (a huge matmul)
runs until that call returns. exit() and sys.exit() are caught (sandbox.run_student).
"""

from __future__ import annotations

import inspect
import time

import numpy as np
import torch

from . import globals_used, integrity, sandbox
from .answers import as_float64


# --- inputs changed in place ------------------------------------------------------------------------
def _same_value(a, b) -> bool:
    """Is a (after the call) still b (a pristine copy)? Tensors by dtype, shape and numbers (NaN = NaN)."""
    if isinstance(b, torch.Tensor):
        if not isinstance(a, torch.Tensor) or a.dtype != b.dtype or tuple(a.shape) != tuple(b.shape):
            return False
        x, y = as_float64(a), as_float64(b)
        return bool(np.array_equal(x, y, equal_nan=True))
    if isinstance(b, torch.nn.Module):
        return True  # the student's own layer (the capstone), not an input
    if isinstance(b, dict):
        return isinstance(a, dict) and a.keys() == b.keys() and all(_same_value(a[k], b[k]) for k in b)
    if isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(_same_value(x, y) for x, y in zip(a, b))
    try:
        return bool(a == b)
    except Exception:  # an object without a plain ==: nothing to compare
        return True


def parameter_names(fn, count: int) -> list[str]:
    """The names the student gave the function's parameters (forward's for a module), else 'argument i'."""
    target = fn.forward if isinstance(fn, torch.nn.Module) else fn
    try:
        names = [p.name for p in inspect.signature(target).parameters.values()
                 if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        names = []
    return [names[i] if i < len(names) else f"argument {i + 1}" for i in range(count)]


def changed_inputs(given: tuple, pristine: tuple, names: list[str]) -> list[str]:
    """The names of the arguments the call changed in place."""
    return [name for name, a, b in zip(names, given, pristine) if not _same_value(a, b)]


# --- the notebook's variables -----------------------------------------------------------------------
class NotebookVariables:
    """The globals of the student's function (the notebook's, for a function typed in a cell): which
    names are bound to what, and copies of the tensors the function reads, to put back after a call."""

    def __init__(self, fn):
        source = type(fn) if isinstance(fn, torch.nn.Module) else fn
        spaces = {id(f.__globals__): f.__globals__ for f in globals_used.functions(source)}
        self.spaces = [(space, dict(space)) for space in spaces.values()]
        self.tensors = [(name, value, value.detach().clone()) for name, value in _read_tensors(source)]

    def put_back(self) -> list[str]:
        """Undo every rebinding and in-place edit; the names that were changed."""
        changed = []
        for space, before in self.spaces:
            for name in set(space) | set(before):
                if name not in before:
                    del space[name]
                elif space.get(name, before) is not before[name]:
                    space[name] = before[name]
                else:
                    continue
                if not (name.startswith("__") and name.endswith("__")):  # Python's own (a warning writes
                    changed.append(name)                                    # __warningregistry__), not the student's
        for name, tensor, kept in self.tensors:
            if not _same_value(tensor, kept):
                with torch.no_grad():
                    tensor.copy_(kept)
                changed.append(name)
        return sorted(set(changed))


def _read_tensors(source) -> list[tuple[str, torch.Tensor]]:
    """The notebook tensors (not attributes of objects) that the function loads."""
    try:
        return [(n, v) for n, v in globals_used.reads(source) if "." not in n and isinstance(v, torch.Tensor)]
    except Exception:  # code globals_used cannot read (a builtin, a C function): nothing to keep
        return []


# --- running ------------------------------------------------------------------------------------------
def run_cases(fn, inputs: list[tuple], seconds: float) -> tuple[list[sandbox.Outcome], str]:
    """(one Outcome per input, in order, and what the function printed, cut to the echo limit). `inputs`
    are the student's own copies. The list ends early at an input that gave no answer to read (time
    limit, exit(), Stop) or on which the function patched a library; an in-place edit is recorded on
    the input's Outcome (`changed`) and the run goes on."""
    outcomes, echo, deadline = [], sandbox.Echo(), time.monotonic() + seconds
    before, names = integrity.Snapshot(), parameter_names(fn, max((len(a) for a in inputs), default=0))
    for args in inputs:
        if outcomes and time.monotonic() > deadline:  # the limit ran out between two inputs: say so
            outcomes.append(sandbox.Outcome(problem=sandbox.too_slow(seconds), code="too_slow"))
            break
        pristine, notebook = sandbox.clone_args(args), NotebookVariables(fn)
        outcome = sandbox.run_student(fn, args, echo, max(0.01, deadline - time.monotonic()))
        if outcome.code == "too_slow":  # said with the whole limit, not what was left of it for this input
            outcome.problem = sandbox.too_slow(seconds)
        patched = integrity.changes(before)
        if patched:
            integrity.restore(before)
            outcome = sandbox.Outcome(patched=patched)
        outcome.changed = changed_inputs(args, pristine, names) + [f"the notebook's `{n}`" for n in notebook.put_back()]
        outcome.changed_values = [a for name, a in zip(names, args) if name in outcome.changed]
        outcomes.append(outcome)
        if outcome.problem or outcome.patched:
            break
    return outcomes, echo.text()
