"""Running a student's function in the kernel's own process, so that nothing it does can stop the notebook
or fool the check, the same way on Linux, macOS and Windows.

`run_cases(fn, inputs, seconds)` calls fn on copies of each input (grading computes the reference on
private copies first) and returns one Outcome per input: the answer, the exception it raised, or a
one-line reason it gave no answer (exit(), an endless loop, the Stop button, `...`). Around each call:
- an argument changed in place is named (Outcome.changed), since in the notebook it would be the
  notebook's own tensor; a notebook variable the function rebinds (`global T`) is put back, and named when it
  held or now holds a tensor or an array (a counter of the student's own is not), and a notebook tensor it
  edits in place is put back and named too (the function's globals are read from its bytecode, `reads`);
- what the function replaced in math, numpy, torch or helpers is put back at once and named
  (Outcome.patched): replaced (`math.sqrt = lambda x: 1.0`), a wrong answer could earn a ✓. `Snapshot()`
  records every public function and class of the watched modules and every function of the helpers
  package; `changes(snapshot)` names what differs from it, `restore(snapshot)` puts the originals back.
  A replaced builtin (`builtins.len = …`) is put back the moment the function returns, before any other
  code looks one up, and named the same way. Not caught: a library function swapped for another before
  the checks first loaded;
- exit()/quit() raise SystemExit instead of shutting the kernel down, input() raises EOFError instead of
  waiting for typing, and what it prints is kept (the first ECHO_LIMIT characters), to be shown once;
- a timer stops it after TIME_LIMIT_S: StudentTooSlow, a BaseException, so `except Exception` misses it.
  On Linux and macOS (main thread) it is an alarm signal that fires again every quarter second and, from
  its second firing, makes every line of the student's code raise it again (a trace function), so even
  `while True: try: … except BaseException: pass` ends. Elsewhere (Windows, a thread) a timer thread
  raises it in the function's thread every quarter second; a loop that swallows every exception then
  runs on. (One trace function alone cannot do it everywhere: CPython switches off a tracer that raises.)
There is no child process: nothing is forked (fork is unsafe on macOS once torch has started its
threads). So, as anywhere in Python, a function that calls os._exit() or crashes the interpreter
(a segfault in a C extension) ends the kernel, and a loop inside one long C call (a huge matmul)
runs until that call returns.
"""

from __future__ import annotations

import builtins
import contextlib
import copy
import ctypes
import dis
import inspect
import math
import signal
import sys
import threading
import time
import types
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import torch
import torch.nn.functional

from .verdict import as_float64

try:
    import resource  # the process's peak memory (too_slow's line); Windows has none
except ImportError:
    resource = None

TIME_LIMIT_S = 10.0  # read when a check starts, before any student code runs
ECHO_LIMIT = 1500  # characters of the student's printed output shown under the verdict
_REPEAT_S = 0.25  # the alarm fires again this often until the student's code lets go


class StudentTooSlow(BaseException):
    """Raised by the timer inside the student's code; BaseException so `except Exception` misses it."""


STOPPED = "stopped before your function finished (KeyboardInterrupt); run the cell again to check it."


@dataclass
class Outcome:
    answer: object = None
    error: BaseException | None = None  # what the student's code raised (translated by the grader)
    problem: str | None = None  # why there is no answer, in the student's words ("called exit() …")
    attempted: bool = True  # False when the function returned None or `...` (the stub)
    code: str | None = None  # the problem's engine code: "too_slow", "exited", "stopped"
    patched: list[str] | None = None  # what the function replaced in math, torch, numpy or helpers
    changed: list[str] = field(default_factory=list)  # the arguments (or notebook variables) it changed in place
    changed_values: list = field(default_factory=list, repr=False)  # those arguments themselves


class Echo:
    """A stand-in for stdout/stderr that keeps the first `limit` characters and counts the rest."""

    def __init__(self, limit: int = ECHO_LIMIT):
        self.limit, self.kept, self.dropped = limit, [], 0
        self._size = 0

    def write(self, text) -> int:
        text = str(text)
        room = self.limit - self._size
        if room > 0:
            self.kept.append(text[:room])
            self._size += min(room, len(text))
        self.dropped += max(0, len(text) - max(room, 0))
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    def text(self) -> str:
        """What the student's code printed, cut to the limit, with a note of what was left out."""
        shown = "".join(self.kept)
        if self.dropped:
            shown = shown.rstrip("\n") + f"\n[your function printed {self.dropped:,} more characters; not shown]\n"
        return shown


