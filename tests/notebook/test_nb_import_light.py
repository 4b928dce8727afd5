"""The notebook layer sits below the server: importing it loads neither tornado nor
jupyter_server, and jupytext (which loads both) only when a jupytext projection is used."""

from __future__ import annotations

import subprocess
import sys

SERVER_SIDE = ("tornado", "jupyter_server", "jupytext", "ipywidgets")


def loaded_after(code: str) -> list[str]:
    probe = f"import sys\n{code}\nprint(','.join(m for m in {SERVER_SIDE!r} if m in sys.modules))"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=False, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return [m for m in done.stdout.strip().split(",") if m]


def test_notebook_layer_loads_no_server_code() -> None:
    assert loaded_after("import jupyter_hashline.notebook") == []


def test_jupytext_is_loaded_for_a_jupytext_projection_only() -> None:
    code = (
        "from jupyter_hashline.hashline import InMemoryFilesystem\n"
        "from jupyter_hashline.notebook import NotebookFilesystem\n"
        "NotebookFilesystem(InMemoryFilesystem(), projection='py:percent')"
    )
    assert "jupytext" in loaded_after(code)
