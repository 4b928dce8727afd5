"""`make dist` builds what a user installs: an sdist and a wheel, both checked by twine, the
wheel carrying the prebuilt sidebar, so installing needs no Node.

The wheel, installed into a fresh environment where Node is not on PATH, lists the sidebar
enabled and OK from the wheel's own files under share/jupyter/labextensions/, and the server
extension enabled by the wheel's own config file. The sdist builds a wheel with Node off PATH.

To stay fast and offline, the fresh environment gets the wheel with `--no-deps` and borrows
JupyterLab (and the other dependencies) from the project's environment through a `.pth` path
entry; only the wheel's files are installed into it. The labextension paths JupyterLab searches
come from the fresh environment's prefix, so the listing can only find the wheel's copy.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import sysconfig
import tarfile
import venv
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from testkit.nodeless import path_without_node

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
VERSION = json.loads((REPO / "labextension" / "package.json").read_text())["version"]
ANSI = re.compile(r"\x1b\[[0-9;]*m")


@dataclass(frozen=True, slots=True)
class Dist:
    sdist: Path
    wheel: Path


@pytest.fixture(scope="module")
def dist(built_labextension: Path, tmp_path_factory: pytest.TempPathFactory) -> Dist:
    """`make dist` into a temporary folder (it fails unless `twine check --strict` passes)."""
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run(
        ["make", "--no-print-directory", "dist", f"DIST={out}"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, f"make dist failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    assert "PASSED" in done.stdout  # twine's verdict on each file
    return Dist(
        sdist=out / f"jupyter_hashline-{VERSION}.tar.gz",
        wheel=out / f"jupyter_hashline-{VERSION}-py3-none-any.whl",
    )


def fresh_env(where: Path, wheel: Path) -> Path:
    venv.EnvBuilder(with_pip=False).create(where)
    python = where / "bin" / "python"
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
         "--no-index", "--quiet", str(wheel)],
        check=True,
        timeout=300,
    )  # fmt: skip
    target_site = Path(
        subprocess.check_output(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            text=True,
        ).strip()
    )
    (target_site / "zz_project_env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python


def listing(python: Path, env: dict[str, str], *command: str) -> str:
    done = subprocess.run(
        [str(python), "-m", *command, "list"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    text = ANSI.sub("", done.stdout + done.stderr)
    assert done.returncode == 0, text
    return text


def test_make_dist_builds_both_artifacts_at_the_one_version(dist: Dist) -> None:
    with tarfile.open(dist.sdist) as sdist:
        names = set(sdist.getnames())
    top = f"jupyter_hashline-{VERSION}"
    assert f"{top}/LICENSE" in names
    assert f"{top}/jupyter_hashline/labextension/static/style.js" in names  # prebuilt
    assert not any("node_modules" in name for name in names)
    with zipfile.ZipFile(dist.wheel) as wheel:
        metadata = wheel.read(f"{top}.dist-info/METADATA").decode()
        assert f"{top}.dist-info/licenses/LICENSE" in wheel.namelist()
    assert f"\nVersion: {VERSION}\n" in metadata
    assert "\nLicense-Expression: BSD-3-Clause\n" in metadata


def test_wheel_enables_both_extensions_without_node(
    dist: Dist, built_labextension: Path, tmp_path: Path
) -> None:
    prefix = tmp_path / "venv"
    python = fresh_env(prefix, dist.wheel)
    shipped = prefix / "share" / "jupyter" / "labextensions" / "jupyter-hashline"
    assert (shipped / "package.json").is_file()
    assert (shipped / "install.json").is_file()
    assert not (shipped / "package.json").is_symlink()
    built = {p.name for p in (built_labextension / "static").iterdir()}
    assert {p.name for p in (shipped / "static").iterdir()} == built
    assert (
        prefix / "etc" / "jupyter" / "jupyter_server_config.d" / "jupyter_hashline.json"
    ).is_file()
    assert (shipped / "schemas" / "jupyter-hashline" / "sidebar.json").is_file()
    event_schemas = prefix.glob("lib/python*/site-packages/jupyter_hashline/server/event_schemas")
    shipped_schemas = {p.name for d in event_schemas for p in d.iterdir()}
    assert shipped_schemas == {"activity.json", "session.json", "proposal.json"}

    home = tmp_path / "home"
    env = {
        "PATH": path_without_node(tmp_path / "bin", str(prefix / "bin")),
        "HOME": str(home),
        "JUPYTER_CONFIG_DIR": str(home / "config"),
        "JUPYTER_DATA_DIR": str(home / "data"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "LANG": os.environ.get("LANG", "C.UTF-8"),
    }
    labextensions = listing(python, env, "jupyterlab.labextensions")
    section = labextensions.split(str(prefix / "share" / "jupyter" / "labextensions"), 1)
    assert len(section) == 2, f"the fresh environment's labextensions are not listed:\n{section}"
    assert re.search(
        rf"^\s+jupyter-hashline v{re.escape(VERSION)} enabled OK \(python, jupyter-hashline\)$",
        section[1],
        re.M,
    ), labextensions
    servers = listing(python, env, "jupyter_server.extension.serverextension")
    config_dir = prefix / "etc" / "jupyter"
    assert str(config_dir) in servers, servers  # enabled by the wheel's own config file
    assert re.search(r"^\s*jupyter_hashline enabled$", servers, re.M), servers
    assert re.search(rf"^\s*jupyter_hashline {re.escape(VERSION)} OK$", servers, re.M), servers


def test_the_sdist_builds_a_wheel_without_node(dist: Dist, tmp_path: Path) -> None:
    """What pip does with the sdist where Node is absent: the prebuilt sidebar is reused."""
    out = tmp_path / "rebuilt"
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "--no-index", "--quiet", "-w", str(out), str(dist.sdist)],
        env=dict(os.environ, PATH=path_without_node(tmp_path / "bin")),
        capture_output=True,
        text=True,
        timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    with zipfile.ZipFile(out / dist.wheel.name) as rebuilt, zipfile.ZipFile(dist.wheel) as made:
        assert sorted(rebuilt.namelist()) == sorted(made.namelist())
