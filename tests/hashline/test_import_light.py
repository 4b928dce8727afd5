"""The pure packages import in a fresh interpreter without Jupyter, tornado or nbformat."""

from __future__ import annotations

import subprocess
import sys

import pytest

HEAVY = ("nbformat", "tornado", "jupyter_server", "ipywidgets")


@pytest.mark.parametrize(
    "module",
    [
        "jupyter_hashline.hashline",
        "jupyter_hashline.hashline.patcher",
        "jupyter_hashline.hashline.parse",
        "jupyter_hashline.hashline.recovery",
        "jupyter_hashline.zones",
    ],
)
def test_module_loads_no_heavy_dependency(module: str) -> None:
    probe = (
        "import importlib, sys\n"
        f"importlib.import_module({module!r})\n"
        f"heavy = sorted(m for m in {HEAVY!r} if m in sys.modules)\n"
        "print(','.join(heavy))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=False, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "", f"{module} loaded {done.stdout.strip()}"
