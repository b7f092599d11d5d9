"""Running a student's function safely and comparing its answer with the reference.

call_student turns whatever the student's code does (raise, exit(), sys.exit(), loop forever,
return None) into an answer or a one-line message, so a check never stops the notebook or the
kernel. check_cases runs a function on several Cases (inputs of different sizes, the right
answer, the answers of known mistakes) and prints one line: ✓, "not attempted", or what is wrong.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from dataclasses import dataclass, field
from typing import Callable

import torch

ATOL = 1e-4
NOT_ATTEMPTED = "not attempted yet"
TIME_LIMIT_S = 10.0  # a student's function that runs longer is stopped (an endless loop?)


# --- running the student's code safely ----------------------------------------------------------
def _refuse_exit(*args, **kwargs):
    raise SystemExit("exit() called")


@contextlib.contextmanager
def no_exit():
    """While the student's code runs, IPython's exit()/quit() raise SystemExit instead of
    shutting the kernel down (ipykernel stops its loop as soon as ask_exit is called)."""
    try:
        from IPython import get_ipython
        shell = get_ipython()
    except ImportError:  # plain Python: exit() already raises SystemExit
        shell = None
    if shell is None:
        yield
        return
    shell.ask_exit = _refuse_exit  # an instance attribute hides the method for this call only
    try:
        yield
    finally:
        del shell.ask_exit


class _TooSlow(Exception):
    pass


def _alarm(signum, frame):
    raise _TooSlow()


@contextlib.contextmanager
def time_limit(seconds: float):
    """Stop the student's code after `seconds` where the platform allows it (a SIGALRM timer, main
    thread only); elsewhere (Windows, threads) the code simply runs to its end."""
    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def call_student(name: str, fn, *args, plain_answer_ok: bool = False):
    """Call the student's function; return (answer, None) or (None, one-line message).

    Exceptions, exit() and sys.exit() become the message, so a bug never stops the notebook.
    With plain_answer_ok, a value (e.g. (layer, head)) is taken as the answer itself."""
    if not callable(fn):
        if not plain_answer_ok:
            return None, f"✗ {name}: expected a function, got {type(fn).__name__}; pass the function itself, not its result."
        got = fn
    else:
        try:
            with no_exit(), time_limit(TIME_LIMIT_S):
                got = fn(*args)
        except _TooSlow:
            return None, (f"✗ {name}: your function ran for more than {TIME_LIMIT_S:g} s (an endless loop?) "
                          f"and was stopped.")
        except SystemExit:
            return None, (f"✗ {name}: your function called exit() or sys.exit(), which would stop the notebook; "
                          f"return the answer instead.")
        except Exception as err:  # the student's bug, reported instead of stopping the notebook
            first = str(err).splitlines()[0] if str(err) else ""
            return None, f"✗ {name}: your function raised {type(err).__name__}: {first}".rstrip(": ")
    if got is None or got is Ellipsis:
        what = "forward" if isinstance(fn, torch.nn.Module) else "the function"  # a class: its forward is the stub
        return None, f"… {name}: {NOT_ATTEMPTED} ({what} returned None). The notebook goes on with the reference."
    return got, None


def run_student(name: str, fn: Callable, *args):
    """call_student for functions of tensors: inputs cloned, no gradients, the answer as a float tensor."""
    with torch.no_grad():
        got, problem = call_student(name, fn, *[a.clone() if isinstance(a, torch.Tensor) else a for a in args])
    if problem:
        return None, problem
    return as_tensor(name, got)


def as_tensor(name: str, got):
    """(tensor, None) for a tensor, array or list of numbers; (None, message) for anything else."""
    if isinstance(got, (str, bytes, dict, set)):
        return None, f"✗ {name}: expected a tensor, got {type(got).__name__}; return the result of the tensor maths."
    try:
        return torch.as_tensor(got, dtype=torch.float32), None
    except (TypeError, ValueError, RuntimeError):
        return None, f"✗ {name}: expected a tensor, got {type(got).__name__}; return the result of the tensor maths."


# --- comparing with the reference ------------------------------------------------------------------
@dataclass
class Case:
    """One input for the student's function, the right answer, and the answers of known mistakes."""

    args: tuple
    expected: torch.Tensor
    mistakes: dict[str, torch.Tensor] = field(default_factory=dict)
    label: str = ""  # e.g. "Q [5 × 16]": said when this input goes wrong


def _close(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.shape == b.shape and torch.allclose(a, b, atol=ATOL, rtol=1e-4, equal_nan=True)


def diagnose(got: torch.Tensor, case: Case, shape_hint: str = "") -> str | None:
    """None when got is right; else what is wrong: a named mistake, NaN, the shape, or the difference."""
    if _close(got, case.expected):
        return None
    for message, wrong in case.mistakes.items():  # before the NaN test: some mistakes make NaN
        if _close(got, wrong):
            return message
    if not torch.isfinite(got).all():
        return ("your answer contains NaN or inf (e.g. a softmax over a row that is all -inf, or 0 × inf); "
                "check each step on a small input.")
    if got.shape != case.expected.shape:
        return f"wrong shape {list(got.shape)}, expected {list(case.expected.shape)}. {shape_hint}".rstrip()
    diff = (got - case.expected).abs().max().item()
    return f"right shape but the numbers differ from the reference (largest difference {diff:.3g})."


def check_cases(name: str, fn: Callable, cases: list[Case], shape_hint: str = "") -> None:
    """Run fn on every case and print one line: ✓, not attempted, or the first thing that is wrong."""
    for n, case in enumerate(cases):
        got, problem = run_student(name, fn, *case.args)
        wrong = None if problem else diagnose(got, case, shape_hint)
        verdict = problem or (wrong and f"✗ {name}: {wrong}")
        if verdict:
            named = got is not None and any(_close(got, w) for w in case.mistakes.values())
            if n > 0 and not named and NOT_ATTEMPTED not in verdict:
                verdict = verdict.rstrip(".") + (f". It was right on the first input ({cases[0].label}) but not on {case.label}: "
                            f"something is fixed to the first input's size; compute it from the input's shape.")
            print(verdict)
            return
    print(f"✓ {name}: correct on {len(cases)} inputs of different sizes ({', '.join(c.label for c in cases)}).")
