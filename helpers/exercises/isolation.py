"""Running a student's function in the kernel's own process, the same way on Linux, macOS and Windows.

`run_cases(fn, inputs, seconds)` calls fn on each input and returns one sandbox.Outcome per input:
- the function gets copies of the inputs (the caller's own copies: grading computes the reference
  on private copies first); afterwards each copy is compared with a pristine one, and an argument
  changed in place is named (Outcome.changed: "Q"), since in the notebook it would be the notebook's
  own tensor that changed;
- what the function replaced in math, numpy, torch or helpers is put back at once and named
  (Outcome.patched), so the next check and the notebook run with the originals. A check's expected
  answer is computed with these functions: replaced (`math.sqrt = lambda x: 1.0`, `torch.Tensor.softmax
  = …`), a wrong answer could earn a ✓. `Snapshot()` records, when the checks load, every public
  function and class of the watched modules and every function of the helpers package (its classes'
  methods too); `changes(snapshot)` names what now differs from it, or what was first seen already
  replaced by a function written in the notebook; `restore(snapshot)` puts back every original it
  knows. Before every check, grading puts back what a notebook cell changed at the top level. Not
  caught: a library function swapped for another library function before the checks first loaded;
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
import math
import sys
import time
import types

import numpy as np
import torch
import torch.nn.functional

from . import globals_used, sandbox
from .answers import as_float64


WATCHED_MODULES = (math, np, torch, torch.nn.functional, torch.linalg, torch.nn, torch.special)
WATCHED_CLASSES = (torch.Tensor, torch.nn.Module, torch.nn.Linear, torch.nn.LayerNorm)
PACKAGE = __name__.split(".")[0]  # "helpers"
_MISSING = object()


def _from_notebook(value) -> bool:
    """A function written in the notebook (or typed at a prompt), not in a library file."""
    code = getattr(value, "__code__", None)
    filename = code.co_filename if code is not None else ""
    return getattr(value, "__module__", None) == "__main__" or filename.startswith("<ipython-input") or \
        "ipykernel_" in filename


def _entries(owner) -> dict[str, object]:
    """The attributes of one module or class that the checks rely on."""
    ours = str(getattr(owner, "__name__", "")).split(".")[0] == PACKAGE or (
        isinstance(owner, type) and str(owner.__module__).split(".")[0] == PACKAGE)
    out = {}
    for name, value in list(vars(owner).items()):
        if name.startswith("__") and not isinstance(owner, type):
            continue  # a module's __name__, __doc__, __spec__ …
        if not ours and name.startswith("_") and not name.startswith("__"):
            continue  # a library's private names change on their own (caches, lazy imports)
        if callable(value) or isinstance(value, (staticmethod, classmethod, property)):
            out[name] = value  # constants are not watched: the checks bind their tolerances when they load
    return out


def _owners() -> list:
    """Every watched module and class: the library ones, the package's loaded modules, their classes."""
    modules = [m for n, m in list(sys.modules.items()) if n == PACKAGE or n.startswith(PACKAGE + ".")]
    classes = [v for m in modules for v in list(vars(m).values())
               if isinstance(v, type) and str(v.__module__).startswith(PACKAGE + ".")]
    return [*WATCHED_MODULES, *WATCHED_CLASSES, *[m for m in modules if m is not None], *classes]


def _label(owner, name: str) -> str:
    prefix = owner.__name__ if isinstance(owner, types.ModuleType) else f"{owner.__module__}.{owner.__qualname__}"
    return f"{prefix}.{name}".replace("builtins.", "")


class Snapshot:
    """The originals, by (owner, name), and the names each owner had when first seen: taken when the
    checks load, extended as modules load."""

    def __init__(self):
        self.originals: dict[tuple[int, str], tuple[object, str, object]] = {}
        self.names: dict[int, set[str]] = {}
        self.extend()

    def extend(self) -> None:
        """Record modules and classes loaded since; a value already from the notebook is not an original."""
        for owner in _owners():
            if id(owner) in self.names:
                continue
            self.names[id(owner)] = set(vars(owner))
            for name, value in _entries(owner).items():
                if not _from_notebook(value):
                    self.originals[id(owner), name] = (owner, name, value)


