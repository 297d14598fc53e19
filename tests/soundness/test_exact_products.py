"""Float matrix products of one dtype give NumPy's bits by default (`config.exact_float_products`:
they are NumPy's own call, BLAS, with any elementwise epilogue run over its result): a chaotic
program (pairwise gravity, leapfrog steps) amplifies a last-bit difference of a matrix-vector
product into visibly different trajectories, so its compiled run must follow NumPy's exactly."""
import numpy as np
import pytest

import frametrace as ft

rng = np.random.default_rng(5)


def bits_equal(got, want):
    got, want = np.asarray(got), np.asarray(want)
    return got.dtype == want.dtype and got.shape == want.shape and got.tobytes() == want.tobytes()


class Layer:
    def __init__(self, w, b):
        self.w, self.b = w, b

    def __call__(self, x):
        return np.tanh(x @ self.w + self.b) * 0.5


def products(a, m, v):
    return a @ m, m @ v, v @ m, m.T @ v, np.dot(m, v) * 2.0, (a * 3.0) @ m.T


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n,k", [(1, 1), (3, 7), (25, 25), (33, 64), (100, 17)])
def test_one_dtype_products_are_numpys_bits(dtype, n, k):
    ft.reset()
    f = ft.compile(products)
    for _ in range(2):
        a = rng.standard_normal((n, k)).astype(dtype)
        m = rng.standard_normal((k, k)).astype(dtype)
        v = rng.standard_normal(k).astype(dtype)
        for g, w in zip(f(a, m, v), products(a, m, v)):
            assert bits_equal(g, w)


def test_a_layer_with_an_epilogue_is_numpys_bits():
    ft.reset()
    layer = Layer(rng.standard_normal((64, 32)), rng.standard_normal(32))
    f = ft.compile(layer)
    for rows in (2, 4, 9):      # (a static (1, 32) epilogue's tanh is still our own math)
        x = rng.standard_normal((rows, 64))
        assert bits_equal(f(x), layer(x))


def getacc(pos, mass, soft):
    """nbody's accelerations as NPBench writes them: 1/r^3 of the positive entries, then three
    matrix-vector products with the masses (an (n, 1) column)."""
    x, y = pos[:, 0:1], pos[:, 1:2]
    dx, dy = x.T - x, y.T - y
    inv_r3 = dx ** 2 + dy ** 2 + soft ** 2
    inv_r3[inv_r3 > 0] = inv_r3[inv_r3 > 0] ** (-1.5)
    return np.hstack(((dx * inv_r3) @ mass, (dy * inv_r3) @ mass))


def simulate(pos, vel, mass, steps, dt):
    acc = getacc(pos, mass, 0.1)
    for _ in range(steps):
        vel += acc * dt / 2.0
        pos += vel * dt
        acc = getacc(pos, mass, 0.1)
        vel += acc * dt / 2.0
    return pos, vel


def test_a_chaotic_simulation_follows_numpy():
    ft.reset()
    pos, vel = rng.standard_normal((25, 2)), rng.standard_normal((25, 2)) * 0.1
    mass = np.full((25, 1), 1.0 / 25)
    f = ft.compile(simulate)
    got = f(pos.copy(), vel.copy(), mass, 60, 0.01)
    want = simulate(pos.copy(), vel.copy(), mass, 60, 0.01)
    for g, w in zip(got, want):
        assert bits_equal(g, w)


def test_small_products_in_our_nests_on_request():
    """exact_float_products=False: small products run in our fused nests (other bits, same values
    within rounding)."""
    ft.reset()
    a, m = rng.standard_normal((1, 200)), rng.standard_normal((200, 64))
    with ft.config.patch(exact_float_products=False):
        f = ft.compile(lambda a, m: a @ m)
        np.testing.assert_allclose(f(a, m), a @ m, rtol=1e-12, atol=1e-12)
