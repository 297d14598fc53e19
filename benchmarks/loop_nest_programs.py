"""Loops over rows as NumPy users write them (issue 20, item 2): dense factorisations and
triangular solves with slices that move with the index and dot products of them, a Levinson
recursion, symmetric rank updates, Gram-Schmidt, and a byte loop with bit operations. Plain
Python + NumPy: bench_loop_nests.py runs each as written (NumPy eager), through ft.compile and
through numba.njit."""
import numpy as np


def lu(A):
    n = A.shape[0]
    for i in range(n):
        for j in range(i):
            A[i, j] -= A[i, :j] @ A[:j, j]
            A[i, j] /= A[j, j]
        for j in range(i, n):
            A[i, j] -= A[i, :i] @ A[:i, j]
    return A


def cholesky(A):
    A[0, 0] = np.sqrt(A[0, 0])
    for i in range(1, A.shape[0]):
        for j in range(i):
            A[i, j] -= np.dot(A[i, :j], A[j, :j])
            A[i, j] /= A[j, j]
        A[i, i] -= np.dot(A[i, :i], A[i, :i])
        A[i, i] = np.sqrt(A[i, i])
    return A


def forward_substitution(L, b):
    x = np.zeros_like(b)
    for i in range(b.shape[0]):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]
    return x


def levinson(r):
    y = np.empty_like(r)
    alpha = -r[0]
    beta = 1.0
    y[0] = -r[0]
    for k in range(1, r.shape[0]):
        beta *= 1.0 - alpha * alpha
        alpha = -(r[k] + np.dot(np.flip(r[:k]), y[:k])) / beta
        y[:k] += alpha * np.flip(y[:k])
        y[k] = alpha
    return y


def syr2k(alpha, beta, C, A, B):
    for i in range(A.shape[0]):
        C[i, :i + 1] *= beta
        for k in range(A.shape[1]):
            C[i, :i + 1] += A[:i + 1, k] * alpha * B[i, k] + B[:i + 1, k] * alpha * A[i, k]
    return C


def gram_schmidt(A):
    Q = np.zeros_like(A)
    R = np.zeros((A.shape[1], A.shape[1]))
    for k in range(A.shape[1]):
        nrm = 0.0
        for i in range(A.shape[0]):
            nrm += A[i, k] * A[i, k]
        R[k, k] = np.sqrt(nrm)
        for i in range(A.shape[0]):
            Q[i, k] = A[i, k] / R[k, k]
        for j in range(k + 1, A.shape[1]):
            R[k, j] = Q[:, k] @ A[:, j]
            A[:, j] -= Q[:, k] * R[k, j]
    return Q, R


def crc16(data, poly=0x8408):
    crc = 0xFFFF
    for k in range(data.shape[0]):
        cur = data[k]
        for _ in range(8):
            if (crc & 0x0001) ^ (cur & 0x0001):
                crc = (crc >> 1) ^ poly
            else:
                crc >>= 1
            cur >>= 1
    crc = ~crc & 0xFFFF
    return ((crc << 8) | ((crc >> 8) & 0xFF)) & 0xFFFF


PROGRAMS = {"lu": lu, "cholesky": cholesky, "forward_substitution": forward_substitution,
            "levinson": levinson, "syr2k": syr2k, "gram_schmidt": gram_schmidt, "crc16": crc16}


def inputs(name, scale=1.0):
    rng = np.random.default_rng(0)
    n = max(8, int(200 * scale))
    if name in ("lu", "cholesky"):
        M = rng.random((n, n))
        return [M @ M.T + n * np.eye(n)]
    if name == "forward_substitution":
        return [np.tril(rng.random((n, n))) + n * np.eye(n), rng.random(n)]
    if name == "levinson":
        return [rng.random(max(8, int(2000 * scale))) * 0.01]
    if name == "syr2k":
        return [1.5, 1.2, rng.random((n, n)), rng.random((n, n // 2)), rng.random((n, n // 2))]
    if name == "gram_schmidt":
        return [rng.random((n, n // 2))]
    if name == "crc16":
        return [rng.integers(0, 256, max(8, int(20000 * scale)), dtype=np.uint8)]
    raise KeyError(name)
