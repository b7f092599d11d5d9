"""The one verdict engine behind every exercise check of notebooks 01-06.

An Exercise holds the inputs to try (two or more sizes), the reference, and a catalogue of
Mistakes: small wrong variants of the reference, each with one line saying what went wrong and
what to do. `check(exercise, fn)` runs the student's function on each input (sandbox.py keeps
exit(), endless loops, Stop and floods of prints harmless), reads the answer as plain float64
numbers, and prints one verdict line:
- "✓ …" when the answer is right on every input;
- "✗ …" naming the catalogued mistake it matches (a raised error is matched too: a variant that
  raises the same error names it), else NaN, half precision, the shape, or, last, "numbers differ".
  A mistake is named when it explains the answers on every input (on the first failing one, the
  function is run on the rest too), or, said with the input it matches on, when it contradicts no
  input the student got right: slips that agree on one input (÷ d/2 and a fixed 8 at d = 16) differ;
- "… not attempted yet" when the function still returns None without printing ("✗ … printed
  something but returned None" when it printed).
The comparison uses functions and tolerances captured when this module loads, on copies the
student's code never sees: replacing torch.allclose, changing a constant or returning a tensor
subclass with its own __eq__ or __torch_function__ changes nothing.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np
import torch

from . import sandbox

ATOL = RTOL = 1e-4
NOT_ATTEMPTED = "not attempted yet"

# captured now: later changes to torch, numpy or this module (by a student's code) cannot reach them
_NO_TORCH_FUNCTION = torch._C.DisableTorchFunction
_DETACH, _TO, _NUMPY = torch.Tensor.detach, torch.Tensor.to, torch.Tensor.numpy
_ARRAY, _ALL, _ANY = np.array, np.ndarray.all, np.ndarray.any
_ABS, _SUB, _LE, _ISNAN, _ISFINITE = np.absolute, np.subtract, np.less_equal, np.isnan, np.isfinite
_AND, _OR, _MUL, _ADD, _EQ = np.logical_and, np.logical_or, np.multiply, np.add, np.equal
_HALF = (torch.float16, torch.bfloat16)


# --- reading an answer as plain numbers ---------------------------------------------------------
def as_float64(got) -> np.ndarray:
    """A plain float64 numpy copy of a tensor (any subclass, on any device, needing grad or not),
    an array or a (nested) list of numbers; raises TypeError/ValueError for anything else."""
    if isinstance(got, torch.Tensor):
        with _NO_TORCH_FUNCTION():
            plain = _TO(_DETACH(got), device="cpu", dtype=torch.float64)
            return _ARRAY(_NUMPY(plain), dtype=np.float64, copy=True)
    if isinstance(got, (str, bytes, dict, set)) or callable(got):
        raise TypeError(type(got).__name__)
    if isinstance(got, (list, tuple)) and any(isinstance(x, torch.Tensor) for x in got):
        got = [as_float64(x) for x in got]
    return _ARRAY(got, dtype=np.float64, copy=True).view(np.ndarray)


def read_tensor(got, args: tuple) -> tuple[np.ndarray | None, str | None]:
    """(float64 array, None) for a tensor, an array or a list of numbers; else (None, what to return)."""
    try:
        return as_float64(got), None
    except (TypeError, ValueError, RuntimeError):
        return None, f"expected a tensor, got {type(got).__name__}; return the result of the tensor maths."


def close(a: np.ndarray, b: np.ndarray, atol: float = ATOL, rtol: float = RTOL) -> bool:
    """Same shape and every number within atol + rtol·|b| (NaN equal to NaN), with captured functions.
    The tolerances are bound when this module loads: changing ATOL later does not loosen the check."""
    if not isinstance(a, np.ndarray) or not isinstance(b, np.ndarray) or a.shape != b.shape:
        return False
    nan_a, nan_b = _ISNAN(a), _ISNAN(b)
    with np.errstate(invalid="ignore"):
        within = _LE(_ABS(_SUB(a, b)), _ADD(atol, _MUL(rtol, _ABS(b))))
    with np.errstate(invalid="ignore"):  # inf - inf is NaN: equal infinities count through _EQ
        within = _OR(_OR(within, _EQ(a, b)), _AND(nan_a, nan_b))
    return bool(_ALL(within) and not _ANY(_AND(nan_a, ~nan_b)))


def same_tensor(a, b, args: tuple) -> bool:
    return close(a, b)


# --- the catalogue ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Mistake:
    """A wrong variant of the reference (same arguments; it may raise) and the line that names it."""

    says: str
    answer: Callable


@dataclass
class Exercise:
    """What a check needs: the inputs to try, the reference, the mistakes, and how to read answers."""

    name: str
    cases: Sequence[tuple[str, tuple]]  # (label such as "Q, K [5 × 16]", the student's arguments)
    reference: Callable
    mistakes: Sequence[Mistake] = ()
    read: Callable = read_tensor  # (raw answer, args) -> (value, None) or (None, what is wrong)
    same: Callable = same_tensor  # (value, value, args) -> bool
    right: Callable | None = None  # (value, expected value, args) -> bool, when more than one answer is right
    explain: Callable | None = None  # (value, expected, args) -> (last-resort line, is it a named diagnosis?)
    fixed: str = ("something is fixed to the first input's size; compute it from the input's shape.")
    praise: Callable | None = None  # (the student's values, one per input) -> the ✓ line
    show_case: bool = False  # add "(input: expected …, got …)" to a wrong answer (small answers only)
    answers: dict = field(default_factory=dict, repr=False)  # (input, mistake) -> its read answer, made once
    shape_hint: str = ""
    sizes: str = "e.g. T = x.shape[0]"  # how this exercise's function reads its sizes from its inputs
    exact_inputs: bool = False  # True: the reference and mistakes see the student's dtype, not float64
    tensor: bool = field(default=True)  # the answer is numbers to compare (NaN, half precision, shape)


def _same_error(a: BaseException, b: BaseException) -> bool:
    return type(a) is type(b) and str(a) == str(b)


# --- the verdict --------------------------------------------------------------------------------------
def _mistake_answer(ex: Exercise, n: int, m: int, args64: tuple):
    """The m-th mistake's answer on input n, read like the student's (None where it raises); kept."""
    if (n, m) not in ex.answers:
        try:
            wrong, problem = ex.read(ex.mistakes[m].answer(*sandbox.clone_args(args64)), args64)
        except Exception:  # a variant that raises on these inputs cannot match an answer
            wrong, problem = None, "raised"
        ex.answers[n, m] = None if problem else wrong
    return ex.answers[n, m]


def _fits(ex: Exercise, m: int, k: int, seen: tuple, args64: tuple) -> bool:
    """Does the m-th mistake explain what the student's function did on input k? `seen` is
    ("right", value), ("answer", value) or ("error", exception); a variant that is right there fits
    a right answer, and one that raises the same error fits an error."""
    kind, got = seen
    if kind == "error":
        try:
            ex.mistakes[m].answer(*sandbox.clone_args(ex.cases[k][1]))
        except Exception as theirs:
            return _same_error(got, theirs)
        return False
    wrong = _mistake_answer(ex, k, m, args64)
    if wrong is None:
        return False
    if ex.same(got, wrong, args64):
        return True
    expected = ex.answers[k, "reference"]
    return kind == "right" and (ex.right(wrong, expected, args64) if ex.right else ex.same(wrong, expected, args64))


def _named(ex: Exercise, n: int, seen: dict) -> str | None:
    """The first catalogued mistake that matches the student's wrong answer on input n and explains
    every other input the function ran on too (÷ d/2 and a fixed 8 agree when d = 16, not after).
    Failing that, one that matches on input n and contradicts no input the student got right, said
    with the input it matches on: two slips at once, or one the catalogue does not know."""
    others = [k for k in seen if k != n]
    fits = [m for m in range(len(ex.mistakes)) if _fits(ex, m, n, seen[n], _args64(ex, n))]
    for m in fits:
        if all(_fits(ex, m, k, seen[k], _args64(ex, k)) for k in others):
            return ex.mistakes[m].says
    for m in fits:
        if all(seen[k][0] != "right" or _fits(ex, m, k, seen[k], _args64(ex, k)) for k in others):
            wrong_on = [ex.cases[k][0] for k in others if seen[k][0] != "right"]
            return ex.mistakes[m].says.rstrip(".") + (f" (that matches your answer on {ex.cases[n][0]}; on "
                                                      f"{wrong_on[0]} something else differs too)." if wrong_on else ".")
    return None


def _args64(ex: Exercise, k: int) -> tuple:
    args = ex.cases[k][1]
    return args if ex.exact_inputs else sandbox.clone_args(args, torch.float64)


def _wrong_answer(ex: Exercise, n: int, got, value, expected, args64: tuple, seen: dict) -> tuple[str, bool]:
    """(what is wrong, named?) for a readable answer that is not right on input n."""
    says = _named(ex, n, seen)
    if says:
        return says, True
    if ex.tensor:
        if not _ALL(_ISFINITE(value)):
            return ("your answer contains NaN or inf (e.g. a softmax over a row that is all -inf, or 0 × inf); "
                    "check each step on a small input."), True
        if isinstance(got, torch.Tensor) and got.dtype in _HALF and close(value, expected, 5e-2, 5e-2):
            return (f"computed in half precision ({got.dtype}): the numbers are right to about 3 digits only; "
                    f"keep the inputs' float32 (drop .half() / .bfloat16())."), True
        if isinstance(got, (tuple, list)) and len(got) > 1 and value.shape[1:] == expected.shape:
            return (f"returned {len(got)} things (a {type(got).__name__}): return only the result, "
                    f"{list(expected.shape)}."), True
        if value.shape != expected.shape:
            return f"wrong shape {list(value.shape)}, expected {list(expected.shape)}. {ex.shape_hint}".rstrip(), False
    if ex.explain:
        return ex.explain(value, expected, args64)
    diff = float(np.abs(value - expected).max())
    return f"right shape but the numbers differ from the reference (largest difference {diff:.3g}).", False


def _error_verdict(ex: Exercise, n: int, err: Exception, label: str, seen: dict) -> tuple[str, bool]:
    """(line, named?) for an error: the mistake that raises the same error (and fits the other
    inputs), else a translation."""
    says = _named(ex, n, seen)
    if says:
        return says, True
    line = sandbox.translate_error(err, label, ex.sizes)
    return line, "raised" not in line.split("(inputs:")[0]


def _run(ex: Exercise, fn, n: int, echo: sandbox.Echo, seconds: float) -> sandbox.Outcome:
    if not callable(fn):
        return sandbox.Outcome(answer=fn, attempted=fn is not None and fn is not Ellipsis)
    with torch.no_grad():
        return sandbox.run_student(fn, sandbox.clone_args(ex.cases[n][1]), echo, seconds)


def _seen(ex: Exercise, outcome: sandbox.Outcome, n: int) -> tuple | None:
    """What the function did on input n, for _fits: ("right"|"answer", value), ("error", exc) or None."""
    if outcome.error is not None:
        return "error", outcome.error
    if outcome.problem or not outcome.attempted:
        return None
    value, problem = ex.read(outcome.answer, _args64(ex, n))
    if problem:
        return None
    expected = _reference(ex, n)
    right = ex.right(value, expected, _args64(ex, n)) if ex.right else ex.same(value, expected, _args64(ex, n))
    return ("right" if right else "answer"), value


def _reference(ex: Exercise, n: int):
    if (n, "reference") not in ex.answers:
        args64 = _args64(ex, n)
        ex.answers[n, "reference"] = ex.read(ex.reference(*sandbox.clone_args(args64)), args64)[0]
    return ex.answers[n, "reference"]


def grade(ex: Exercise, fn, plain_answer_ok: bool = False, echo: sandbox.Echo | None = None) -> tuple[str, bool]:
    """(verdict line, passed) for the student's `fn` on every input of `ex`."""
    seconds = float(sandbox.TIME_LIMIT_S)  # read before any student code runs
    echo, values, seen = echo or sandbox.Echo(), [], {}
    if not callable(fn) and not plain_answer_ok:
        return f"✗ {ex.name}: expected a function, got {type(fn).__name__}; pass the function itself, not its result.", False
    for n, (label, args) in enumerate(ex.cases):
        args64 = _args64(ex, n)
        outcome = _run(ex, fn, n, echo, seconds)
        if not outcome.attempted:
            if callable(fn) and echo.text():
                return (f"✗ {ex.name}: your function printed something but returned None: end it with return "
                        f"(print shows a value, return hands it to the check)."), False
            what = "forward" if isinstance(fn, torch.nn.Module) else "the function"  # a module: its forward is the stub
            return f"… {ex.name}: {NOT_ATTEMPTED} ({what} returned None). The notebook goes on with the reference.", False
        if outcome.problem:
            return f"✗ {ex.name}: {outcome.problem}", False
        expected = _reference(ex, n)
        if outcome.error is None:
            value, problem = ex.read(outcome.answer, args64)
            if problem:
                return f"✗ {ex.name}: {problem}", False
            if (ex.right(value, expected, args64) if ex.right else ex.same(value, expected, args64)):
                values.append(value)
                seen[n] = ("right", value)
                continue
        seen[n] = _seen(ex, outcome, n)
        deadline = time.monotonic() + seconds  # the other inputs share one more time limit, not one each
        for k in range(n + 1, len(ex.cases)):  # the other inputs tell apart slips that agree on this one
            left = deadline - time.monotonic()
            if left <= 0:
                break
            other = _seen(ex, _run(ex, fn, k, sandbox.Echo(), left), k)
            if other is not None:
                seen[k] = other
        if outcome.error is not None:
            wrong, named = _error_verdict(ex, n, outcome.error, label, seen)
        else:
            wrong, named = _wrong_answer(ex, n, outcome.answer, value, expected, args64, seen)
            if ex.show_case:
                wrong = wrong.rstrip(".") + f" ({label}: expected {_show(expected)}, got {_show(value)})."
        if n > 0 and not named:
            wrong = wrong.rstrip(".") + f". It was right on the first input ({ex.cases[0][0]}) but not on {label}: {ex.fixed}"
        return f"✗ {ex.name}: {wrong}", False
    if ex.praise:
        return ex.praise(values), True
    labels = ", ".join(label for label, _ in ex.cases)
    return f"✓ {ex.name}: correct on {len(ex.cases)} inputs of different sizes ({labels}).", True


def _show(value) -> str:
    return f"{value:.0%}" if isinstance(value, float) else str(value)


def check(ex: Exercise, fn, plain_answer_ok: bool = False) -> bool:
    """Print what the student's code printed (truncated), then the verdict line; return passed."""
    echo = sandbox.Echo()
    verdict, passed = grade(ex, fn, plain_answer_ok, echo)
    printed = echo.text()
    if printed:
        print(printed, end="" if printed.endswith("\n") else "\n")
    print(verdict)
    return passed