def _refuse_exit(*args, **kwargs):
    raise SystemExit("exit() called")


def _refuse_input(*args, **kwargs):
    raise EOFError("EOF when reading a line")  # what Python says where nobody can type: diagnosis names it


@contextlib.contextmanager
def no_input():
    """While the student's code runs, input() fails at once instead of waiting for typing until the time limit
    (a notebook has an input box: the wait read as "an endless loop?")."""
    before = builtins.input
    builtins.input = _refuse_input
    try:
        yield
    finally:
        builtins.input = before


@contextlib.contextmanager
def no_exit():
    """While the student's code runs, IPython's exit()/quit() raise SystemExit instead of
    shutting the kernel down (ipykernel stops its loop as soon as ask_exit is called)."""
    ipython = sys.modules.get("IPython")  # loaded in a notebook; plain Python: exit() already raises SystemExit
    shell = ipython.get_ipython() if ipython is not None and hasattr(ipython, "get_ipython") else None
    if shell is None:
        yield
        return
    shell.ask_exit = _refuse_exit  # an instance attribute hides the method for this call only
    try:
        yield
    finally:
        del shell.ask_exit


def _escalate(frame) -> None:
    """Make every line of the student's code (the interrupted frames, and any frame they call) raise
    StudentTooSlow, so that no `except` clause can keep a loop alive; ours (this file) is spared."""
    def raise_again(f, event, arg):
        if event == "line" and f.f_code.co_filename != __file__:  # raised at an "exception" event, an
            raise StudentTooSlow()  # except clause would catch it; at the handler's first line, none can
        return raise_again
    sys.settrace(raise_again)
    while frame is not None and frame.f_code.co_filename != __file__:
        frame.f_trace, frame.f_trace_lines = raise_again, True
        frame = frame.f_back


def _with_alarm(fn: Callable, args: tuple, seconds: float, fired: list):
    """fn(*args), stopped by a repeating SIGALRM (main thread of Linux or macOS)."""
    def alarm(signum, frame):
        if fired:  # the first StudentTooSlow was caught: from now on every line raises it
            _escalate(frame)
        fired.append(True)
        raise StudentTooSlow()

    old, tracer = signal.signal(signal.SIGALRM, alarm), sys.gettrace()  # a debugger's tracer is kept
    try:
        signal.setitimer(signal.ITIMER_REAL, seconds, _REPEAT_S)
        try:
            return fn(*args)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    finally:
        sys.settrace(tracer)  # first: signal.signal is Python code, which the trace would stop
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _with_timer_thread(fn: Callable, args: tuple, seconds: float, fired: list):
    """fn(*args), stopped by StudentTooSlow raised in this thread by a timer thread (where there are no
    alarm signals: Windows, or a check called from a thread), through the C API's PyThreadState_SetAsyncExc."""
    target, done = threading.get_ident(), threading.Event()
    set_async = ctypes.pythonapi.PyThreadState_SetAsyncExc

    def timer():
        if done.wait(seconds):
            return
        while not done.is_set():
            fired.append(True)
            set_async(ctypes.c_ulong(target), ctypes.py_object(StudentTooSlow))
            done.wait(_REPEAT_S)

    thread = threading.Thread(target=timer, daemon=True, name="student time limit")
    thread.start()
    try:
        return fn(*args)
    finally:
        done.set()
        thread.join()
        set_async(ctypes.c_ulong(target), None)  # one raised too late for the function is dropped


def _call_with_limit(fn: Callable, args: tuple, seconds: float, fired: list):
    """fn(*args), stopped after `seconds` where Python can interrupt it (see the module's docstring)."""
    if hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread():
        return _with_alarm(fn, args, seconds, fired)
    if hasattr(ctypes, "pythonapi"):
        return _with_timer_thread(fn, args, seconds, fired)
    return fn(*args)


