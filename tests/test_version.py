"""One version with one source, labextension/package.json: the installed distribution's
metadata (hatch-nodejs-version reads package.json at build time) and
`jupyter_hashline.__version__` (read from that metadata) say the same. The built sidebar's copy
is checked where JupyterLab lists it, in tests/labextension/test_wheel.py."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import jupyter_hashline

REPO = Path(__file__).resolve().parent.parent
PACKAGE_JSON = REPO / "labextension" / "package.json"


def test_package_json_metadata_and_module_agree() -> None:
    source = json.loads(PACKAGE_JSON.read_text())["version"]
    installed = metadata.version("jupyter-hashline")
    assert installed == source, (
        f"the installed metadata says {installed}, package.json says {source}: "
        "reinstall (`make venv`) after changing the version"
    )
    assert jupyter_hashline.__version__ == source


def test_pyproject_declares_no_version_of_its_own() -> None:
    """(Read as text: tomllib is not in Python 3.10's standard library.)"""
    pyproject = (REPO / "pyproject.toml").read_text()
    assert not re.search(r"^version\s*=", pyproject, re.M)
    assert re.search(r'^dynamic = \["version"\]$', pyproject, re.M)
    hatch_version = pyproject.split("[tool.hatch.version]\n", 1)[1].split("\n\n", 1)[0]
    assert hatch_version == 'source = "nodejs"\npath = "labextension/package.json"'


def test_reading_the_version_is_lazy() -> None:
    """Importing the package does not load importlib.metadata; asking for the version does."""
    probe = (
        "import sys, jupyter_hashline as j; "
        "before = 'importlib.metadata' in sys.modules; "
        "v = j.__version__; "
        "print(before, 'importlib.metadata' in sys.modules, v == j.__version__)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.split() == ["False", "True", "True"]
