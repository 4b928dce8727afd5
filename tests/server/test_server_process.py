"""The extension as installed: listed as enabled and OK, tags surviving a server restart, the
benchmark's smoke run, and the top-level package staying light."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from bench.server import LocalServer
from jupyter_hashline import __version__
from jupyter_hashline.hashline.sqlite_store import SqliteSnapshotStore

REPO = Path(__file__).resolve().parents[2]
JUPYTER = Path(sys.executable).with_name("jupyter")


@pytest.mark.slow
def test_extension_is_listed_enabled_and_ok(tmp_path: Path) -> None:
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(tmp_path / "config"))
    done = subprocess.run(
        [str(JUPYTER), "server", "extension", "list"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    rows = [
        re.sub(r"\x1b\[[0-9;]*m", "", row).strip()
        for row in (done.stdout + done.stderr).split("\n")
    ]
    assert "jupyter_hashline enabled" in rows, rows
    checked = rows.index("- Validating jupyter_hashline...")
    assert rows[checked + 1] == f"jupyter_hashline {__version__} OK"


def test_the_config_file_enables_the_extension() -> None:
    config = json.loads((REPO / "jupyter-config/server-config/jupyter_hashline.json").read_text())
    assert config == {"ServerApp": {"jpserver_extensions": {"jupyter_hashline": True}}}


@pytest.mark.slow
def test_tags_survive_a_server_restart(tmp_path: Path) -> None:
    root, home = tmp_path / "root", tmp_path / "home"
    root.mkdir()
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = 1", id="keep")]
    nbformat.write(nb, root / "nb.ipynb")
    with LocalServer(root, home) as server:
        header = server.client().read("nb.ipynb")["header"]
    stores = list((home / "data" / "jupyter_hashline").glob("snapshots-*.sqlite3"))
    assert len(stores) == 1
    with SqliteSnapshotStore(stores[0]) as store:  # a new store object on the same file
        assert store.head("nb.ipynb") is not None
        assert store.head("nb.ipynb").tag == header[-5:-1]
    with LocalServer(root, home) as server:  # a new server process: a new app, a new store
        reply = server.client().patch(f"{header}\nreplace 2:\n+x = 2\n")
    assert reply["sections"][0]["op"] == "update"
    assert nbformat.read(root / "nb.ipynb", as_version=4).cells[0].source == "x = 2"


def test_importing_the_package_does_not_load_the_server() -> None:
    code = (
        "import sys, jupyter_hashline, jupyter_hashline.hashline; "
        "assert 'tornado' not in sys.modules and 'jupyter_server' not in sys.modules; "
        "points = jupyter_hashline._jupyter_server_extension_points(); "
        "assert points[0]['app'].name == 'jupyter_hashline'; "
        "assert 'tornado' in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
