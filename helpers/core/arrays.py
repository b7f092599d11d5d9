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
    try:
        return np.asarray(values, dtype=dtype)
    except ValueError as err:  # numpy's own line speaks of "inhomogeneous part"
        if "inhomogeneous" not in str(err) and "sequence" not in str(err):
            raise
        raise ValueError("the rows of this list have different lengths; pass a tensor or a list of rows that are "
                         "all as long (e.g. attention weights of shape (T, T)).") from None
