"""Printed graphs are stable text (golden tests)."""
import numpy as np

import frametrace as ft


def graph_text(f, *args):
    f(*args)
    return str(f._frametrace_cache.entries[0].info.graph)


def test_static_graph_text():
    f = ft.compile(lambda x: np.sin(x) * x.shape[0] + 1.5, dynamic=False)
    assert graph_text(f, np.ones(4)) == (
        "graph(%L_x: f64[4]):\n"
        "  %0 = sin(%L_x)  : f64[4]\n"
        "  %1 = multiply(%0, 4)  : f64[4]\n"
        "  %2 = add(%1, 1.5)  : f64[4]\n"
        "  return (%2)")


def test_dynamic_graph_text():
    f = ft.compile(lambda x: x.reshape(-1)[::2] * x.shape[0], dynamic=True)
    assert graph_text(f, np.ones((3, 4))) == (
        "graph(%L_x: f64[s0, s1]):\n"
        "  # s0 = L['x'].shape[0]\n"
        "  # s1 = L['x'].shape[1]\n"
        "  %0 = reshape(%L_x, shape=(s0*s1,))  : f64[s0*s1]\n"
        "  %1 = getitem(%0, index=(0:s0*s1:2,))  : f64[((s0*s1 + 1)//2)]\n"
        "  %2 = multiply(%1, s0)  : f64[((s0*s1 + 1)//2)]\n"
        "  return (%2)")
