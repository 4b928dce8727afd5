"""What to paste into an agent host so it starts `jupyter-hashline mcp`.

`jupyter-hashline [global options] mcp --print-config HOST` prints, for HOST:

- `claude-desktop`, `cursor`: a JSON object with an `mcpServers` entry;
- `vscode`: a JSON object with a `servers` entry (VS Code's `mcp.json`);
- `claude-code`: the `claude mcp add ...` command line;
- `jupyter-ai`: what to install and configure (Jupyter AI runs the tools inside the Jupyter
  server through jupyter-server-mcp's entry point; there is no command to start).

Invariants:
- Every path printed is absolute: hosts such as Claude Desktop start servers without the
  shell's PATH or working directory, so `jupyter-hashline` alone would not be found there.
- The entry starts the same server with the same global options as the command that printed
  it (root or server URL, store, whether cells may run), so pasting it reproduces the setup.
- A server token goes into the entry's environment (`JUPYTER_TOKEN`), never into its
  arguments, which other local users can read in the process list.
- VS Code's entry never holds a secret: `.vscode/mcp.json` is a file teams commit, so each
  secret environment variable is a `${input:ID}` whose `inputs` entry makes VS Code ask for
  it once (`promptString`, `password: true`) and keep it in its secret storage.
- Pure: values in, text out. The caller finds the executable and prints.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

SERVER_NAME = "jupyter-hashline"
TOKEN_ENV = "JUPYTER_TOKEN"

__all__ = [
    "SERVER_NAME",
    "Host",
    "HostConfig",
    "Launch",
    "default_executable",
    "host_config",
    "launch_command",
]


class Host(str, Enum):
    """The agent hosts `--print-config` knows."""

    CLAUDE_DESKTOP = "claude-desktop"
    CURSOR = "cursor"
    VSCODE = "vscode"
    CLAUDE_CODE = "claude-code"
    JUPYTER_AI = "jupyter-ai"


@dataclass(frozen=True, slots=True)
class Launch:
    """How a host starts the stdio server: an absolute command, its arguments, environment."""

    command: str
    args: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)
    secret_env: frozenset[str] = frozenset()
    """Names of environment variables holding secrets (set in `env` or not): hosts that can
    ask for a secret (VS Code) ask instead of storing `env`'s value."""


@dataclass(frozen=True, slots=True)
class HostConfig:
    """What to paste (`text`) and where it goes (`where`, for a person to read)."""

    text: str
    where: str


def launch_command(executable: Sequence[str], global_args: Sequence[str]) -> tuple[str, ...]:
    """`executable` (the absolute program and its leading arguments) + options + `mcp`."""
    return (*executable, *global_args, "mcp")


def _launch_json(launch: Launch, *, with_type: bool) -> dict[str, object]:
    entry: dict[str, object] = {"type": "stdio"} if with_type else {}
    entry["command"] = launch.command
    entry["args"] = list(launch.args)
    if launch.env:
        entry["env"] = dict(launch.env)
    return entry


def _input_id(name: str) -> str:
    return name.lower().replace("_", "-")


def _vscode_json(launch: Launch) -> dict[str, object]:
    """VS Code's `mcp.json`: the server entry, each secret asked for through an input."""
    entry = _launch_json(launch, with_type=True)
    if not launch.secret_env:
        return {"servers": {SERVER_NAME: entry}}
    env = {name: value for name, value in launch.env.items() if name not in launch.secret_env}
    inputs = []
    for name in sorted(launch.secret_env):
        env[name] = f"${{input:{_input_id(name)}}}"
        inputs.append(
            {
                "type": "promptString",
                "id": _input_id(name),
                "description": _SECRET_PROMPTS.get(name, name),
                "password": True,
            }
        )
    entry["env"] = env
    return {"inputs": inputs, "servers": {SERVER_NAME: entry}}


_SECRET_PROMPTS = {
    TOKEN_ENV: "Token of the Jupyter server (the token= part of the URL that `jupyter server "
    "list` prints)",
}


def _json(value: object) -> str:
    return json.dumps(value, indent=2) + "\n"


def host_config(host: Host, launch: Launch, *, version: str = "") -> HostConfig:
    """The text to paste into `host` for `launch` (see the module docstring)."""
    if host is Host.VSCODE:
        return HostConfig(_json(_vscode_json(launch)), _WHERE[host])
    if host is Host.CLAUDE_CODE:
        words = ["claude", "mcp", "add", SERVER_NAME]
        for name, value in launch.env.items():
            words += ["-e", f"{name}={value}"]
        words += ["--", launch.command, *launch.args]
        return HostConfig(shlex.join(words) + "\n", _WHERE[host])
    if host is Host.JUPYTER_AI:
        return HostConfig(_jupyter_ai_text(version), _WHERE[host])
    text = _json({"mcpServers": {SERVER_NAME: _launch_json(launch, with_type=False)}})
    return HostConfig(text, _WHERE[host])


def _jupyter_ai_text(version: str) -> str:
    installed = f"jupyter-hashline {version}" if version else "jupyter-hashline"
    return (
        "Jupyter AI runs the notebook tools inside the Jupyter server: nothing to start.\n"
        f"1. In the environment of the Jupyter server (where {installed} is installed):\n"
        '     pip install "jupyter-ai>=3.2"\n'
        "   It brings jupyter-server-mcp, which finds jupyter-hashline's\n"
        "   `jupyter_server_mcp.tools` entry point by itself.\n"
        "2. Choose the tools it serves, in jupyter_server_config.py. Its port (3001) takes no\n"
        "   Jupyter token, so the default leaves out whole-file writes and running cells:\n"
        "     c.HashlineExtension.server_mcp_tools = [\n"
        '         "notebook_read", "notebook_outputs", "notebook_edit",\n'
        "     ]\n"
        "3. Restart JupyterLab. The agents of Jupyter AI's chat now list the notebook tools.\n"
    )


_WHERE = {
    Host.CLAUDE_DESKTOP: (
        "Merge into Claude Desktop's claude_desktop_config.json (Settings > Developer > Edit "
        "Config; macOS: ~/Library/Application Support/Claude/, Windows: %APPDATA%\\Claude\\), "
        "then restart Claude Desktop."
    ),
    Host.CURSOR: (
        "Merge into ~/.cursor/mcp.json (all projects) or .cursor/mcp.json in a project, then "
        "enable the server in Cursor Settings > MCP."
    ),
    Host.VSCODE: (
        "Merge into .vscode/mcp.json in the workspace (or the user mcp.json: command palette > "
        "MCP: Open User Configuration). A server token is not in it: VS Code asks for it when "
        "the server first starts and keeps it in its secret storage."
    ),
    Host.CLAUDE_CODE: "Run this command in a shell (add `--scope user` for every project).",
    Host.JUPYTER_AI: "Jupyter AI uses the server's entry point; follow the steps above.",
}


def default_executable(python: str, script: Path) -> tuple[str, ...]:
    """The absolute command that starts `jupyter-hashline`: the console script next to the
    interpreter when there is one (as in a virtual environment), else `python -m`."""
    if script.is_file():
        return (str(script),)
    return (python, "-m", "jupyter_hashline.cli")
