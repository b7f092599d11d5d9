"""Running a student's function so that nothing it does can stop the notebook or fool the check.

`run_student(fn, args)` returns an Outcome: the answer, or the exception it raised, or a one-line
reason it gave no answer (exit(), sys.exit(), an endless loop, the Stop button, `...`). While it
runs:
- exit()/quit() raise SystemExit instead of shutting the kernel down;
- a timer stops it after TIME_LIMIT_S: StudentTooSlow, a BaseException, so `except Exception`
  misses it. On Linux and macOS (main thread) it is an alarm signal that fires again every quarter
  second and, from its second firing, makes every line of the student's code raise it again (a trace
  function), so even `while True: try: … except BaseException: pass` ends. Elsewhere (Windows, a
  thread) a timer thread raises it in the function's thread every quarter second; a loop that
  swallows every exception then runs on, and so does one long C call on every OS;
- what it prints is kept (the first ECHO_LIMIT characters), to be shown once, truncated.
`translate_error` turns a library error it raised into one line a student can act on.
"""

from __future__ import annotations

import contextlib
import copy
import ctypes
import re
import signal
import sys
import threading
from dataclasses import dataclass, field
from typing import Callable

import torch

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


def _can_signal() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


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
    if _can_signal():
        return _with_alarm(fn, args, seconds, fired)
    if hasattr(ctypes, "pythonapi"):
        return _with_timer_thread(fn, args, seconds, fired)
    return fn(*args)


def run_student(fn: Callable, args: tuple, echo: Echo, seconds: float) -> Outcome:
    """Call fn(*args) with exit() disarmed, a time limit and stdout/stderr kept in `echo`."""
    fired: list = []
    try:
        with no_exit(), contextlib.redirect_stdout(echo), contextlib.redirect_stderr(echo):
            got = _call_with_limit(fn, args, seconds, fired)
    except StudentTooSlow:
        fired.append(True)
        got = None
    except KeyboardInterrupt:
        return Outcome(problem=STOPPED, code="stopped")
    except SystemExit:
        return Outcome(problem="your function called exit() or sys.exit(), which would stop the notebook; "
                               "return the answer instead.", code="exited")
    except BaseException as err:  # the student's bug (GeneratorExit too), reported instead of stopping the notebook
        return Outcome(error=err)
    if fired:  # also when the student's code caught the alarm and carried on
        return Outcome(problem=too_slow(seconds), code="too_slow")
    if got is None or got is Ellipsis:
        return Outcome(attempted=False)
    return Outcome(answer=got)


def too_slow(seconds: float) -> str:
    return f"your function ran for more than {seconds:g} s (an endless loop?) and was stopped."


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


# --- errors raised by the student's code ------------------------------------------------------------
_ERRORS = [  # (pattern, the engine's code, the line)
    (r"mat1 and mat2 shapes cannot be multiplied \((\d+)x(\d+) and (\d+)x(\d+)\)", "matmul_shapes",
     "a matrix product of [{0} × {1}] and [{2} × {3}] does not fit (the inner sizes must be equal): a transpose "
     "(.T) missing, or one too many?"),
    (r"size of tensor a \((\d+)\) must match the size of tensor b \((\d+)\)", "size_mismatch",
     "two tensors of sizes {0} and {1} met on one axis: check which axes you transposed, split or repeated (.T "
     "reverses every axis of a 3-D or 4-D tensor: use .transpose(-2, -1)), and take each size from this input's "
     "shape ({sizes})."),
    (r"view size is not compatible with input tensor's size and stride", "view_after_transpose",
     ".view() after a transpose fails: use .reshape(...) (or .contiguous().view(...))."),
    (r"shape '\[(.*)\]' is invalid for input of size (\d+)", "reshape_size",
     "reshape to [{0}] cannot hold the input's {1} numbers: compute each size from the input's shape."),
    (r"Dimension out of range \(expected to be in range of \[(-?\d+), (-?\d+)\], but got (-?\d+)\)",
     "axis_out_of_range", "axis {2} does not exist here (valid: {0} .. {1}): check how many axes this tensor has."),
    (r"expected (?:m1 and m2 to have the same dtype|scalar type \w+ but found \w+)", "dtype_mixed",
     "float32 and float64 mixed in one product: keep the inputs' dtype (no .double())."),
    (r"masked_fill_? only supports boolean masks", "mask_not_bool",
     "the mask must be boolean: e.g. torch.ones(T, T, dtype=torch.bool).triu(1)."),
    (r"tuple of ints,\s*but got float|must be tuple of ints, but found element of type float", "float_size",
     "a size is a float (D / n_heads gives 4.0): use whole-number division, D // n_heads."),
    (r'"bitwise_xor\w*" not implemented for|unsupported operand type\(s\) for \^: \'(?:int|float)\' and \'float\'',
     "xor_not_power", "^ is XOR in Python, not a power: write d ** 0.5 or math.sqrt(d) (and divide by the whole "
     "root: Q @ K.T / d ** 0.5)."),
    (r"only integers, slices .* are valid indices \(got float\)|indices must be integers or slices, not float",
     "float_index", "an index is a float (h / group gives 1.0): use whole-number division, h // group, for an index."),
    (r"'Tensor' object is not callable", "tensor_called",
     "a tensor was called like a function: use @ or .softmax(dim=-1), not t(...)."),
    (r"unsupported operand type\(s\) for [^:]*: 'module' and|and 'module'", "helpers_module",
     "H is the helpers module (import helpers as H), not a number of heads: name the head count n_heads "
     "and read it from the input, e.g. n_heads = Q.shape[0]."),
    (r"unsupported operand type\(s\) for divmod\(\): 'Tensor'", "divmod_tensor",
     "divmod() does not take a tensor: turn the index into a number first, divmod(int(index), n_heads)."),
    (r"(\w+)\(\): argument '\w+' \(position 1\) must be Tensor, not (int|float)", "torch_fn_on_number",
     "torch.{0}() takes a tensor, not a plain {1}: use math.{0}(d) or d ** 0.5 for a number."),
    (r"'dict' object has no attribute '(\w+)'", "dict_attribute",
     "config is a dict: read config['{0}'], not config.{0}."),
    (r"missing (\d+) required positional argument", "extra_parameter",
     "your function asks for {0} argument(s) the check does not pass: keep the parameters the exercise's cell gives it."),
    (r"name '(\w+)' is not defined", "name_not_defined",
     "your function uses {0}, which is not defined in it: compute it from the inputs ({sizes})."),
]


def translate_error(err: BaseException, label: str, sizes: str = "e.g. T = x.shape[0]") -> tuple[str, str]:
    """(one line, the engine's code) for an error no catalogued mistake raises: a known message
    explained ("error.<what>"), else the raw line ("raised")."""
    text = str(err).splitlines()[0] if str(err) else ""
    for pattern, code, says in _ERRORS:
        found = re.search(pattern, text)
        if found:
            line = f"{says.format(*found.groups(), sizes=sizes)} (inputs: {label}; raised {type(err).__name__})"
            return line, f"error.{code}"
    line = f"your function raised {type(err).__name__}: {text[:200]} (inputs: {label})".replace(":  (", " (")
    return line, "raised"
