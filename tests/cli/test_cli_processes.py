"""The agent stories through the CLI, one process per command (`jupyter-hashline` and the
`jupyter hashline` spelling): snapshots persist between processes, a rejected edit or run
exits 1 with its message on stderr and nothing on stdout, a run whose cell raised exits 0."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from testkit.scenario import run_edit_scenario, run_run_scenario

BIN = Path(sys.executable).parent


def cli_command(tool: str, arguments: dict[str, Any]) -> tuple[list[str], str | None]:
    """The CLI arguments (after --root) and stdin for one tool call."""
    if tool == "notebook_read":
        return ["read", arguments["path"]], None
    if tool == "notebook_edit":
        return ["patch", "-"], arguments["patch"]
    if tool == "notebook_write":
        options = ["--tag", arguments["tag"]] if "tag" in arguments else []
        options += ["--overwrite"] if arguments.get("overwrite") else []
        return ["write", arguments["path"], "-", *options], arguments["content"]
    if tool == "notebook_run":
        cells = [option for cell in arguments["cells"] for option in ("--cell", cell)]
        return ["--allow-run", "run", arguments["path"], "--tag", arguments["tag"], *cells], None
    return ["outputs", arguments["path"], arguments["cell"]], None


def process_caller(root: Path, runs: list[tuple[str, subprocess.CompletedProcess[str]]]) -> Any:
    """`call(tool, arguments)` running one CLI process per call (the first via `jupyter`)."""

    def run(tool: str, arguments: dict[str, Any]) -> tuple[bool, str]:
        args, stdin = cli_command(tool, arguments)
        launcher = (
            [str(BIN / "jupyter"), "hashline"] if not runs else [str(BIN / "jupyter-hashline")]
        )
        done = subprocess.run(
            [*launcher, "--root", str(root), *args],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=120,
        )
        runs.append((tool, done))
        return done.returncode != 0, done.stdout if done.returncode == 0 else done.stderr

    async def call(tool: str, arguments: dict[str, Any]) -> tuple[bool, str]:
        return await asyncio.to_thread(run, tool, arguments)

    return call


@pytest.mark.slow
def test_the_agent_story_across_separate_processes(root: Path) -> None:
    runs: list[tuple[str, subprocess.CompletedProcess[str]]] = []
    asyncio.run(run_edit_scenario(process_caller(root, runs), root))
    codes = [done.returncode for _, done in runs]
    assert codes.count(1) == 1 and set(codes) == {0, 1}, codes
    rejected = next(done for _, done in runs if done.returncode == 1)
    assert rejected.stdout == ""
    assert rejected.stderr.startswith("Edit rejected: analysis.ipynb changed since your read")
    assert all(done.stderr == "" for _, done in runs if done.returncode == 0)


@pytest.mark.slow
def test_the_run_story_across_separate_processes(root: Path) -> None:
    runs: list[tuple[str, subprocess.CompletedProcess[str]]] = []
    asyncio.run(run_run_scenario(process_caller(root, runs), root))
    assert [(tool, done.returncode) for tool, done in runs] == [
        ("notebook_read", 0),
        ("notebook_run", 0),
        ("notebook_run", 0),  # the cell raised: its status says error, the command ran it
        ("notebook_run", 1),  # a markdown cell
        ("notebook_run", 1),  # changed since the tag
    ]
    assert all(done.stdout == "" for _, done in runs if done.returncode == 1)
