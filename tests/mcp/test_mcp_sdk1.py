"""The MCP SDK 1.x, as Jupyter AI 3.2.0 brings it: `jupyter-hashline mcp` serves a 1.x client
over stdio, and the jupyter-server-mcp registration's tools are listed and callable through
jupyter-server-mcp 0.3 running in a real Jupyter server.

Both run in a separate venv (`pip install jupyter-ai==3.2.0` and this project, editable), built
once and cached outside the repository (`$HASHLINE_SDK1_VENV`, default under
`~/.cache/jupyter-hashline/`), keyed by this checkout and its pyproject; the scripts in sdk1/
are the 1.x clients, run with that venv's Python. (The main venv has the 2.x SDK; the other
tests in this folder drive it.)
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from PIL import Image
from testkit.cells import PNG_CELL
from testkit.scenario import NOTEBOOK

from jupyter_hashline.server.mcp_tools import DEFAULT_TOOLS
from jupyter_hashline.tools import mcp_definitions

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = Path(__file__).parent / "sdk1"
JUPYTER_AI = "jupyter-ai==3.2.0"
BUILD_TIMEOUT_S = 900


def venv_dir() -> Path:
    if os.environ.get("HASHLINE_SDK1_VENV"):
        return Path(os.environ["HASHLINE_SDK1_VENV"])
    key = hashlib.sha256(
        f"{REPO}\n{sys.version}\n{JUPYTER_AI}\n".encode() + (REPO / "pyproject.toml").read_bytes()
    ).hexdigest()[:12]
    return Path.home() / ".cache" / "jupyter-hashline" / f"venv-jupyter-ai-3.2.0-{key}"


@pytest.fixture(scope="session")
def sdk1_python() -> Path:
    """The Python of the jupyter-ai 3.2.0 venv, built on first use (a few minutes, online)."""
    venv = venv_dir()
    python = venv / "bin" / "python"
    if (venv / ".ready").is_file():
        return python
    shutil.rmtree(venv, ignore_errors=True)
    venv.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    install = [str(python), "-m", "pip", "install", "-q", JUPYTER_AI, "-e", str(REPO)]
    done = subprocess.run(install, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
    assert done.returncode == 0, f"building the jupyter-ai venv failed:\n{done.stderr[-3000:]}"
    (venv / ".ready").write_text(json.dumps({"python": sys.version, "repo": str(REPO)}))
    return python


def run_script(python: Path, script: str, *args: str, env: dict[str, str]) -> dict[str, Any]:
    done = subprocess.run(
        [str(python), str(SCRIPTS / script), *args],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_the_stdio_server_serves_an_sdk1_client(sdk1_python: Path, root: Path) -> None:
    seen = run_script(sdk1_python, "stdio_client.py", str(root), env=dict(os.environ))
    assert seen["mcp"].startswith("1."), seen["mcp"]
    definitions = mcp_definitions()
    assert [(t["name"], t["title"], t["annotations"]) for t in seen["tools"]] == [
        (d["name"], d["title"], d["annotations"]) for d in definitions
    ]
    assert [t["inputSchema"] for t in seen["tools"]] == [d["inputSchema"] for d in definitions]
    is_error, view = seen["read"]
    assert not is_error and view.startswith("[analysis.ipynb#")
    is_error, reply = seen["edit"]
    assert not is_error and "prefix" in reply, reply
    is_error, wrong = seen["wrong"]
    assert is_error and "`offset` must be a whole number >= 1" in wrong


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, server: subprocess.Popen[str], timeout_s: float = 90.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert server.poll() is None, "the Jupyter server exited early"
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.25)
    raise AssertionError(f"nothing listened on port {port} within {timeout_s} s")


@pytest.fixture
def jupyter_server_with_mcp(
    sdk1_python: Path, root: Path, tmp_path: Path
) -> Iterator[tuple[int, Path]]:
    """A Jupyter server of the jupyter-ai venv on `root`, with jupyter_hashline and
    jupyter-server-mcp; yields the MCP port and the server's log."""
    config = tmp_path / "config"
    config.mkdir()
    mcp_port = free_port()
    (config / "jupyter_server_config.json").write_text(
        json.dumps(
            {
                "ServerApp": {"jpserver_extensions": {"jupyter_hashline": True}},
                "MCPExtensionApp": {"mcp_port": mcp_port},
            }
        )
    )
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(config), "JUPYTER_RUNTIME_DIR": str(tmp_path)}
    jupyter = sdk1_python.parent / "jupyter"
    args = [str(jupyter), "server", "--allow-root", "--no-browser", f"--port={free_port()}"]
    args += [f"--ServerApp.root_dir={root}", "--IdentityProvider.token=sdk1-test"]
    log = (tmp_path / "server.log").open("w")
    server = subprocess.Popen(args, env=env, stdout=log, stderr=subprocess.STDOUT, text=True)
    try:
        wait_for_port(mcp_port, server)
        yield mcp_port, tmp_path / "server.log"
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


