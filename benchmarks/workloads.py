"""The workloads of issue 3's benchmark table, as a user writes them in NumPy (shared by the
bench_*.py files so every benchmark measures the same code)."""
import numpy as np


def sin_ten_times(x):
    for _ in range(10):
        x = np.sin(x)
    return x


def gelu(x):
    return 0.5 * x * (1 + np.tanh(0.79788456 * (x + 0.044715 * x ** 3)))


def relu_fma(a, b, c):
    return np.maximum(a * b + c, 0)


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def layernorm(x):
    return (x - x.mean(axis=-1, keepdims=True)) / np.sqrt(x.var(axis=-1, keepdims=True) + 1e-5)


def mm_relu(x, w, b):
    return np.maximum(x @ w + b, 0)


def mask_sum(x):
    y = x[x > 0]
    return y.sum() + np.sqrt(y).sum()
