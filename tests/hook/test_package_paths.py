"""frametrace imported through a sys.path entry that is not normalised (`repo/tests/..`, a
relative entry): its own code objects then carry such file names, and the hook, the tracer and
the sampler must still know them for frametrace's own code (hooking its own functions recursed
until RecursionError reached the program)."""
import os
import subprocess
import sys
import textwrap

import frametrace

REPO = os.path.dirname(os.path.dirname(os.path.abspath(frametrace.__file__)))

PROGRAM = textwrap.dedent("""
    import os, sys
    sys.path.insert(0, sys.argv[1])
    import numpy as np
    import frametrace as ft
    from frametrace import file_kinds
    assert ".." in ft.__file__ or not os.path.isabs(ft.__file__), ft.__file__
    assert file_kinds.is_ours(ft.enable.__code__.co_filename)

    def f(x):
        return np.sin(x) + 1

    x = np.arange(5.0)
    with ft.enabled(), ft.recording():
        got = [f(x) for _ in range(5)]
    for g in got:
        assert np.array_equal(g, np.sin(x) + 1)
    s = ft.stats()
    assert s.frames_compiled == 1 and s.internal_errors == 0, s
    print("ok")
""")


def _run(entry, cwd):
    script = os.path.join(cwd, "program.py")
    with open(script, "w") as f:
        f.write(PROGRAM)
    env = dict(os.environ, PYTHONPATH="")
    return subprocess.run([sys.executable, script, entry], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def test_a_path_with_dotdot(tmp_path):
    r = _run(os.path.join(REPO, "tests", ".."), tmp_path)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]


def test_a_relative_path(tmp_path):
    sub = tmp_path / "sub"
    sub.mkdir()
    r = _run(os.path.relpath(REPO, sub), sub)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]
