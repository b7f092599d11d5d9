"""What a check is and what it returns, as data, and how an answer is read and compared as plain numbers.

An Exercise holds the inputs a check tries, the reference and its catalogue of Mistakes (wrong variants of
the reference, each with a stable code and the line that names it). Every check returns a Verdict: the
exercise's key, the outcome, a stable code and the line it printed. A catalogued mistake's code is
"<exercise>.<mistake code>" (e.g. attention_weights.sqrt_of_T); the engine's own diagnoses use the codes
below. Codes do not change when the wording does. `assert_passed` turns a Verdict into an autograder's
test (nbgrader and otter-grader count a test that raises as failed):

    H.assert_passed(H.check_attention_weights(attention_weights))

Answers are compared with functions and tolerances captured when this module loads, on copies the
student's code never sees: replacing torch.allclose, changing a constant or returning a tensor
subclass with its own __eq__ or __torch_function__ changes nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np
import torch

ATOL = RTOL = 1e-4

# captured now: later changes to torch, numpy or this module (by a student's code) cannot reach them
_NO_TORCH_FUNCTION = torch._C.DisableTorchFunction
_DETACH, _TO, _NUMPY = torch.Tensor.detach, torch.Tensor.to, torch.Tensor.numpy
_ARRAY, _ALL, _ANY = np.array, np.all, np.any  # np.all, not ndarray.all: a 0-d answer gives a numpy scalar
_ABS, _SUB, _LE, _ISNAN, _ISFINITE = np.absolute, np.subtract, np.less_equal, np.isnan, np.isfinite
_AND, _OR, _MUL, _ADD, _EQ = np.logical_and, np.logical_or, np.multiply, np.add, np.equal
_HALF = (torch.float16, torch.bfloat16)


# --- reading an answer as plain numbers ---------------------------------------------------------
def as_float64(got) -> np.ndarray:
    """A plain float64 numpy copy of a tensor (any subclass, on any device, needing grad or not),
    an array or a (nested) list of numbers; raises TypeError/ValueError for anything else. Types are read with
    type(), which an object cannot fake (isinstance believes a `__class__ = torch.Tensor` written in a class)."""
    if _is_tensor(got):
        if got.is_complex() or got.is_meta:  # the cast would drop the imaginary part, or there is nothing to read
            raise TypeError("complex" if got.is_complex() else "meta")
        with _NO_TORCH_FUNCTION():
            plain = _TO(_DETACH(got), device="cpu", dtype=torch.float64)
            return _ARRAY(_NUMPY(plain), dtype=np.float64, copy=True)
    if not issubclass(type(got), (list, tuple, np.ndarray, np.generic, int, float)):  # an object with __array__ too
        raise TypeError(type(got).__name__)
    if issubclass(type(got), (list, tuple)) and any(_is_tensor(x) for x in got):
        got = [as_float64(x) for x in got]
    return _ARRAY(got, dtype=np.float64, copy=True).view(np.ndarray)


def _is_tensor(value) -> bool:
    return issubclass(type(value), torch.Tensor)


def read_tensor(got, args: tuple) -> tuple[np.ndarray | None, str | None]:
    """(float64 array, None) for a tensor, an array or a list of numbers; else (None, what to return)."""
    try:
        return as_float64(got), None
    except (TypeError, ValueError, RuntimeError) as err:
        if _is_tensor(got) and str(err) in ("complex", "meta"):
            return None, ("your tensor holds complex numbers; the answer is real: drop the conversion to a complex "
                          "dtype." if str(err) == "complex" else "your tensor is on the 'meta' device, which holds "
                          "shapes but no numbers: compute the answer from the inputs (no device='meta').")
        if _is_tensor(got):  # a 20000 × 20000 tensor past the memory limit, a lying subclass
            return None, (f"your tensor of shape {list(got.shape)} could not be read as numbers "
                          f"({type(err).__name__}): check its shape and dtype on a small input.")
        if issubclass(type(got), (tuple, list)) and len(got) > 1 and _is_tensor(got[0]):
            return None, (f"returned {len(got)} things (a {type(got).__name__}, its first a tensor of shape "
                          f"{list(got[0].shape)}): return only the result, one tensor.")
        return None, f"expected a tensor, got {type(got).__name__}; return the result of the tensor maths."


def close(a: np.ndarray, b: np.ndarray, atol: float = ATOL, rtol: float = RTOL) -> bool:
    """Same shape and every number within atol + rtol·|b| (NaN equal to NaN), with captured functions.
    The tolerances are bound when this module loads: changing ATOL later does not loosen the check."""
    if not isinstance(a, np.ndarray) or not isinstance(b, np.ndarray) or a.shape != b.shape:
        return False
    nan_a, nan_b = _ISNAN(a), _ISNAN(b)
    with np.errstate(invalid="ignore"):  # an infinite b is matched only by the same infinity (below)
        within = _AND(_LE(_ABS(_SUB(a, b)), _ADD(atol, _MUL(rtol, _ABS(b)))), _ISFINITE(b))
    with np.errstate(invalid="ignore"):  # inf - inf is NaN: equal infinities count through _EQ
        within = _OR(_OR(within, _EQ(a, b)), _AND(nan_a, nan_b))
    return bool(_ALL(within) and not _ANY(_AND(nan_a, ~nan_b)))


def same_tensor(a, b, args: tuple) -> bool:
    return close(a, b)


OUTCOMES = ("right", "mistake", "generic", "not_attempted", "raised", "too_slow", "stopped", "patched")

# The engine's codes, which any exercise can get: code -> (outcome, what it means).
ENGINE_CODES: dict[str, tuple[str, str]] = {
    "right": ("right", "right on every input"),
    "not_attempted": ("not_attempted", "the function still returns None (the stub); the notebook goes on"),
    "printed_not_returned": ("mistake", "printed the answer but returned None: end with return"),
    "no_return": ("mistake", "the function computes something but returns None: its return is missing"),
    "not_a_function": ("mistake", "passed a value where the check wants the function itself"),
    "unreadable": ("mistake", "returned something of another kind than the exercise asks for"),
    "nan_or_inf": ("mistake", "the answer holds NaN or inf"),
    "nan_everywhere": ("mistake", "every number of the answer is NaN"),
    "half_precision": ("mistake", "computed in float16/bfloat16: right to about 3 digits only"),
    "integer_dtype": ("mistake", "a tensor of whole numbers (an integer or bool dtype) where the answer has fractions"),
    "returned_several": ("mistake", "returned a tuple or list holding the result and more"),
    "not_stacked": ("mistake", "right numbers, but a tuple/list of per-head tensors: torch.stack them"),
    "explained": ("mistake", "a last-resort diagnosis fitted from the answer"),
    "fitted_divisor": ("mistake", "the weights are a softmax of the scores divided by another number than √d"),
    "fitted_factor": ("mistake", "every number is the same multiple of the right one"),
    "float_size": ("mistake", "the right number as a float where a whole number is asked for (/ instead of //)"),
    "notebook_global": ("mistake", "the function reads a notebook variable instead of (a size of) its arguments"),
    "same_for_every_input": ("mistake", "the same wrong answer on every input: numbers written in, not read from the arguments"),
    "number_written_in": ("mistake", "one number of the answer is the same on every input where it should follow them"),
    "written_number": ("mistake", "a size of a wrong-shaped answer is a number written in the function (12 heads)"),
    "axes_permuted": ("mistake", "the right numbers with the axes in another order (a transpose missing or extra)"),
    "wrong_layout": ("mistake", "exactly the right numbers in another layout (a reshape where a transpose belongs)"),
    "part_of_answer": ("mistake", "one slice of the right answer (one row, one head) instead of all of it"),
    "reduced": ("mistake", "the right answer summed or averaged over one axis"),
    "constant_offset": ("mistake", "the right answer plus a constant"),
    "normalised_wrong_axis": ("mistake", "weights that sum to 1 over another axis than the keys"),
    "mask_pattern": ("mistake", "later words seen, or the wrong triangle or the diagonal masked"),
    "heads_equal": ("mistake", "every head of the answer is the same"),
    "head_blocks": ("mistake", "some heads right, others not: the line says which"),
    "wrong_shape": ("generic", "the shape differs from the expected one"),
    "numbers_differ": ("generic", "right shape, the numbers differ, no known slip explains them"),
    "raised": ("raised", "the function raised an error no catalogued slip explains"),
    "error.matmul_shapes": ("mistake", "a matrix product whose inner sizes differ"),
    "error.size_mismatch": ("mistake", "two tensors of different sizes met in an element-wise operation"),
    "error.index_past_end": ("mistake", "an index past the end of an axis (a count written in?)"),
    "error.device_missing": ("mistake", "tensors moved to a device (mps, cuda) the machine does not have"),
    "error.view_after_transpose": ("mistake", ".view() after a transpose"),
    "error.reshape_size": ("mistake", "a reshape that cannot hold the input's numbers"),
    "error.axis_out_of_range": ("mistake", "an axis that this tensor does not have"),
    "error.dtype_mixed": ("mistake", "float32 and float64 mixed in one product"),
    "error.mask_not_bool": ("mistake", "masked_fill with a mask that is not boolean"),
    "error.float_size": ("mistake", "a size computed with / instead of //"),
    "error.float_index": ("mistake", "an index computed with / instead of //"),
    "error.xor_not_power": ("mistake", "^ (XOR in Python) written for a power: ** 0.5 or math.sqrt"),
    "error.tensor_called": ("mistake", "a tensor called like a function"),
    "error.divmod_tensor": ("mistake", "divmod() of a tensor"),
    "error.torch_fn_on_number": ("mistake", "a torch function (torch.sqrt …) called on a plain number"),
    "error.dict_attribute": ("mistake", "config.key on a dict: use config['key']"),
    "error.extra_parameter": ("mistake", "the function takes a parameter the check does not pass"),
    "error.name_not_defined": ("mistake", "a name the function does not define"),
    "error.module_not_imported": ("mistake", "torch, numpy, math, F or nn used where it is not imported"),
    "error.helpers_module": ("mistake", "the helpers module H used as a number"),
    "error.input_called": ("mistake", "the function calls input(), which waits for typing"),
    "error.threads_left_running": ("mistake", "the function leaves threads running until no more can start"),
    "error.processes_started": ("mistake", "the function starts worker processes (multiprocessing)"),
    "error.runner_lost": ("raised", "(grader) the process running the function stopped answering: it forked or ended"),
    "not_a_class": ("mistake", "(capstone) the check was given something other than the class"),
    "module_not_class": ("mistake", "(capstone) the check was given a module built from the class, not the class"),
    "build_failed": ("raised", "(capstone) building MyMultiHead(768, 12) raised an error or stopped"),
    "random_output": ("mistake", "(capstone) two calls on one input give two outputs: dropout left on"),
    "missing_linear": ("mistake", "(capstone) self.qkv or self.out missing, of the wrong shape, or without bias"),
    "too_slow": ("too_slow", "ran past the time limit and was stopped"),
    "exited": ("stopped", "called exit() or sys.exit()"),
    "stopped": ("stopped", "the Stop button (KeyboardInterrupt) stopped the function"),
    "patched": ("patched", "the function replaced a function of math, torch, numpy or helpers"),
    "changed_input": ("mistake", "right numbers, but the function changed an input (or a notebook variable) in place"),
    "notebook_patched": ("patched", "a notebook cell replaced a function the checks use, and it could not be put back"),
}


@dataclass(frozen=True)
class Verdict:
    """One check's result. `line` is what the notebook printed; `printed` what the student's code printed."""

    exercise: str  # the exercise's key, e.g. "attention_weights"
    outcome: str  # one of OUTCOMES
    code: str  # "attention_weights.sqrt_of_T", "attention_weights.numbers_differ" …
    line: str
    printed: str = ""
    sure: bool = True  # False: the line names a mistake as a possibility (it explains one input, not all)

    @property
    def passed(self) -> bool:
        return self.outcome == "right"

    def __bool__(self) -> bool:
        """True only when it passed: `if H.check_attention_weights(f):` in a teacher's script means that."""
        return self.passed

    def _ipython_display_(self) -> None:
        """Shown as the last line of a cell: nothing more, since the check printed its line already."""


