"""A wrapper's options stay with its cache: ft.reset() forgets entries, not how to compile."""
import numpy as np
import pytest

import frametrace as ft
from helpers import BACKENDS, assert_same


@pytest.mark.parametrize("backend", BACKENDS)
def test_reset_keeps_dynamic_and_fullgraph(backend):
    f = ft.compile(lambda x: x * x.shape[0], dynamic=True, backend=backend)
    g = ft.compile(lambda x: print("break") or x, fullgraph=True, backend=backend)
    f(np.ones(4))
    ft.reset()
    rng = np.random.default_rng(3)
    for n in (5, 6, 7):
        x = rng.standard_normal(n)
        assert_same(f(x), x * n)
    assert ft.stats().unique_graphs == 1 and ft.stats().frames_compiled == 1
    with pytest.raises(ft.errors.GraphBreakError):
        g(np.ones(2))
