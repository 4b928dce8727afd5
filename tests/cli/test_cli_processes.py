"""The agent story through the CLI, one process per command (`jupyter-hashline` and the
`jupyter hashline` spelling): snapshots persist between processes, a rejected edit exits 1
with its message on stderr and nothing on stdout."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from testkit.scenario import run_edit_scenario

BIN = Path(sys.executable).parent


def cli_command(tool: str, arguments: dict[str, Any]) -> tuple[list[str], str | None]:
    """The CLI arguments (after --root) and stdin for one tool call."""
    if tool == "notebook_read":
        return ["read", arguments["path"]], None
    if tool == "notebook_edit":
        return ["patch", "-"], arguments["patch"]
    if tool == "notebook_write":
        return ["write", arguments["path"], "-"], arguments["content"]
    return ["outputs", arguments["path"], arguments["cell"]], None


@pytest.mark.slow
def test_the_agent_story_across_separate_processes(root: Path) -> None:
    runs: list[tuple[str, subprocess.CompletedProcess[str]]] = []

    def run(tool: str, arguments: dict[str, Any]) -> tuple[bool, str]:
        args, stdin = cli_command(tool, arguments)
        # The first command goes through `jupyter hashline`, the others the console script.
        launcher = (
            [str(BIN / "jupyter"), "hashline"] if not runs else [str(BIN / "jupyter-hashline")]
        )
        done = subprocess.run(
            [*launcher, "--root", str(root), *args],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=60,
        )
        runs.append((tool, done))
        return done.returncode != 0, done.stdout if done.returncode == 0 else done.stderr

    async def call(tool: str, arguments: dict[str, Any]) -> tuple[bool, str]:
        return await asyncio.to_thread(run, tool, arguments)

    asyncio.run(run_edit_scenario(call, root))
    codes = [done.returncode for _, done in runs]
    assert codes.count(1) == 1 and set(codes) == {0, 1}, codes
    rejected = next(done for _, done in runs if done.returncode == 1)
    assert rejected.stdout == ""
    assert rejected.stderr.startswith("Edit rejected: analysis.ipynb changed since your read")
    assert all(done.stderr == "" for _, done in runs if done.returncode == 0)