def test_jupyter_server_mcp_lists_and_runs_the_registered_tools(
    sdk1_python: Path, jupyter_server_with_mcp: tuple[int, Path], root: Path
) -> None:
    port, log = jupyter_server_with_mcp
    url = f"http://127.0.0.1:{port}/mcp"
    write_figure_notebook(root / "fig.ipynb")
    seen = run_script(sdk1_python, "server_mcp_client.py", url, env=dict(os.environ))
    versions = seen["versions"]
    assert versions["mcp"].startswith("1.") and versions["jupyter-server-mcp"].startswith("0.3")
    ours = [name for name in seen["names"] if name.startswith("notebook_")]
    assert sorted(ours) == sorted(DEFAULT_TOOLS), log.read_text()[-3000:]
    assert "notebook_write" not in seen["names"]
    assert seen["schemas"]["notebook_read"]["required"] == ["path"]
    is_error, view = seen["read"]
    assert not is_error and "⎿ outputs: stream (1 line)" in view
    is_error, reply = seen["edit"]
    assert not is_error and "updated" in reply and "prefix" in reply, reply
    is_error, outputs = seen["outputs"]
    assert not is_error and "loaded 120 rows" in outputs
    is_error, stale = seen["stale"]
    assert is_error and "changed since your read" in stale
    assert "print(round(total))" in (root / NOTEBOOK).read_text()
    is_error, (text, caption, image) = seen["figure"]  # Jupyter AI's host takes images
    assert (
        not is_error and "image attached: cell plot output [1], image/png 300x200" in text["text"]
    )
    assert caption["text"].startswith("image attached: cell plot output [1]")
    assert (image["type"], image["mimeType"]) == ("image", "image/png")
    with Image.open(io.BytesIO(base64.b64decode(image["data"]))) as decoded:
        assert decoded.size == (300, 200)


def write_figure_notebook(path: Path) -> None:
    """A notebook whose cell `plot` holds a 300x200 PNG output, as a run left it."""
    picture = io.BytesIO()
    Image.new("RGB", (300, 200), (200, 40, 40)).save(picture, format="PNG")
    data = {"image/png": base64.b64encode(picture.getvalue()).decode(), "text/plain": "<Figure>"}
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("plot()", id="plot", execution_count=1)
    cell.outputs = [nbformat.v4.new_output("display_data", data=data)]
    nb.cells = [cell]
    nbformat.write(nb, path)


def test_an_sdk1_client_gets_the_figure_evals_and_restarts_the_kernel(
    sdk1_python: Path, root: Path
) -> None:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    nb.cells = [nbformat.v4.new_code_cell(PNG_CELL + "answer = 42\n", id="plot")]
    nbformat.write(nb, root / "fig.ipynb")
    seen = run_script(sdk1_python, "stdio_kernel_client.py", str(root), env=dict(os.environ))
    assert seen["mcp"].startswith("1."), seen["mcp"]
    is_error, (text, caption, image) = seen["run"]
    assert (
        not is_error and "image attached: cell plot output [1], image/png 640x480" in text["text"]
    )
    assert caption["text"].startswith("image attached: cell plot output [1]")
    assert (image["type"], image["mimeType"]) == ("image", "image/png")
    with Image.open(io.BytesIO(base64.b64decode(image["data"]))) as decoded:
        assert decoded.size == (640, 480)
    is_error, probe = seen["eval"]
    assert not is_error and "[1] execute_result\n43" in probe, probe
    is_error, restart = seen["restart"]
    assert not is_error and "restarted the kernel python3" in restart, restart
    is_error, gone = seen["gone"]
    assert not is_error and "NameError" in gone
