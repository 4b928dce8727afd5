"""The directory workspace (MCP, CLI) cannot escape its root: every tool refuses every way out, and
nothing outside the root is read (not a byte of it in any reply), written or created."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from testkit.faults import TALLY, tree_bytes

from jupyter_hashline.tools import open_directory, run_tool

SECRET = "MCP-SECRET-91c"


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.py").write_text(f"key = '{SECRET}'\n")
    (outside / "secret.ipynb").write_text(
        '{"cells": [{"cell_type": "code", "id": "c1", "metadata": {}, "outputs": [], '
        f'"execution_count": null, "source": "key = \'{SECRET}\'"}}], "metadata": {{}}, '
        '"nbformat": 4, "nbformat_minor": 5}\n'
    )
    os.symlink(outside, root / "dirlink")
    os.symlink(outside / "secret.py", root / "filelink.py")
    (root / "inside.py").write_text("inside = 1\n")
    return root, outside


def ways_out(root: Path, outside: Path) -> list[str]:
    return [
        "../outside/secret.py",
        "../outside/secret.ipynb",
        "sub/../../outside/secret.py",
        str(outside / "secret.py"),
        str(outside / "new.py"),
        "dirlink/secret.py",
        "dirlink/secret.ipynb",
        "dirlink/new.py",
        "filelink.py",
        "inside.py\x00../outside/secret.py",
        f"{root}/../outside/secret.py",
    ]


async def test_every_tool_refuses_every_way_out(layout: tuple[Path, Path]) -> None:
    root, outside = layout
    before_outside, before_root = tree_bytes(outside), tree_bytes(root)
    workspace = open_directory(root, store_path=":memory:")
    try:
        inside = await run_tool(workspace, "notebook_read", {"path": "inside.py"}, agent="a")
        assert not inside.is_error
        tag = inside.text.split("#", 1)[1][:4]
        for path in ways_out(root, outside):
            calls: list[tuple[str, dict[str, Any]]] = [
                ("notebook_read", {"path": path}),
                ("notebook_outputs", {"path": path, "cell": "c1"}),
                ("notebook_write", {"path": path, "content": "pwned = 1\n"}),
                ("notebook_edit", {"patch": f"[{path}#{tag}]\ninsert tail:\n+pwned = 1\n"}),
                ("notebook_edit", {"edits": {"path": path, "tag": tag,
                                             "edits": [{"op": "insert_tail", "lines": ["x"]}]}}),
            ]  # fmt: skip
            for name, arguments in calls:
                outcome = await run_tool(workspace, name, arguments, agent="a")
                TALLY["inputs tried"] += 1
                TALLY["inputs clean errors"] += outcome.is_error and SECRET not in outcome.text
                assert outcome.is_error, (name, path, outcome.text)
                expected = {"path_outside_root", "not_found"}
                if name == "notebook_outputs" and not path.endswith(".ipynb"):
                    # "not a notebook" or the root's refusal, whichever check comes first
                    expected = {"hashline_error", "path_outside_root", "not_found"}
                if "\x00" in path and "path" in arguments:
                    expected = {"bad_arguments"}  # no control character is ever a path
                assert outcome.kind in expected, (name, path, outcome)
                assert SECRET not in outcome.text
    finally:
        await workspace.aclose()
    assert tree_bytes(outside) == before_outside
    assert tree_bytes(root) == before_root
