"""The manual's scenarios, played with a tiny guard cache: trace with a fresh ShapeEnv on a
miss, keep produce_guards() as the entry's check, and count compiled entries."""
from frametrace.shapes import Location, ShapeEnv


class Arr:
    def __init__(self, *shape):
        self.shape = shape


def run(trace, inputs):
    """trace(env, size) once per cache miss; returns the number of compiled entries."""
    entries = []
    for x in inputs:
        ns = {"L": {"x": x}}
        hit = next((e for e in entries if all(eval(code, ns) for code in e)), None)
        if hit is None:
            env = ShapeEnv()
            env.set_location_provider(lambda: Location("user.py", 3, "f", ""))
            sym = env.create_symbol(x.shape[0], "L['x'].shape[0]")
            trace(env, sym)
            env.check_constraints()
            guards = [g.code for g in env.produce_guards()]
            if isinstance(sym, int):       # 0/1 specialised: the caller guards the static size
                guards.append(f"L['x'].shape[0] == {sym}")
            entries.append(guards)
    return len(entries)


def branchy(env, n):
    if n == 10:
        return "ten"
    if n <= 30:
        return "small"
    return n * 2


def test_specialisation_makes_three_graphs():
    assert run(branchy, [Arr(k) for k in (10, 20, 30, 40, 50)]) == 3


def test_dynamic_size_makes_one_graph():
    assert run(lambda env, n: n * 2 + 1, [Arr(k) for k in (10, 20, 30, 40)]) == 1


def test_zero_one_sizes_get_their_own_graphs():
    assert run(lambda env, n: n * 2, [Arr(k) for k in (0, 1, 5, 6, 0)]) == 3


def test_int_specialisation_recompiles_per_size():
    assert run(lambda env, n: list(range(n)), [Arr(k) for k in (3, 4, 3, 4)]) == 2


def test_duck_sizing_guard_separates_unequal_sizes():
    def trace(env, _):
        return None

    entries = []
    for xs, ys in ((5, 5), (6, 6), (5, 7)):
        ns = {"L": {"x": Arr(xs), "y": Arr(ys)}}
        if any(all(eval(g.code, ns) for g in e) for e in entries):
            continue
        env = ShapeEnv()
        env.create_symbol(xs, "L['x'].shape[0]")
        env.create_symbol(ys, "L['y'].shape[0]")
        entries.append(env.produce_guards())
    assert len(entries) == 2
