"""The wheel ships the prebuilt sidebar: installed into a fresh environment where Node is not
on PATH, `jupyter labextension list` shows jupyter-hashline enabled and OK, from the wheel's
own files under share/jupyter/labextensions/.

To stay fast and offline, the fresh environment gets the wheel with `--no-deps` and borrows
JupyterLab (and the other dependencies) from the project's environment through a `.pth` path
entry; only the wheel's files are installed into it. The labextension paths JupyterLab searches
come from the fresh environment's prefix, so the listing can only find the wheel's copy.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def build_wheel(out: Path) -> Path:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "--quiet", "-w", str(out), str(REPO)],
        check=True,
        timeout=300,
    )  # fmt: skip
    (wheel,) = out.glob("jupyter_hashline-*.whl")
    return wheel


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


def test_wheel_lists_the_sidebar_enabled_and_ok_without_node(
    built_labextension: Path, tmp_path: Path
) -> None:
    wheel = build_wheel(tmp_path / "dist")
    python = fresh_env(tmp_path / "venv", wheel)
    prefix = tmp_path / "venv"
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
    assert {p.name for d in event_schemas for p in d.iterdir()} == {"activity.json", "session.json"}

    home = tmp_path / "home"
    env = {
        "PATH": str(prefix / "bin"),
        "HOME": str(home),
        "JUPYTER_CONFIG_DIR": str(home / "config"),
        "JUPYTER_DATA_DIR": str(home / "data"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "LANG": os.environ.get("LANG", "C.UTF-8"),
    }
    assert shutil.which("node", path=env["PATH"]) is None
    assert shutil.which("npm", path=env["PATH"]) is None
    done = subprocess.run(
        [str(python), "-m", "jupyterlab.labextensions", "list"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    listing = ANSI.sub("", done.stdout + done.stderr)
    assert done.returncode == 0, listing
    section = listing.split(str(prefix / "share" / "jupyter" / "labextensions"), 1)
    assert len(section) == 2, f"the fresh environment's labextensions dir is not listed:\n{listing}"
    assert re.search(
        r"^\s+jupyter-hashline v0\.1\.0 enabled OK \(python, jupyter-hashline\)$",
        section[1],
        re.M,
    ), listing