def _builtins_kept(fn: Callable, replaced: list) -> Callable:
    """fn, which puts back every builtin it replaced or deleted as it returns or raises, and adds their names
    to `replaced`. Put back first: the code after it (the time limit's, redirect_stdout's) looks builtins up,
    so nothing here may call one before they are back (a dict's own methods and `is` are not builtins)."""
    kept = {name: value for name, value in vars(builtins).items() if name != "_"}  # `_`: a REPL's last value

    def call(*args):
        try:
            return fn(*args)
        finally:
            now = vars(builtins)
            changed = [name for name, value in kept.items() if now.get(name, _MISSING) is not value]
            for name in changed:
                now[name] = kept[name]
            replaced.extend(changed)

    return call


def run_student(fn: Callable, args: tuple, echo: Echo, seconds: float) -> Outcome:
    """Call fn(*args) with exit() and input() disarmed, a time limit, stdout/stderr kept in `echo` and builtins put
    back."""
    fired: list = []
    replaced: list = []
    try:
        with no_exit(), no_input(), contextlib.redirect_stdout(echo), contextlib.redirect_stderr(echo):
            got = _call_with_limit(_builtins_kept(fn, replaced), args, seconds, fired)
    except StudentTooSlow:
        fired.append(True)
        got = None
    except KeyboardInterrupt:
        return Outcome(problem=STOPPED, code="stopped")
    except SystemExit:
        return Outcome(problem="your function called exit() or sys.exit(), which would stop the notebook; "
                               "return the answer instead.", code="exited")
    except BaseException as err:  # the student's bug (GeneratorExit too), reported instead of stopping the notebook
        return Outcome(patched=[f"builtins.{n}" for n in sorted(replaced)]) if replaced else Outcome(error=_printable(err))
    if replaced:  # the function changed Python itself: its answer cannot be trusted to mean anything
        return Outcome(patched=[f"builtins.{name}" for name in sorted(replaced)])
    if fired:  # also when the student's code caught the alarm and carried on
        return Outcome(problem=too_slow(seconds), code="too_slow")
    if got is None or got is Ellipsis:
        return Outcome(attempted=False)
    return Outcome(answer=got)


class UnprintableError(Exception):
    """A student's exception whose message cannot be written: what the checks are given in its place."""


def _printable(err: BaseException) -> BaseException:
    """err, or, when its message or name cannot be written (its __str__ raises, a name of 100,000 letters),
    an UnprintableError that says so: every line about an error quotes both."""
    try:
        str(err), repr(err)
        if len(type(err).__name__) <= 200:
            return err
    except Exception:  # anything its __str__ raises
        pass
    name = type(err).__name__
    return UnprintableError(f"an exception whose message cannot be written (class {name[:40]!r}"
                            f"{'…' * (len(name) > 40)}: its __str__ raises, or its name is overlong)")


def too_slow(seconds: float, grew: int = 0) -> str:
    """The line for a function stopped at the time limit; `grew`: bytes the process's peak memory rose meanwhile,
    named when over 1 GB (a loop that keeps making tensors is slowed by memory, not only by its loop)."""
    if grew > 1 << 30:
        return (f"your function ran for more than {seconds:g} s while its memory grew by {grew / (1 << 30):.1f} GB, "
                f"and was stopped: does it keep every tensor it makes?")
    return f"your function ran for more than {seconds:g} s (an endless loop?) and was stopped."


def peak_memory() -> int:
    """This process's peak memory in bytes (0 where Python cannot tell: Windows has no `resource`)."""
    if resource is None:
        return 0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024  # macOS counts bytes, Linux kilobytes


def clone_args(args: tuple, dtype: torch.dtype | None = None) -> tuple:
    """Fresh copies of the arguments (tensors optionally in `dtype`), so no call sees another's changes:
    a dict or list the student edits in place is its own copy."""
    out = []
    for a in args:
        if isinstance(a, torch.Tensor):
            a = a.detach().clone()
            out.append(a.to(dtype) if dtype is not None and a.is_floating_point() else a)
        elif isinstance(a, torch.nn.Module):
            out.append(a)  # a module is the student's own object (the capstone's layer), not an input
        else:
            out.append(copy.deepcopy(a))
    return tuple(out)


# --- what the function patches, and the inputs it changes in place ----------------------------------
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
        if owner is torch and name == "Storage":
            continue  # torch.set_default_dtype rebinds it: a right answer may call that
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


