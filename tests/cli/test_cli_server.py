"""`jupyter-hashline --server URL` against a Jupyter server process started here: edits go
through its REST API, rejections exit 1, a wrong token or no server exit 2; and a directory
read with `--root` shares the server's snapshot store, so the server accepts its tag."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from testkit.scenario import CHECKS, NOTEBOOK, header_of, line_of, person_edits, write_checks

from bench.server import TOKEN, LocalServer, free_port
from jupyter_hashline.cli import main


def test_the_cli_edits_through_a_jupyter_server(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(home / "data"))  # the server's data dir
    edit = tmp_path / "edit.txt"
    with LocalServer(root, home) as server:
        url = f"http://127.0.0.1:{server.port}/"
        assert main(["--root", str(root), "read", NOTEBOOK]) == 0  # a directory read ...
        view = capsys.readouterr().out
        line = line_of(view, "print(total)")
        edit.write_text(f"{header_of(view)}\nreplace {line}:\n+print(total, flush=True)\n")
        monkeypatch.setenv("JUPYTER_TOKEN", TOKEN)
        assert main(["--server", url, "patch", str(edit)]) == 0  # ... tagged for the server
        assert "updated" in capsys.readouterr().out

        assert main(["--server", url, "read", NOTEBOOK]) == 0
        view = capsys.readouterr().out
        person_edits(root, "total", 'total = df["amount"].sum()\nprint("total", total)')
        line = line_of(view, "print(total, flush=True)")
        edit.write_text(f"{header_of(view)}\nreplace {line}:\n+print(round(total))\n")
        assert main(["--server", url, "patch", str(edit)]) == 1
        assert "Edit rejected" in capsys.readouterr().err

        assert main(["--server", url, "--token", "wrong", "read", NOTEBOOK]) == 2
        assert "send this server's token" in capsys.readouterr().err
    cells = nbformat.read(root / NOTEBOOK, as_version=4).cells
    assert cells[2].source == 'total = df["amount"].sum()\nprint("total", total)'
    assert main(["--server", f"http://127.0.0.1:{free_port()}/", "read", NOTEBOOK]) == 2
    assert "Cannot reach the Jupyter server" in capsys.readouterr().err


@pytest.mark.slow  # two server processes
def test_the_cli_runs_cells_through_a_jupyter_server(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The server runs the cells (no --allow-run needed) and remembers the agent's last edit
    between CLI processes; a read-only server refuses: exit 1."""
    write_checks(root)
    home = tmp_path / "home"
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(home / "data"))
    monkeypatch.setenv("JUPYTER_TOKEN", TOKEN)
    edit = tmp_path / "edit.txt"
    with LocalServer(root, home) as server:
        url = f"http://127.0.0.1:{server.port}/"
        assert main(["--server", url, "read", CHECKS]) == 0
        view = capsys.readouterr().out
        edit.write_text(f"{header_of(view, CHECKS)}\nreplace 5:\n+print(answer + 1)\n")
        assert main(["--server", url, "patch", str(edit)]) == 0
        tag = header_of(capsys.readouterr().out, CHECKS)[-5:-1]
        assert main(["--server", url, "run", CHECKS, "--tag", tag]) == 0
        out = capsys.readouterr().out
        assert "ran 1 of 1 cell" in out and "cell calc: ok" in out and "\n43\n" in out + "\n"
    stored = nbformat.read(root / CHECKS, as_version=4).cells[1]
    assert stored.outputs[0]["text"] == "43\n" and stored.execution_count == 1
    with LocalServer(root, home, extra_args=("--HashlineExtension.read_only=True",)) as server:
        url = f"http://127.0.0.1:{server.port}/"
        assert main(["--server", url, "run", CHECKS, "--tag", tag, "--cell", "calc"]) == 1
        assert "read-only" in capsys.readouterr().err


def test_the_cli_undoes_an_agents_edit_on_a_jupyter_server(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(home / "data"))
    monkeypatch.setenv("JUPYTER_TOKEN", TOKEN)
    edit = tmp_path / "edit.txt"
    before = (root / NOTEBOOK).read_bytes()
    assert main(["revert", "1"]) == 2  # no server: nothing keeps the activity
    assert "revert needs --server" in capsys.readouterr().err
    with LocalServer(root, home) as server:
        url = f"http://127.0.0.1:{server.port}/"
        bot = ["--server", url, "--agent", "bot"]
        assert main([*bot, "read", NOTEBOOK]) == 0
        view = capsys.readouterr().out
        line = line_of(view, "print(total)")
        edit.write_text(f"{header_of(view)}\nreplace {line}:\n+print(total, flush=True)\n")
        assert main([*bot, "patch", str(edit)]) == 0
        assert (root / NOTEBOOK).read_bytes() != before
        capsys.readouterr()
        assert main(["--server", url, "revert", "--by", "bot", "--since-ms", "0"]) == 0
        assert "Undid activity 1" in capsys.readouterr().out
        assert nbformat.read(root / NOTEBOOK, as_version=4) == nbformat.reads(before, 4)
        assert main(["--server", url, "revert", "1"]) == 1  # already undone: refused
        assert "already undone" in capsys.readouterr().err
        assert main(["--server", url, "revert", "77"]) == 2
        assert "No activity 77" in capsys.readouterr().err
