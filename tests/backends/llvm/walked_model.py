"""A model as users write one, for test_walked_entry.py: layers in a list, each holding a
weight in an attribute, its other parameters in a dict, and its activation as an attribute."""
import numpy as np


def gelu(x):
    return 0.5 * x * (1.0 + np.tanh(0.8 * x))


class Dense:
    def __init__(self, rng, d):
        self.w = rng.standard_normal((1, d))                # a row: broadcasts over the batch
        self.p = {"b": rng.standard_normal(d) * 0.1, "g": rng.standard_normal(d)}
        self.act = np.tanh

    def __call__(self, x):
        return self.act(x * self.w + self.p["b"]) * self.p["g"]


class Model:
    """n_arrays weights: n_arrays // 3 layers of three arrays each."""

    def __init__(self, n_arrays, d=4, seed=0):
        rng = np.random.default_rng(seed)
        self.layers = [Dense(rng, d) for _ in range(max(n_arrays // 3, 1))]
        self.scale = 0.5

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x * self.scale


class Rebuilding(Model):
    """Its layer list is a property whose getter replaces the first layer's weight by a new
    array of the same values on every read (Python run in the middle of a guard walk)."""

    @property
    def layers(self):
        ls = self.__dict__["_layers"]
        ls[0].w = ls[0].w * 1.0
        return ls

    @layers.setter
    def layers(self, v):
        self.__dict__["_layers"] = v

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x * self.scale
