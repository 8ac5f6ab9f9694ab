"""`pip install ./python` works on a fresh machine: the package's PEP 517
backend is maturin's with `--ignore-rust-version` (see
python/build_backend/timerhost_build.py). Building a wheel takes minutes, so
this checks the wiring; the full install is in docs/PYTHON.md."""

import os
import pathlib
import subprocess
import sys

import pytest

PYTHON_DIR = pathlib.Path(__file__).resolve().parents[2] / "python"


def test_pyproject_uses_the_in_tree_backend():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    build = tomllib.loads((PYTHON_DIR / "pyproject.toml").read_text())["build-system"]
    assert build["build-backend"] == "timerhost_build"
    assert build["backend-path"] == ["build_backend"]


def _backend_env(extra):
    env = {k: v for k, v in os.environ.items() if k != "MATURIN_PEP517_ARGS"}
    env.update(extra)
    probe = (
        "import os, maturin, timerhost_build as b; "
        "print(os.environ['MATURIN_PEP517_ARGS']); "
        "assert all(getattr(b, h) is getattr(maturin, h) for h in b.__all__)"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=PYTHON_DIR / "build_backend",
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.strip()


def test_the_backend_adds_ignore_rust_version_and_respects_the_caller():
    assert _backend_env({}) == "--ignore-rust-version"
    assert _backend_env({"MATURIN_PEP517_ARGS": "--release"}) == "--release"
