"""Which notebook variables a student's function reads, told from the function object alone.

A function typed into a notebook cell sees the notebook's variables as its globals, so a student who
forgets to use an argument silently picks up the notebook's `V`, `T` or `walk.n_heads`. The function's
bytecode says which globals it loads (LOAD_GLOBAL, then maybe .attribute), and `fn.__globals__` (or
its closure) holds their values. Nothing of the student's is called: only tensors' shapes, ints and
list lengths are read, and an attribute only when it is stored on the object, or a property of a
class of this package (helpers.*), e.g. `walk.n_heads`.

`say(source, label, case_sizes, broken, params, sizes)` gives one line naming the notebook variable
whose size is one that broke (a shape, an error's sizes), or, with `broken` empty, the data variables
the function reads at all; None when it reads none.
"""

from __future__ import annotations

import dis
import inspect
import re
import types

import numpy as np
import torch

_LOADS = ("LOAD_GLOBAL", "LOAD_NAME", "LOAD_DEREF")
_ATTRS = ("LOAD_ATTR", "LOAD_METHOD")
_SHAPE = torch.Tensor.shape.__get__


def code_objects(code: types.CodeType):
    """A function's code and the code of every function, lambda or comprehension written inside it."""
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from code_objects(const)


def functions(obj) -> list[types.FunctionType]:
    """The plain functions whose code says what `obj` reads: itself, or a class's (a module's) own methods."""
    if isinstance(obj, types.MethodType):
        obj = obj.__func__
    if isinstance(obj, types.FunctionType):
        return [obj]
    cls = obj if isinstance(obj, type) else type(obj)
    if isinstance(obj, (type, torch.nn.Module)) and cls.__module__ != "torch.nn.modules.module":
        return [v for v in vars(cls).values() if isinstance(v, types.FunctionType)]
    return []


def _data(value):
    """(kind, size) for a tensor, array, int or list; None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return "int", value
    if isinstance(value, torch.Tensor):
        return "tensor", tuple(_SHAPE(value))
    if isinstance(value, np.ndarray):
        return "tensor", tuple(value.shape)
    if type(value) in (list, tuple) and value:
        return "list", len(value)
    return None


def _attribute(value, name: str):
    """value.name when it is stored on value, or a property of a helpers class; else None (nothing else runs)."""
    if isinstance(value, (types.ModuleType, type)) or callable(value):
        return None
    found = inspect.getattr_static(value, name, None)
    if isinstance(found, property):
        fget = found.fget
        if not (type(value).__module__.startswith("helpers.") and getattr(fget, "__module__", "").startswith("helpers.")):
            return None
        try:
            return fget(value)
        except Exception:  # a property of ours that does not apply here
            return None
    return found


def reads(obj) -> list[tuple[str, object]]:
    """(name as written, value) of each notebook variable the function loads that holds data."""
    found: dict[str, object] = {}
    for fn in functions(obj):
        cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
        local = set(fn.__code__.co_varnames)
        for code in code_objects(fn.__code__):
            steps = list(dis.get_instructions(code))
            for i, step in enumerate(steps):
                if step.opname not in _LOADS or not isinstance(step.argval, str):
                    continue
                name = step.argval
                if step.opname == "LOAD_DEREF":
                    if name not in cells or name in local:
                        continue
                    try:
                        value = cells[name].cell_contents
                    except ValueError:
                        continue
                elif name in fn.__globals__:
                    value = fn.__globals__[name]
                else:
                    continue
                if i + 1 < len(steps) and steps[i + 1].opname in _ATTRS and _data(value) is None:
                    attr = steps[i + 1].argval
                    name, value = f"{name}.{attr}", _attribute(value, attr)
                kind = _data(value)
                if kind is not None and (step.opname != "LOAD_DEREF" or kind[0] == "tensor"):
                    found.setdefault(name, value)  # a closure's ints are an enclosing function's switches
    return list(found.items())


def _show(kind: str, size) -> str:
    if kind == "tensor":
        return "[" + " × ".join(str(s) for s in size) + "]"
    return f"(= {size})" if kind == "int" else f"({size} items)"


def _sizes(kind: str, size) -> set[int]:
    return set(size) if kind == "tensor" else {size}


def say(source, case_args: tuple, broken: set[int], params: list[str], sizes: str) -> str | None:
    """The line naming the notebook variable behind a broken size (or, broken empty, the ones read)."""
    used = [(name, *_data(value)) for name, value in reads(source)]
    if not used:
        return None
    own = set()
    for a in case_args:
        d = _data(a)
        if d is not None:
            own |= _sizes(*d)
        elif isinstance(a, dict):
            own |= {v for v in a.values() if isinstance(v, int)}
    foreign = {s for s in broken if s not in own and s > 1}
    if broken:
        hits = [u for u in used if _sizes(u[1], u[2]) & foreign and _sizes(u[1], u[2]) - own]
        if not hits:
            return None
        used = hits
    name, kind, size = used[0]
    argument = dict(zip(params, case_args)).get(name.split(".")[-1])
    arg = _data(argument) if argument is not None else None
    if arg is not None and arg[0] == kind:
        return (f"your function uses the notebook's `{name}` {_show(kind, size)}, not its argument "
                f"`{name.split('.')[-1]}` {_show(*arg)}: use the argument, and compute every size from the inputs "
                f"({sizes}).")
    what = ", ".join(f"`{n}` {_show(k, s)}" for n, k, s in used[:3])
    if isinstance(source, (type, torch.nn.Module)):
        return (f"your class uses the notebook's {what}: a layer must work from what it was built with (dim, heads: "
                f"keep them as self.heads …) and from x ({sizes}).")
    return (f"your function uses the notebook's {what}, not something of its own inputs: a function must work from "
            f"its arguments alone, so compute this from them ({sizes}).")


def _params(source) -> list[str]:
    fns = functions(source)
    code = next((f.__code__ for f in fns if f.__code__.co_name == "forward"), None)
    code = code or (fns[0].__code__ if len(fns) == 1 else None)
    names = list(code.co_varnames[:code.co_argcount]) if code else []
    return names[1:] if names[:1] == ["self"] else names


def told(source, args: tuple, err, value, expected, code: str, sizes: str, broken_only: bool = False) -> str | None:
    """A line naming the notebook variable the function reads, when its size is one that broke (or, for
    an answer no slip explains and unless broken_only, when it reads one at all); None when it reads none."""
    if not callable(source):
        return None
    if err is not None:
        text = str(err).splitlines()[0] if str(err) else ""
        broken = {int(s) for s in re.findall(r"\d+", text)}
    elif isinstance(value, np.ndarray) and isinstance(expected, np.ndarray):
        broken = set(value.shape) - set(expected.shape) if value.shape != expected.shape else set()
    elif isinstance(value, tuple) and isinstance(expected, tuple):
        broken = {v for v, e in zip(value, expected) if isinstance(v, int) and v != e}
    else:
        broken = set()
    params = _params(source)
    told = say(source, args, broken, params, sizes) if broken else None
    if told is None and not broken_only and (err is None or code == "raised"):
        told = say(source, args, set(), params, sizes)
    return told
