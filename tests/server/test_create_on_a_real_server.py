"""Creating a notebook, the first thing a new user does, through every surface that speaks to a
real `jupyter server` as installed (jupytext's contents manager replaces the stock one): REST,
the CLI with `--server` and MCP with `--server`, in the root and in a subfolder; a missing
folder is refused naming it, and nothing is created."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator

import nbformat
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from bench.server import TOKEN, LocalServer

CELL = "# %% [code]\nz = 1\n"
Create = Callable[[str], Awaitable[tuple[bool, str]]]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    base = tmp_path_factory.mktemp("create")
    root = base / "root"
    root.mkdir()
    with LocalServer(root, base / "home") as running:
        yield running


def url(server: LocalServer) -> str:
    return f"http://127.0.0.1:{server.port}/"


async def rest_create(server: LocalServer, path: str) -> tuple[bool, str]:
    status, body = server.client().request(
        "POST", "/hashline/write", {"path": path, "content": CELL}
    )
    return status == 200, str(body)


async def cli_create(server: LocalServer, path: str) -> tuple[bool, str]:
    args = ["--server", url(server), "--token", TOKEN, "write", path, "-"]
    done = subprocess.run(
        [sys.executable, "-m", "jupyter_hashline.cli", *args],
        input=CELL, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    return done.returncode == 0, done.stdout + done.stderr


async def mcp_create(server: LocalServer, path: str) -> tuple[bool, str]:
    args = ["-m", "jupyter_hashline.cli", "--server", url(server), "--token", TOKEN, "mcp"]
    async with Client(StdioServerParameters(command=sys.executable, args=args)) as client:
        result = await client.call_tool("notebook_write", {"path": path, "content": CELL})
    return not result.is_error, result.content[0].text


SURFACES = {"rest": rest_create, "cli --server": cli_create, "mcp --server": mcp_create}


@pytest.mark.slow
@pytest.mark.parametrize("surface", SURFACES)
@pytest.mark.parametrize("folder", ["", "sub/"])
async def test_a_new_notebook_is_created(server: LocalServer, surface: str, folder: str) -> None:
    name = surface.replace(" --", "-")
    (server.root / "sub").mkdir(exist_ok=True)
    path = f"{folder}{name}.ipynb"
    ok, reply = await SURFACES[surface](server, path)
    assert ok, reply
    assert "created" in reply
    stored = nbformat.read(server.root / path, as_version=4)
    assert [(c.cell_type, c.source) for c in stored.cells] == [("code", "z = 1")]


@pytest.mark.slow
@pytest.mark.parametrize("surface", SURFACES)
async def test_a_missing_folder_is_named_and_nothing_is_created(
    server: LocalServer, surface: str
) -> None:
    folder = f"missing-{surface.replace(' --', '-')}"
    ok, reply = await SURFACES[surface](server, f"{folder}/fresh.ipynb")
    assert not ok
    assert f"the folder {folder} does not exist" in reply
    assert not (server.root / folder).exists()
