"""Offline tool: minimax polynomial fits (Remez exchange) for the coefficient tables.

Not imported at run time (needs mpmath). Run `python -m frametrace.codegen.llvm_math.remez`
to re-derive and print every table used by the kernels, with its max weighted error.

A fit approximates  f(t) ~ sum_j c_j t^(e0 + j*step)  on [a, b], minimising
max |w(t) * (f(t) - p(t))|  (w = 1/|g| for relative error of a final result g, etc.).
"""
from __future__ import annotations

import mpmath as mp


def remez(f, a, b, n, *, w=lambda t: 1, e0=0, step=1, iters=30, grid=4000):
    """Return (coeffs as mpf, max weighted error). n = number of coefficients."""
    powers = [e0 + j * step for j in range(n)]

    def basis(t):
        return [t ** p for p in powers]

    # Chebyshev-like initial reference of n+1 points.
    m = n + 1
    # (slightly asymmetric so that no reference point sits where a weight may vanish)
    ref = [(a + b) / 2 - (b - a) / 2 * mp.cos(mp.pi * (i + mp.mpf("0.49")) / m) for i in range(m)]
    pts = [a + (b - a) * (1 - mp.cos(mp.pi * i / grid)) / 2 for i in range(grid + 1)]
    fvals = [f(t) for t in pts]
    wvals = [w(t) for t in pts]
    best = None
    for _ in range(iters):
        A = mp.matrix(m, m)
        rhs = mp.matrix(m, 1)
        for i, t in enumerate(ref):
            for j, v in enumerate(basis(t)):
                A[i, j] = v
            A[i, n] = (-1) ** i / w(t)
            rhs[i] = f(t)
        sol = mp.lu_solve(A, rhs)
        c = [sol[j] for j in range(n)]
        err = [wv * (fv - mp.fsum(cj * bj for cj, bj in zip(c, basis(t))))
               for t, fv, wv in zip(pts, fvals, wvals)]
        # local extrema of the error, alternating sign, keep the largest per sign run
        ext = []
        for i in range(len(pts)):
            left = err[i - 1] if i > 0 else None
            right = err[i + 1] if i + 1 < len(pts) else None
            e = err[i]
            if (left is None or abs(e) >= abs(left)) and (right is None or abs(e) >= abs(right)):
                ext.append(i)
        runs = []
        for i in ext:
            if runs and mp.sign(err[runs[-1]]) == mp.sign(err[i]):
                if abs(err[i]) > abs(err[runs[-1]]):
                    runs[-1] = i
            else:
                runs.append(i)
        while len(runs) > m:   # drop the smaller end
            if abs(err[runs[0]]) < abs(err[runs[-1]]):
                runs.pop(0)
            else:
                runs.pop()
        emax = max(abs(e) for e in err)
        best = (c, emax)
        if len(runs) < m:
            break
        ref = [pts[i] for i in runs]
        emin = min(abs(err[i]) for i in runs)
        if emax / emin - 1 < mp.mpf("1e-6"):
            break
    return best


def _report(name, coeffs, emax):
    """Print a table in the form the kernel modules use (hexfloats text)."""
    print(f"# {name}: max weighted error {float(emax):.3e} = 2^{float(mp.log(emax, 2)):.2f}")
    print(f'{name} = hexfloats("""' + " ".join(float(c).hex() for c in coeffs) + '""")')