# --- the notebook's variables the function reads, from its bytecode -------------------------------
_LOADS = ("LOAD_GLOBAL", "LOAD_NAME", "LOAD_DEREF")
_ATTRS = ("LOAD_ATTR", "LOAD_METHOD")
_SHAPE = torch.Tensor.shape.__get__  # read without running a student's tensor subclass


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


def data_of(value):
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
                if i + 1 < len(steps) and steps[i + 1].opname in _ATTRS and data_of(value) is None:
                    attr = steps[i + 1].argval
                    name, value = f"{name}.{attr}", _attribute(value, attr)
                kind = data_of(value)
                if kind is not None and (step.opname != "LOAD_DEREF" or kind[0] == "tensor"):
                    found.setdefault(name, value)  # a closure's ints are an enclosing function's switches
    return list(found.items())


class NotebookVariables:
    """The globals of the student's function (the notebook's, for a function typed in a cell): which
    names are bound to what, and copies of the tensors the function reads, to put back after a call."""

    def __init__(self, fn):
        source = type(fn) if isinstance(fn, torch.nn.Module) else fn
        spaces = {id(f.__globals__): f.__globals__ for f in functions(source)}
        self.spaces = [(space, dict(space)) for space in spaces.values()]
        self.tensors = [(name, value, value.detach().clone()) for name, value in _read_tensors(source)]

    def put_back(self) -> list[str]:
        """Undo every rebinding and in-place edit; the names that were changed."""
        changed = []
        for space, before in self.spaces:
            for name in set(space) | set(before):
                values = [space.get(name), before.get(name)]
                if name not in before:
                    del space[name]
                elif space.get(name, before) is not before[name]:
                    space[name] = before[name]
                else:
                    continue
                # named when data was rebound (a tensor, an array: what later cells compute with); a counter or a
                # log of the student's own (`global calls; calls += 1`) is put back without a word (sweep 27)
                if any(isinstance(v, (torch.Tensor, np.ndarray)) for v in values):
                    changed.append(name)
        for name, tensor, kept in self.tensors:
            if not _same_value(tensor, kept):
                with torch.no_grad():
                    tensor.copy_(kept)
                changed.append(name)
        return sorted(set(changed))


def _read_tensors(source) -> list[tuple[str, torch.Tensor]]:
    """The notebook tensors (not attributes of objects) that the function loads."""
    try:
        return [(n, v) for n, v in reads(source) if "." not in n and isinstance(v, torch.Tensor)]
    except Exception:  # code `reads` cannot read (a builtin, a C function): nothing to keep
        return []


# --- running ------------------------------------------------------------------------------------------
def run_cases(fn, inputs: list[tuple], seconds: float) -> tuple[list[Outcome], str]:
    """(one Outcome per input, in order, and what the function printed, cut to the echo limit). `inputs`
    are the student's own copies. The list ends early at an input that gave no answer to read (time
    limit, exit(), Stop) or on which the function patched a library; an in-place edit is recorded on
    the input's Outcome (`changed`) and the run goes on."""
    outcomes, echo, deadline, peak = [], Echo(), time.monotonic() + seconds, peak_memory()
    before, names = Snapshot(), parameter_names(fn, max((len(a) for a in inputs), default=0))
    for args in inputs:
        if outcomes and time.monotonic() > deadline:  # the limit ran out between two inputs: say so
            outcomes.append(Outcome(problem=too_slow(seconds, peak_memory() - peak), code="too_slow"))
            break
        pristine, notebook = clone_args(args), NotebookVariables(fn)
        outcome = run_student(fn, args, echo, max(0.01, deadline - time.monotonic()))
        if outcome.code == "too_slow":  # said with the whole limit, not what was left of it for this input
            outcome.problem = too_slow(seconds, peak_memory() - peak)
        patched = changes(before)
        if patched:
            restore(before)
        if patched or outcome.patched:
            outcome = Outcome(patched=sorted({*patched, *(outcome.patched or [])}))
        outcome.changed = [name for name, a, b in zip(names, args, pristine) if not _same_value(a, b)] + \
            [f"the notebook's `{n}`" for n in notebook.put_back()]
        outcome.changed_values = [a for name, a in zip(names, args) if name in outcome.changed]
        outcomes.append(outcome)
        if outcome.problem or outcome.patched:
            break
    return outcomes, echo.text()
