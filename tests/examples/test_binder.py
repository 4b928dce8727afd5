"""The Binder files install the project the README's `make lab` installs, and enable it.

`binder/postBuild` runs for real in a fresh virtualenv. To keep the test bounded (a fully fresh
install of JupyterLab takes a minute), the fresh venv sees the project's dependencies through a
path file pointing at a copy of this environment's site-packages without jupyter-hashline, and
gets the Jupyter command-line front ends from pip (same versions, pip's cache reused); the
project itself is installed by postBuild from the repository, non-editable, as on Binder.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import sysconfig
from importlib import metadata
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BINDER = REPO / "binder"
FRONT_ENDS = ("jupyter_core", "jupyter_server", "jupyterlab")


def pyproject_value(key: str) -> str:
    """A top-level string of pyproject's [project] table (no tomllib on Python 3.10)."""
    found = re.search(rf'^{key} = "([^"]+)"', (REPO / "pyproject.toml").read_text(), re.MULTILINE)
    assert found, f"pyproject.toml has no {key}"
    return found.group(1)


def test_binder_environment_and_postbuild_match_the_project() -> None:
    env = (BINDER / "environment.yml").read_text()
    python = re.search(r"^\s*-\s*python=(\d+)\.(\d+)", env, re.MULTILINE)
    assert python, "environment.yml must pin a python version"
    minimum = re.search(r">=(\d+)\.(\d+)", pyproject_value("requires-python"))
    assert minimum is not None
    assert tuple(map(int, python.groups())) >= tuple(map(int, minimum.groups()))
    assert re.search(r"^\s*-\s*nodejs", env, re.MULTILINE), "Node builds the sidebar on Binder"
    post = (BINDER / "postBuild").read_text()
    assert os.access(BINDER / "postBuild", os.X_OK), "postBuild must be executable"
    assert post.startswith("#!/usr/bin/env bash") and "set -euo pipefail" in post
    # the same project and extras as `make lab` (pyproject's `lab` extra), not a copy of its deps
    assert 'pip install ".[lab]"' in post
    assert re.search(r"^lab = \[", (REPO / "pyproject.toml").read_text(), re.MULTILINE)


def test_readme_badge_opens_the_first_example_in_jupyterlab() -> None:
    readme = (REPO / "README.md").read_text()
    badge = re.search(
        r"\[!\[Binder\]\(https://mybinder\.org/badge_logo\.svg\)\]"
        r"\((https://mybinder\.org/v2/gh/[^)\s]+)\)",
        readme,
    )
    assert badge, "README needs the Binder badge"
    target = re.search(r"urlpath=lab/tree/([^&)\s]+)", badge.group(1))
    assert target, "the badge must open JupyterLab (urlpath=lab/tree/...)"
    assert target.group(1) == "examples/agent_edits_notebook.ipynb"
    assert (REPO / target.group(1)).is_file()


def shared_site_packages(tmp: Path) -> Path:
    """A directory of links to this environment's packages, jupyter-hashline left out."""
    site = Path(sysconfig.get_paths()["purelib"])
    shared = tmp / "shared-site-packages"
    shared.mkdir()
    for entry in site.iterdir():
        if "hashline" in entry.name.lower():  # the editable install and its metadata
            continue
        (shared / entry.name).symlink_to(entry)
    return shared


def fresh_venv(tmp: Path) -> Path:
    venv = tmp / "venv"
    # pip comes from the shared packages too: creating the venv without it saves ~10 s
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    Path(purelib, "shared_environment.pth").write_text(f"{shared_site_packages(tmp)}\n")
    pins = [f"{name}=={metadata.version(name)}" for name in FRONT_ENDS]
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", "--ignore-installed", *pins],
        check=True,
        timeout=120,
    )
    return venv


@pytest.mark.slow
def test_postbuild_installs_and_enables_the_project_in_a_fresh_venv(tmp_path: Path) -> None:
    if not (REPO / "jupyter_hashline" / "labextension" / "package.json").is_file():
        pytest.fail("the sidebar is not built: run `make dev` (it builds labextension/)")
    venv = fresh_venv(tmp_path)
    bin_dir = venv / "bin"
    path = [p for p in os.environ["PATH"].split(os.pathsep) if Path(p) != Path(sys.prefix, "bin")]
    env = dict(
        os.environ,
        PATH=os.pathsep.join([str(bin_dir), *path]),
        VIRTUAL_ENV=str(venv),
        JUPYTER_CONFIG_DIR=str(tmp_path / "config"),
        JUPYTER_DATA_DIR=str(tmp_path / "data"),
        PIP_DISABLE_PIP_VERSION_CHECK="1",
    )
    done = subprocess.run(
        ["bash", str(BINDER / "postBuild")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, f"postBuild failed:\n{done.stdout}\n{done.stderr}"
    # installed into the fresh venv, not the editable checkout, at the project's version
    probe = subprocess.run(
        [
            str(bin_dir / "python"),
            "-c",
            "import importlib.metadata as m, jupyter_hashline as j; "
            "print(j.__file__); print(m.version('jupyter-hashline'))",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    location, version = probe.stdout.split()
    assert Path(location).is_relative_to(venv)
    assert version == json.loads((REPO / "labextension" / "package.json").read_text())["version"]
    overrides = venv / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    assert "fetchNews" in overrides.read_text()
