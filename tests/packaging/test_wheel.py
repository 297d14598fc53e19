"""The package as users install it: a wheel built from the source tree ships every module.

`pip install .` and every wheel only contain the packages setuptools finds; a folder without
`__init__.py` is silently left out, and an editable install (as `make test` uses) never notices.
"""
import email
import os
import shutil
import subprocess
import sys
import zipfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PACKAGES = ("frametrace", "csrc_free_runtime")
SUPPORTED = ("3.11", "3.12", "3.13")


def source_modules():
    """Every .py file of the shipped packages, as wheel paths ('frametrace/x/y.py')."""
    found = set()
    for top in PACKAGES:
        for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, top)):
            dirnames[:] = [d for d in dirnames if d != "__pycache__"]
            rel = os.path.relpath(dirpath, ROOT).replace(os.sep, "/")
            found.update(f"{rel}/{f}" for f in filenames if f.endswith(".py"))
    return found


def test_every_source_folder_is_a_package():
    folders = {m.rsplit("/", 1)[0] for m in source_modules()}
    missing = sorted(f for f in folders if f"{f}/__init__.py" not in source_modules())
    assert not missing, f"folders without __init__.py are left out of wheels: {missing}"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """Build the wheel from a clean copy of the tree (a stale build/ folder could hide a missing file)."""
    src = tmp_path_factory.mktemp("src")
    for name in ("setup.cfg", "pyproject.toml", "README.md"):
        shutil.copy(os.path.join(ROOT, name), src / name)
    for top in PACKAGES:
        shutil.copytree(os.path.join(ROOT, top), src / top, ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path_factory.mktemp("dist")
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(src)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (path,) = out.glob("frametrace-*.whl")
    return path


def test_wheel_ships_exactly_the_source_modules(wheel):
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
    shipped = {n for n in names if n.endswith(".py")}
    assert shipped == source_modules(), (sorted(source_modules() - shipped), sorted(shipped - source_modules()))
    tops = {n.split("/", 1)[0] for n in names if not n.split("/", 1)[0].endswith(".dist-info")}
    assert tops == set(PACKAGES), tops


def test_wheel_metadata_names_every_supported_python(wheel):
    with zipfile.ZipFile(wheel) as zf:
        (meta,) = [n for n in zf.namelist() if n.endswith(".dist-info/METADATA")]
        msg = email.message_from_bytes(zf.read(meta))
    classifiers = set(msg.get_all("Classifier"))
    for v in SUPPORTED:
        assert f"Programming Language :: Python :: {v}" in classifiers, v
    assert msg["Requires-Python"].replace(" ", "") == ">=3.11"
    requires = {r.split(">")[0].split("=")[0].strip() for r in msg.get_all("Requires-Dist") if "extra ==" not in r}
    assert requires == {"numpy", "sympy", "bytecode", "llvmlite"}, requires