def engine_verdict(key: str, code: str, line: str, printed: str = "") -> Verdict:
    """A verdict with one of the engine's codes (its outcome comes from ENGINE_CODES)."""
    return Verdict(key, ENGINE_CODES[code][0], f"{key}.{code}", line, printed)


@dataclass(frozen=True)
class Mistake:
    """A wrong variant of the reference (same arguments; it may raise) and the line that names it."""

    says: str
    answer: Callable
    code: str = ""  # stable and readable ("sqrt_of_T"): the verdict's code is "<exercise key>.<code>"


@dataclass
class Exercise:
    """What a check needs: the inputs to try, the reference, the mistakes, and how to read answers."""

    name: str
    cases: Sequence[tuple[str, tuple]]  # (label such as "Q, K [5 × 16]", the student's arguments)
    reference: Callable
    mistakes: Sequence[Mistake] = ()
    read: Callable = read_tensor  # (raw answer, args) -> (value, None), (None, what is wrong) or (None, (what, code))
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
    none_is_answer: bool = False  # None is a right answer on some input (a head that never formed): the stub
    # is a function that returns None on every input
    batch_first: bool = False  # a 3-D answer's first axis is the sentences of a batch, not the heads (the capstone)
    key: str = ""  # the exercise's stable code ("attention_weights"); default: its name in snake_case

    def __post_init__(self):
        if not self.key:
            self.key = re.sub(r"[^a-z0-9]+", "_", self.name.lower()).strip("_")


def assert_passed(verdict: Verdict) -> Verdict:
    """Return the verdict when the check passed; else raise AssertionError with its line."""
    if not isinstance(verdict, Verdict):
        raise ValueError(f"assert_passed needs the Verdict a check returns, got {type(verdict).__name__}: "
                         f"pass it the result of H.check_…(…).")
    if not verdict.passed:
        raise AssertionError(verdict.line)
    return verdict
