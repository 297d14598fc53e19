import gc

import numpy as np
import pytest

from frametrace import marks
from frametrace.sources import AttrSource, GetItemSource, GlobalSource, LocalSource, ShapeSource


def test_source_names_and_code():
    x = LocalSource("x")
    assert ShapeSource(x, 0).name == "L['x'].shape[0]"
    assert ShapeSource(x, 0).code == "x.shape[0]"
    w = AttrSource(LocalSource("self"), "w")
    assert w.name == "L['self'].w" and w.is_attribute_or_global
    g = GetItemSource(GlobalSource("W"), 1)
    assert g.name == "G['W'][1]" and g.code == "___G['W'][1]" and g.is_attribute_or_global
    assert ShapeSource(LocalSource("y"), 1).code == "y.shape[1]"


def test_marks_live_beside_the_array_and_die_with_it():
    a = np.ones((3, 4))
    marks.mark_dynamic(a, 0, min=2, max=8)
    marks.mark_static(a, -1)
    m = marks.marks_of(a)
    assert m[0].kind == "dynamic" and (m[0].min, m[0].max) == (2, 8)
    assert m[1].kind == "static"
    assert marks.marks_of(np.ones(3)) == {}
    key = id(a)
    del a
    gc.collect()
    assert key not in marks._table


def test_marks_reject_bad_dims_and_types():
    with pytest.raises(IndexError):
        marks.mark_dynamic(np.ones(3), 1)
    with pytest.raises(TypeError):
        marks.mark_dynamic([1, 2], 0)
    with pytest.raises(ValueError):
        marks.mark_dynamic(np.ones(3), 0, min=5, max=2)
