"""One way to turn a tensor (any device, with or without grad, any float type) into a numpy array."""

from __future__ import annotations

import numpy as np
import torch


def to_numpy(values, dtype=np.float64) -> np.ndarray:
    """A tensor or anything array-like as a numpy array of `dtype` (float64 unless asked otherwise)."""
    if isinstance(values, torch.Tensor):
        values = values.detach().cpu()
        if not values.dtype.is_floating_point or values.dtype in (torch.float16, torch.bfloat16):
            values = values.double()  # numpy has no bfloat16; converting through float64 loses nothing
        values = values.numpy()
    return np.asarray(values, dtype=dtype)
