"""A Jupyter server killed with SIGKILL in the middle of saving an agent's edit.

A real `jupyter server` process with jupyter_hashline; its contents manager is Jupyter's own,
with a test-only hook (testkit/pausing_contents.py) that holds a notebook save after Jupyter's
atomic writer copied the old file to its `.~` intermediate and half of the new JSON reached the
target. The test kills the server there (`kill -9`), restarts it on the same root and store,
and then: the notebook reads (through hashline and through Jupyter's own contents API) as the
old notebook or the new one, never torn; every edit acknowledged before the kill is there;
and the agent's retry of the unacknowledged edit lands once. Judged by the fault oracle.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import nbformat
import pytest
from testkit.faults import Edit

from bench.server import LocalServer

HERE = Path(__file__).resolve().parent
HOOK = ("--ServerApp.contents_manager_class=testkit.pausing_contents.PausingContentsManager",)


def make_notebook(path: Path) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(f"v{n} = {n}\nprint(v{n})", id=f"c{n}") for n in range(3)]
    for n, cell in enumerate(nb.cells):
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=f"{n}\n" * 200)]
        cell.execution_count = n + 1
    nbformat.write(nb, path)


def wait_for(path: Path, limit_s: float = 60.0) -> None:
    deadline = time.monotonic() + limit_s
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.05)


@pytest.fixture
def hooked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The pause trigger's path; the hook's module importable by the server process."""
    trigger = tmp_path / "pause"
    monkeypatch.setenv("HASHLINE_TEST_PAUSE", str(trigger))
    tests = str(HERE.parent)  # testkit.pausing_contents is imported from there
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([tests, os.environ.get("PYTHONPATH", "")]))
    return trigger


def test_a_server_killed_mid_save_leaves_the_old_or_the_new_notebook(
    tmp_path: Path, hooked: Path, fault: Any
) -> None:
    root, home = tmp_path / "root", tmp_path / "home"
    root.mkdir()
    make_notebook(root / "nb.ipynb")
    # Jupyter's own open of the torn notebook sets it aside as `nb.ipynb.invalid` (evidence)
    with fault(root, aside=("nb.ipynb.invalid",)) as trial:
        header = _edits_then_kill(root, home, hooked, trial)
        hooked.unlink()
        with LocalServer(root, home, extra_args=HOOK) as server:
            client = server.client()
            view = client.read("nb.ipynb")["view"]  # hashline reads it: not torn
            assert "2:v0 = 10" in view and "5:v1 = 11" in view
            assert not (root / "nb.ipynb.invalid").exists()  # hashline's read touched nothing
            status, model = client.request("GET", "/api/contents/nb.ipynb")
            assert status == 200 and model["type"] == "notebook"
            retry = client.patch(f"{header}\nreplace 8:\n+v2 = 12\n")  # the unacknowledged edit
            assert retry["sections"][0]["written"]
            trial.acknowledge(Edit("nb.ipynb", "replace", 1, "v2 = 12", cell=2))
            again = client.request(
                "POST", "/hashline/patch", {"patch": f"{header}\nreplace 8:\n+v2 = 12\n"}
            )
            assert again[0] == 409  # a second retry is stale: never applied twice
    assert nbformat.read(root / "nb.ipynb", as_version=4).cells[2].source == "v2 = 12\nprint(v2)"


def _edits_then_kill(root: Path, home: Path, trigger: Path, trial: Any) -> str:
    """Two acknowledged edits, then a third whose save is killed halfway; its header."""
    with LocalServer(root, home, extra_args=HOOK) as server:
        client = server.client()
        header = client.read("nb.ipynb")["header"]
        for line, text, cell in ((2, "v0 = 10", 0), (5, "v1 = 11", 1)):
            reply = client.patch(f"{header}\nreplace {line}:\n+{text}\n")
            assert reply["sections"][0]["written"]
            trial.acknowledge(Edit("nb.ipynb", "replace", 1, text, cell=cell))
            header = reply["sections"][0]["header"]
        trigger.touch()
        trial.outcome_unknown(Edit("nb.ipynb", "replace", 1, "v2 = 12", cell=2))
        stuck = server.client()
        patch = f"{header}\nreplace 8:\n+v2 = 12\n"
        threading.Thread(target=_quietly, args=(stuck, patch), daemon=True).start()
        wait_for(Path(f"{trigger}.paused"))
        torn = (root / "nb.ipynb").read_bytes()
        with pytest.raises(ValueError):
            nbformat.reads(
                torn.decode("utf-8", "replace"), as_version=4
            )  # the kill lands mid-write
        assert server.proc is not None
        os.kill(server.proc.pid, signal.SIGKILL)
        server.proc.wait(timeout=30)
    return header


def _quietly(client: Any, patch: str) -> None:
    with contextlib.suppress(OSError):  # the server is killed while this request waits
        client.request("POST", "/hashline/patch", {"patch": patch})