def _targets():
    """name -> (f, a, b, number of coefficients, weight, first power) for every table."""
    def sq(z):
        return mp.sqrt(z)

    def q_exp(t):   # (e^t - 1 - t - t^2/2) / t^3
        return mp.mpf(1) / 6 + t / 24 if abs(t) < mp.mpf("1e-8") else (mp.exp(t) - 1 - t - t * t / 2) / t ** 3

    def p_sin(z):   # (sin x - x) / x^3 with z = x^2
        x = sq(z)
        return -mp.mpf(1) / 6 + z / 120 if z < mp.mpf("1e-16") else (mp.sin(x) - x) / x ** 3

    def c_cos(z):   # (cos x - 1 + x^2/2) / x^4
        x = sq(z)
        return mp.mpf(1) / 24 - z / 720 if z < mp.mpf("1e-16") else (mp.cos(x) - 1 + z / 2) / z ** 2

    def r_log(z):   # (log((1+s)/(1-s)) - 2s) / s with z = s^2 (fit with powers z^1..)
        s = sq(z)
        return 2 * z / 3 if z < mp.mpf("1e-30") else (mp.log((1 + s) / (1 - s)) - 2 * s) / s

    def p_log3(z):  # (log((1+s)/(1-s)) - 2s) / s^3
        s = sq(z)
        return mp.mpf(2) / 3 + 2 * z / 5 if z < mp.mpf("1e-30") else (mp.log((1 + s) / (1 - s)) - 2 * s) / s ** 3

    def a_atan(z):  # (x - atan x) / x (fit with powers z^1..)
        x = sq(z)
        return z / 3 if z < mp.mpf("1e-30") else (x - mp.atan(x)) / x

    def p_tanh(z):  # (tanh x - x) / x^3
        x = sq(z)
        return -mp.mpf(1) / 3 + 2 * z / 15 if z < mp.mpf("1e-20") else (mp.tanh(x) - x) / x ** 3

    def p_sinh(z):  # (sinh x - x) / x^3
        x = sq(z)
        return mp.mpf(1) / 6 + z / 120 if z < mp.mpf("1e-20") else (mp.sinh(x) - x) / x ** 3

    def p_asin(z):  # (asin x - x) / x^3
        x = sq(z)
        return mp.mpf(1) / 6 + 3 * z / 40 if z < mp.mpf("1e-30") else (mp.asin(x) - x) / x ** 3

    ln2h = mp.log(2) / 2
    q4 = (mp.pi / 4) ** 2
    q2 = mp.mpf("1.5708") ** 2
    slog = ((mp.sqrt(2) - 1) / (mp.sqrt(2) + 1)) ** 2
    at = (mp.mpf(7) / 16) ** 2
    return {
        "EXP_Q": (q_exp, -ln2h, ln2h, 10, lambda t: t * t, 0),           # relative to expm1 ~ r
        "EXP_Q_F32": (q_exp, -ln2h, ln2h, 5, lambda t: t * t, 0),
        "EXP_Q_F32N": (q_exp, -ln2h - mp.mpf("0.01"), ln2h + mp.mpf("0.01"), 4, lambda t: t * t, 0),
        "SIN_P": (p_sin, 0, q4, 6, lambda z: z, 0),                       # relative to sin ~ x
        "SIN_P_F32": (p_sin, 0, q4, 4, lambda z: z, 0),
        "SIN_PI": (p_sin, 0, q2, 8, lambda z: z, 0),
        "COS_C": (c_cos, 0, q4, 6, lambda z: z * z, 0),                   # absolute (cos >= 0.7)
        "COS_C_F32": (c_cos, 0, q4, 3, lambda z: z * z, 0),
        "LOG_R": (r_log, 0, slog, 7, lambda z: 1, 1),                     # relative to log ~ 2s
        "LOG_R_F32": (r_log, 0, slog, 4, lambda z: 1, 1),
        "LOG_P_HI": (p_log3, 0, slog, 9, lambda z: z, 0),                 # power: relative to 2s
        "ATAN_A": (a_atan, 0, at, 11, lambda z: 1, 1),
        "ATAN_A_F32": (a_atan, 0, at, 6, lambda z: 1, 1),
        "TANH_P_F32": (p_tanh, 0, mp.mpf("0.5625") ** 2, 5, lambda z: z, 0),
        "SINH_P_F32": (p_sinh, 0, mp.mpf("0.5625") ** 2, 3, lambda z: z, 0),
        "ASIN_P": (p_asin, 0, mp.mpf(1) / 4, 13, lambda z: z, 0),
        "ASIN_P_F32": (p_asin, 0, mp.mpf(1) / 4, 6, lambda z: z, 0),
    }


if __name__ == "__main__":
    import sys
    mp.mp.dps = 60
    wanted = sys.argv[1:]
    for name, (f, a, b, n, w, e0) in _targets().items():
        if not wanted or name in wanted:
            coeffs, err = remez(f, mp.mpf(a), mp.mpf(b), n, w=w, e0=e0)
            _report(name, coeffs, err)
