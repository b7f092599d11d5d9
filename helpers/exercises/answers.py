"""Reading a student's answer as plain numbers, and comparing numbers in a way student code cannot change.

The comparison uses functions and tolerances captured when this module loads, on copies the
student's code never sees: replacing torch.allclose, changing a constant or returning a tensor
subclass with its own __eq__ or __torch_function__ changes nothing.
"""

from __future__ import annotations

import numpy as np
import torch

ATOL = RTOL = 1e-4

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
    with np.errstate(invalid="ignore"):  # an infinite b is matched only by the same infinity (below)
        within = _AND(_LE(_ABS(_SUB(a, b)), _ADD(atol, _MUL(rtol, _ABS(b)))), _ISFINITE(b))
    with np.errstate(invalid="ignore"):  # inf - inf is NaN: equal infinities count through _EQ
        within = _OR(_OR(within, _EQ(a, b)), _AND(nan_a, nan_b))
    return bool(_ALL(within) and not _ANY(_AND(nan_a, ~nan_b)))


def same_tensor(a, b, args: tuple) -> bool:
    return close(a, b)
