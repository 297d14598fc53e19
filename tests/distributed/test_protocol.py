"""What ranks exchange and how it merges (no MPI needed)."""
import numpy as np

from frametrace.distributed import protocol
from frametrace.dynamic_policy import FrameState


def _state(sizes=None, ints=None):
    s = FrameState()
    s.sizes.update(sizes or {})
    s.ints.update(ints or {})
    return s


def test_observe_names_match_the_tracer_sources():
    s = FrameState()
    protocol.observe(s, {"L['x']": np.ones((3, 4)), "L['n']": 5, "L['xs']": [np.ones(2), 7],
                         "L['d']": {"a": np.ones(6)}, "L['flag']": True, "L['f']": 1.5})
    assert s.sizes == {"L['x']": (3, 4), "L['xs'][0]": (2,), "L['d']['a']": (6,)}
    assert s.ints == {"L['n']": 5, "L['xs'][1]": 7}
    assert s.changed


def test_join_lattice():
    a = _state({"L['x']": (10, 3), "L['y']": (4,)}, {"L['n']": 2, "L['m']": 1})
    b = _state({"L['x']": (11, 3), "L['y']": (4, 4)}, {"L['n']": 2, "L['m']": 3})
    c = _state({"L['x']": (10, 3), "L['z']": (8,)})
    out = protocol.join([a, b, c])
    assert out.sizes == {"L['x']": (None, 3), "L['y']": None, "L['z']": (8,)}
    assert out.ints == {"L['n']": 2, "L['m']": None}


def test_apply_raises_in_place_and_reports_changes():
    mine = _state({"L['x']": (10, 3)}, {"L['n']": 2})
    mine.changed = False
    merged = protocol.join([mine, _state({"L['x']": (12, 3)}, {"L['n']": 2})])
    assert protocol.apply(mine, merged) == ["L['x']"]
    assert mine.sizes["L['x']"] == (None, 3) and mine.changed
    assert protocol.apply(mine, merged) == []


def test_messages_round_trip_as_json():
    code = test_messages_round_trip_as_json.__code__
    s = _state({"L['x']": (None, 3), "L['v']": None}, {"L['n']": None, "L['k']": 4})
    msg = protocol.decode(protocol.encode(7, 1, code, s))
    assert msg["seq"] == 7 and msg["frame"].endswith(f":{code.co_firstlineno}:test_messages_round_trip_as_json")
    back = protocol.state_of(msg)
    assert back.sizes == s.sizes and back.ints == s.ints


def test_malformed_entries_are_dropped():
    back = protocol.state_of({"sizes": {"L['x']": [1, "2"], "L['y']": "?", "L['z']": [3]}, "ints": {"L['n']": 1.5}})
    assert back.sizes == {"L['z']": (3,)} and back.ints == {}


def test_exchange_is_a_no_op_when_disabled():
    from frametrace import distributed
    s = FrameState()
    distributed.exchange(test_exchange_is_a_no_op_when_disabled.__code__, s, {"L['x']": np.ones(3)})
    assert s.sizes == {} and distributed.stats()["exchanges"] == 0