def _added(snapshot: Snapshot, owner, name: str, value) -> bool:
    """A name that appeared since the snapshot and hides the original: written in the notebook, or
    set on a class over a method it inherits (`torch.Tensor.softmax = …`)."""
    if id(owner) not in snapshot.names:  # loaded since: only code from the notebook gives itself away
        return _from_notebook(value)
    if name in snapshot.names.get(id(owner), ()) and (id(owner), name) not in snapshot.originals:
        return _from_notebook(value)  # present when first seen, but never an original
    if name in snapshot.names.get(id(owner), ()):
        return False
    inherited = isinstance(owner, type) and any(name in vars(base) for base in owner.__mro__[1:])
    return inherited or _from_notebook(value)


def _ours(owner) -> bool:
    name = owner.__module__ if isinstance(owner, type) else owner.__name__
    return str(name).split(".")[0] == PACKAGE


def _rewrapped(owner, name: str, value) -> bool:
    """A library's own new version of one of its functions: same name, defined in the same library,
    not in the notebook (`math.sqrt = torch.sqrt` or a lambda still count as patches)."""
    home = str(getattr(owner, "__module__", None) if isinstance(owner, type) else owner.__name__).split(".")[0]
    return (getattr(value, "__name__", None) == name and not _from_notebook(value)
            and str(getattr(value, "__module__", "")).split(".")[0] == home)


def _found(snapshot: Snapshot, cells_only: bool) -> tuple[list, list]:
    """(originals replaced or deleted, names added over them) as (owner, name) pairs. cells_only: in the
    package, count only values written in the notebook (a test's monkeypatch of a helper is its own)."""
    def counts(owner, name) -> bool:
        value = vars(owner).get(name)
        if not _ours(owner) and _rewrapped(owner, name, value):
            return False  # the library rebinding its own function (torch._dynamo wraps torch.manual_seed)
        return not (cells_only and _ours(owner)) or _from_notebook(value)
    replaced = [(owner, name) for owner, name, value in list(snapshot.originals.values())
                if vars(owner).get(name, _MISSING) is not value and counts(owner, name)]
    added = [(owner, name) for owner in _owners() for name, value in _entries(owner).items()
             if (id(owner), name) not in snapshot.originals and _added(snapshot, owner, name, value)]
    return replaced, added


def changes(snapshot: Snapshot, cells_only: bool = False) -> list[str]:
    """What a student's code changed: the names, e.g. ['math.sqrt', 'torch.Tensor.softmax']."""
    replaced, added = _found(snapshot, cells_only)
    return sorted({_label(owner, name) for owner, name in replaced + added})


def restore(snapshot: Snapshot, cells_only: bool = False) -> list[str]:
    """Put back every original and remove what hides one; return what could not be put back."""
    replaced, added = _found(snapshot, cells_only)
    for owner, name in replaced:
        setattr(owner, name, snapshot.originals[id(owner), name][2])
    for owner, name in added:
        if name not in snapshot.names.get(id(owner), ()):
            delattr(owner, name)
    return changes(snapshot, cells_only)


SNAPSHOT = Snapshot()  # taken when the checks first load, before any check runs a student's function


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
    before, names = Snapshot(), parameter_names(fn, max((len(a) for a in inputs), default=0))
    for args in inputs:
        if outcomes and time.monotonic() > deadline:  # the limit ran out between two inputs: say so
            outcomes.append(sandbox.Outcome(problem=sandbox.too_slow(seconds), code="too_slow"))
            break
        pristine, notebook = sandbox.clone_args(args), NotebookVariables(fn)
        outcome = sandbox.run_student(fn, args, echo, max(0.01, deadline - time.monotonic()))
        if outcome.code == "too_slow":  # said with the whole limit, not what was left of it for this input
            outcome.problem = sandbox.too_slow(seconds)
        patched = changes(before)
        if patched:
            restore(before)
            outcome = sandbox.Outcome(patched=patched)
        outcome.changed = changed_inputs(args, pristine, names) + [f"the notebook's `{n}`" for n in notebook.put_back()]
        outcome.changed_values = [a for name, a in zip(names, args) if name in outcome.changed]
        outcomes.append(outcome)
        if outcome.problem or outcome.patched:
            break
    return outcomes, echo.text()
