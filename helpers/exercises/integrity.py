"""What a student's code may not change: the functions of math, numpy, torch and helpers the checks use.

A check's expected answer is computed with these functions. If a notebook cell replaced one
(`math.sqrt = lambda x: 1.0`, `torch.Tensor.softmax = …`, `helpers.exercises.grading.close = …`),
a wrong answer could earn a ✓ and the next check could call the reference wrong. So:
- `Snapshot()` records, when the checks load, every public function and class of the watched
  modules and every function of the helpers package (its classes' methods too);
- `changes(snapshot)` names what now differs from it, or what was first seen already replaced
  by a function written in the notebook (defined in `__main__` or an IPython cell);
- `restore(snapshot, names)` puts back every original it knows.
The checks run the student's function in a child process (isolation.py), where a change dies with
the child; `changes` then says what it changed, and the check refuses the answer. Before every
check, the parent puts back what a notebook cell changed at the top level.

Not caught: a library function swapped for another library function before the checks first
loaded (there is no earlier record to compare with).
"""

from __future__ import annotations

import math
import sys
import types

import numpy as np
import torch
import torch.nn.functional

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
