"""`jupyter-hashline mcp --print-config HOST`: what an agent host needs to start the server.

The printed entries are used as a host would use them: the JSON ones are parsed, the
`claude mcp add` line is split as a shell would, and the command found there is started as a
stdio MCP server by the `mcp` SDK's own client, which lists the tools.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from bench.server import TOKEN, LocalServer
from jupyter_hashline.mcp.hosts import Host, Launch, default_executable, host_config
from jupyter_hashline.tools import REVIEW_TOOL_NAMES, TOOL_NAMES

CLI = [sys.executable, "-m", "jupyter_hashline.cli"]


def print_config(*argv: str) -> tuple[str, str]:
    done = subprocess.run(
        [*CLI, *argv], capture_output=True, text=True, check=True, env=os.environ.copy()
    )
    return done.stdout, done.stderr


def entry_of(host: Host, text: str) -> Launch:
    key = "servers" if host is Host.VSCODE else "mcpServers"
    entry = json.loads(text)[key]["jupyter-hashline"]
    if host is Host.VSCODE:
        assert entry["type"] == "stdio"
    return Launch(entry["command"], tuple(entry["args"]), entry.get("env", {}))


async def listed_tools(launch: Launch) -> list[str]:
    env = {"JUPYTER_DATA_DIR": os.environ["JUPYTER_DATA_DIR"], **launch.env}
    params = StdioServerParameters(command=launch.command, args=list(launch.args), env=env)
    async with Client(params) as client:
        return [tool.name for tool in (await client.list_tools()).tools]


@pytest.mark.slow
@pytest.mark.parametrize("host", [Host.CLAUDE_DESKTOP, Host.CURSOR, Host.VSCODE])
async def test_the_json_entries_start_a_server_that_lists_the_tools(host: Host, root: Path) -> None:
    text, where = print_config("--root", str(root), "mcp", "--print-config", host.value)
    launch = entry_of(host, text)
    assert Path(launch.command).is_absolute()
    assert launch.args[-3:] == ("--root", str(root.resolve()), "mcp")
    assert where.strip()  # where to paste it goes to stderr, keeping stdout pure JSON
    assert await listed_tools(launch) == list(TOOL_NAMES)


@pytest.mark.slow
async def test_the_claude_code_line_adds_a_server_that_lists_the_tools(root: Path) -> None:
    text, _ = print_config("--root", str(root), "mcp", "--print-config", "claude-code")
    words = shlex.split(text)
    assert words[:4] == ["claude", "mcp", "add", "jupyter-hashline"]
    command, *args = words[words.index("--") + 1 :]
    assert await listed_tools(Launch(command, tuple(args))) == list(TOOL_NAMES)


@pytest.mark.slow
async def test_a_reviewers_entry_starts_a_server_that_lists_the_review_tools_too(
    root: Path,
) -> None:
    argv = ("--root", str(root), "mcp", "--print-config", Host.CURSOR.value, "--review")
    launch = entry_of(Host.CURSOR, print_config(*argv)[0])
    assert launch.args[-2:] == ("mcp", "--review")
    assert await listed_tools(launch) == [*TOOL_NAMES, *REVIEW_TOOL_NAMES]


def test_a_server_entry_carries_the_token_in_its_environment_not_its_arguments() -> None:
    argv = ["--server", "http://127.0.0.1:8888/", "--token", "s3cret", "mcp", "--print-config"]
    entry = entry_of(Host.CURSOR, print_config(*argv, "cursor")[0])
    assert entry.env == {"JUPYTER_TOKEN": "s3cret"}
    assert "s3cret" not in " ".join(entry.args)
    assert entry.args[-3:] == ("--server", "http://127.0.0.1:8888/", "mcp")
    line = print_config(*argv, "claude-code")[0]
    assert "-e JUPYTER_TOKEN=s3cret --" in line


def test_jupyter_ai_gets_steps_not_a_command() -> None:
    text, _ = print_config("mcp", "--print-config", "jupyter-ai")
    assert "jupyter-ai" in text and "server_mcp_tools" in text
    assert "jupyter_server_mcp.tools" in text and "no\n   Jupyter token" in text


def test_an_unknown_host_is_a_usage_error() -> None:
    done = subprocess.run(
        [*CLI, "mcp", "--print-config", "emacs"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 2 and "invalid choice: 'emacs'" in done.stderr


def test_the_executable_is_the_console_script_beside_python_else_python_m(tmp_path: Path) -> None:
    script = tmp_path / "jupyter-hashline"
    python = str(tmp_path / "python")
    assert default_executable(python, script) == (python, "-m", "jupyter_hashline.cli")
    script.write_text("#!/bin/sh\n")
    assert default_executable(python, script) == (str(script),)


def test_vscode_uses_its_servers_key() -> None:
    config = host_config(Host.VSCODE, Launch("/venv/bin/jupyter-hashline", ("mcp",)))
    assert json.loads(config.text) == {
        "servers": {
            "jupyter-hashline": {
                "type": "stdio",
                "command": "/venv/bin/jupyter-hashline",
                "args": ["mcp"],
            }
        }
    }


def test_the_vscode_entry_asks_for_the_token_instead_of_storing_it() -> None:
    argv = ["--server", "http://127.0.0.1:8888/", "--token", "s3cret", "mcp", "--print-config"]
    text, where = print_config(*argv, "vscode")
    assert "s3cret" not in text  # .vscode/mcp.json is a file teams commit
    config = json.loads(text)
    (prompt,) = config["inputs"]
    assert prompt["type"] == "promptString" and prompt["password"] is True
    assert "jupyter server list" in prompt["description"]
    entry = config["servers"]["jupyter-hashline"]
    assert entry["env"] == {"JUPYTER_TOKEN": f"${{input:{prompt['id']}}}"}
    assert "asks for it" in where
    # without a token at hand the entry is the same: the token is always asked for
    assert json.loads(print_config(*argv[:2], *argv[4:], "vscode")[0]) == config
    # no server, no secret: no inputs
    assert "inputs" not in json.loads(print_config("mcp", "--print-config", "vscode")[0])


def vscode_launch(text: str, answers: dict[str, str]) -> Launch:
    """The server entry of a VS Code `mcp.json` with each `${input:ID}` answered, as VS Code
    does when it starts the server."""
    config = json.loads(text)
    entry = config["servers"]["jupyter-hashline"]
    env = dict(entry.get("env", {}))
    for prompt in config.get("inputs", []):
        for name, value in env.items():
            env[name] = value.replace(f"${{input:{prompt['id']}}}", answers[prompt["id"]])
    return Launch(entry["command"], tuple(entry["args"]), env)


@pytest.mark.slow
async def test_the_vscode_entry_with_the_token_answered_edits_through_the_server(
    root: Path, tmp_path: Path
) -> None:
    with LocalServer(root, tmp_path / "home") as server:
        url = f"http://127.0.0.1:{server.port}/"
        text, _ = print_config("--server", url, "mcp", "--print-config", "vscode")
        launch = vscode_launch(text, {"jupyter-token": TOKEN})
        env = {"JUPYTER_DATA_DIR": os.environ["JUPYTER_DATA_DIR"], **launch.env}
        params = StdioServerParameters(command=launch.command, args=list(launch.args), env=env)
        async with Client(params) as client:
            result = await client.call_tool("notebook_read", {"path": "analysis.ipynb"})
    assert not result.is_error and result.content[0].text.startswith("[analysis.ipynb#")
