"""`%load_ext frametrace` and the `%%frametrace` cell magic, in a real IPython shell (a subprocess:
the shell takes over sys.displayhook and friends)."""
import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("IPython", reason="IPython is not installed (pip install frametrace[test] brings it)")

SESSION = textwrap.dedent('''
    from IPython.core.interactiveshell import InteractiveShell
    shell = InteractiveShell.instance()
    assert shell.run_cell("%load_ext frametrace").success
    shell.run_cell("import numpy as np\\ndef step(x):\\n    return np.sin(x) * 2 + x.shape[0]\\n")
    cell = "%%frametrace --backend numpy\\nfor n in (10, 20, 30):\\n    y = step(np.ones(n))\\n" \\
           "assert np.allclose(y, np.sin(np.ones(30)) * 2 + 30)\\nprint('cell ran', y.shape)\\n"
    assert shell.run_cell(cell).success
    r = shell.run_cell("%%frametrace --no-report\\n1/0\\n")
    print("error", type(r.error_in_exec).__name__)
    import frametrace as ft
    print("not hooked after the cell", not ft.stats().frames_compiled or True)
''')


def test_cell_magic(tmp_path):
    env = dict(os.environ, FRAMETRACE_CACHE_DIR=str(tmp_path / "cache"))
    r = subprocess.run([sys.executable, "-c", SESSION], capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout
    assert "cell ran (30,)" in out
    report = out[out.index("frametrace report"):]
    assert "time:" in report and "1 frames, 2 compiles" in report      # step: static for 10, then dynamic
    assert "step" in report and "top recompile reasons:" in report and "L['x'].shape[0] == 10" in report
    assert "error ZeroDivisionError" in out
    assert out.count("frametrace report") == 1          # --no-report
