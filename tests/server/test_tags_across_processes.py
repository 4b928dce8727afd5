"""Tags across processes on one root: a user's lab (a real `jupyter server`) and their agent's
directory-mode command line, or two servers (JupyterHub's named servers), each with a store.

With one store (the default when both see the same Jupyter data dir, or one
`c.HashlineExtension.store_path`), a tag one process issued edits through the other. With two,
the tag is refused with a message that says where this process keeps its tags and how to share
them, nothing is written, and after a read there everything keeps working: the other process's
own stale tag is then rebased over the change as any stale edit is."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from testkit.scenario import NOTEBOOK

from bench.server import LocalServer

pytestmark = pytest.mark.slow

CLI = [sys.executable, "-m", "jupyter_hashline.cli"]


def cli(
    root: Path, data: Path, *argv: str, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """The command line on `root`, with `data` as its Jupyter data dir (where its store is)."""
    env = {**os.environ, "JUPYTER_DATA_DIR": str(data)}
    env.pop("JUPYTER_HASHLINE_STORE", None)
    return subprocess.run(
        [*CLI, "--root", str(root), *argv], input=stdin, env=env, capture_output=True,
        text=True, timeout=120,
    )  # fmt: skip


def tail_edit(header: str, row: str) -> str:
    return f"{header}\ninsert tail:\n+{row}\n"


def last_cell(root: Path) -> str:
    return str(nbformat.read(root / NOTEBOOK, as_version=4).cells[-1].source)


def test_a_lab_and_an_agents_command_line_share_tags_through_one_store(
    root: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    with LocalServer(root, home) as server:
        header = server.client().read(NOTEBOOK)["header"]
        done = cli(root, home / "data", "patch", stdin=tail_edit(header, "# from the cli"))
        assert done.returncode == 0, done.stderr
        assert last_cell(root).endswith("# from the cli")
        # the lab's own tag is stale now: its edit is rebased over the command line's
        landed = server.client().patch(f"{header}\ninsert after 2:\n+from the lab\n")
        assert "updated" in landed["text"], landed
    source = nbformat.read(root / NOTEBOOK, as_version=4)
    assert source.cells[0].source == "# Sales analysis\nfrom the lab"
    assert source.cells[-1].source.endswith("# from the cli")


def test_with_two_stores_a_tag_from_the_lab_is_refused_saying_where_tags_live(
    root: Path, tmp_path: Path
) -> None:
    home, elsewhere = tmp_path / "home", tmp_path / "agent-data"
    with LocalServer(root, home) as server:
        header = server.client().read(NOTEBOOK)["header"]
        before = (root / NOTEBOOK).read_bytes()
        done = cli(root, elsewhere, "patch", stdin=tail_edit(header, "# from the cli"))
        assert done.returncode == 1 and (root / NOTEBOOK).read_bytes() == before
        store = next((elsewhere / "jupyter_hashline").glob("snapshots-*.sqlite3"))
        assert f"is not a tag the snapshot store {store} holds for {NOTEBOOK}" in done.stderr
        read = cli(root, elsewhere, "read", NOTEBOOK)  # what the refusal says to do
        again = cli(root, elsewhere, "patch", stdin=tail_edit(read.stdout.split("\n")[0], "# cli"))
        assert again.returncode == 0, again.stderr
        landed = server.client().patch(f"{header}\ninsert after 2:\n+from the lab\n")
        assert "updated" in landed["text"], landed
    assert last_cell(root).endswith("# cli")


def test_two_named_servers_on_one_root_refuse_each_others_tags_unless_they_share_a_store(
    root: Path, tmp_path: Path
) -> None:
    with (
        LocalServer(root, tmp_path / "one") as one,
        LocalServer(root, tmp_path / "two") as two,
    ):
        header = one.client().read(NOTEBOOK)["header"]
        before = (root / NOTEBOOK).read_bytes()
        status, refused = two.client().request(
            "POST", "/hashline/patch", {"patch": tail_edit(header, "# two")}
        )
        assert (status, refused["error"]) == (409, "unknown_tag"), refused
        store = next((tmp_path / "two" / "data" / "jupyter_hashline").glob("snapshots-*.sqlite3"))
        assert f"Tags here are kept in the snapshot store {store}:" in refused["message"]
        assert "two named servers" in refused["message"]
        assert "c.HashlineExtension.store_path" in refused["message"]
        assert (root / NOTEBOOK).read_bytes() == before
    shared = f"--HashlineExtension.store_path={tmp_path / 'shared.sqlite3'}"
    with (
        LocalServer(root, tmp_path / "one", extra_args=(shared,)) as one,
        LocalServer(root, tmp_path / "two", extra_args=(shared,)) as two,
    ):
        header = one.client().read(NOTEBOOK)["header"]
        landed = two.client().patch(tail_edit(header, "# two"))
        assert "updated" in landed["text"], landed
        assert one.client().read(NOTEBOOK)["header"] == landed["sections"][0]["header"]
    assert last_cell(root).endswith("# two")
