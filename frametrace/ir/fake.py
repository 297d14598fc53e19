"""Abstract values that meta rules compute on: arrays and Python scalars without data."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class FakeArray:
    """An array known only by shape (ints or SymInts), dtype, and whether NumPy makes it a scalar."""
    shape: tuple
    dtype: np.dtype
    scalar: bool = False          # a NumPy scalar (np.float64(...)) rather than an array

    def __post_init__(self):
        object.__setattr__(self, "dtype", np.dtype(self.dtype))
        object.__setattr__(self, "shape", tuple(self.shape))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self):
        n = 1
        for d in self.shape:
            n = n * d
        return n


@dataclass(frozen=True)
class FakeScalar:
    """A Python scalar (weak for NumPy promotion) whose value is known only at run time."""
    pytype: type                 # int, float, bool or complex


def is_fake_array(x) -> bool:
    return isinstance(x, FakeArray)
