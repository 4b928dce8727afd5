"""The sloppy-agent table (bench/sloppy.py): its smoke run on the shared corpus meets
hashline's targets, its oracle counts failures when an engine really has them (the real
engine with its checks off, and one that lands edits a line low), and a shifted insert is
called a lookalike only when the two calls are compared equal."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import nbformat
import pytest

from bench import sloppy
from bench.summary import check, summarize

REPO = Path(__file__).resolve().parent.parent
CORPUS_DIR = REPO.parent / "shared" / "corpus"

SOURCE = "def f(x):\n    y = x + 1\n    z = y * 2\n    return z\n"


def synthetic_changes(tmp_path: Path) -> list[sloppy.Change]:
    """The intended changes of a small notebook of our own (no corpus needed)."""
    nb = nbformat.v4.new_notebook()
    kernel = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["kernelspec"] = kernel
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Title", id="intro"),
        nbformat.v4.new_code_cell(SOURCE.removesuffix("\n"), id="code1"),
    ]
    raw = nbformat.writes(nb).encode()
    view = asyncio.run(sloppy.view_of(raw, tmp_path))
    found = sloppy.changes_for("synthetic.ipynb", raw, sloppy.view_bases(view, nb))
    return [change for cell in found for change in cell]


class ChecksOff(sloppy.ToolsEngine):
    """The real engine with `syntax_check = "off"`: no re-indentation, no parse warning."""

    async def edit(self, folder: Path, make: sloppy.EditCall) -> tuple[bool, str]:
        from jupyter_hashline.tools.calls import run_tool
        from jupyter_hashline.tools.directory import open_directory

        workspace = open_directory(folder, ":memory:", syntax_check="off")
        try:
            read = await run_tool(
                workspace, "notebook_read", {"path": sloppy.NOTEBOOK}, agent="agent"
            )
            arguments = make(read.reply["tag"])
            done = await run_tool(workspace, "notebook_edit", arguments, agent="agent")
        finally:
            await workspace.aclose()
        return done.is_error, done.text


class OneLineLow(sloppy.ToolsEngine):
    """The real engine, sent every JSON-form line number one too high: those edits land a
    line low (patch-form edits, the control among them, pass through as they are)."""

    async def edit(self, folder: Path, make: sloppy.EditCall) -> tuple[bool, str]:
        def shifted(tag: str) -> Mapping[str, Any]:
            arguments = dict(make(tag))
            edits = arguments.get("edits")
            if edits is None:
                return arguments
            moved = [
                {k: v + 1 if k in ("start", "end", "line") else v for k, v in edit.items()}
                for edit in edits["edits"]
            ]
            return {"edits": {**edits, "edits": moved}}

        return await super().edit(folder, shifted)


def run(changes: list[sloppy.Change], engine: sloppy.Engine, *names: str) -> sloppy.Verdict:
    mistakes = [m for m in sloppy.MISTAKES if m.name in names]
    results = asyncio.run(sloppy.run_all(changes, [sloppy.Hashline(engine)], mistakes))
    assert results, "no attempt ran"
    return sloppy.verdict(results)


def test_the_real_engine_meets_its_targets_on_a_notebook_of_our_own(tmp_path: Path) -> None:
    changes = synthetic_changes(tmp_path)
    assert {c.kind for c in changes} == {"replace", "insert"}
    names = [m.name for m in sloppy.MISTAKES]
    v = run(changes, sloppy.ToolsEngine(), *names)
    assert v.met, v
    assert v.controls == 2 and v.controls_as_meant == 2


def test_an_engine_that_writes_broken_code_silently_is_counted(tmp_path: Path) -> None:
    changes = synthetic_changes(tmp_path)
    v = run(changes, ChecksOff(), "clean", "dropped_indent", "unclosed_paren")
    assert v.unparseable_silent > 0 and not v.met
    assert v.controls_as_meant == v.controls  # the control still lands: only checks are off


def test_an_engine_that_lands_a_line_low_is_counted(tmp_path: Path) -> None:
    changes = synthetic_changes(tmp_path)
    v = run(changes, OneLineLow(), "clean", "json_crlf")
    assert v.applied_wrongly == 2 and v.controls_as_meant == v.controls and not v.met


def test_a_shifted_insert_is_a_lookalike_only_when_the_calls_are_equal(tmp_path: Path) -> None:
    changes = synthetic_changes(tmp_path)
    insert = next(c for c in changes if c.kind == "insert")
    replaced = next(c for c in changes if c.kind == "replace")
    sloppy_call = sloppy._hl_shifted(sloppy.correct_draft(insert, "ABCD"))
    assert sloppy_call is not None
    other = sloppy._shifted_lookalike(sloppy_call)
    assert other is not None and other.arguments() == sloppy_call.arguments()
    assert other.meant != sloppy_call.meant and sloppy.parses(other.meant or "")
    shifted_replace = sloppy._hl_shifted(sloppy.correct_draft(replaced, "ABCD"))
    assert shifted_replace is not None and sloppy._shifted_lookalike(shifted_replace) is None
    # the same file, judged without the proof that the calls are equal: applied wrongly
    nb = nbformat.reads(insert.raw.decode(), as_version=4)
    nb.cells[insert.cell].source = other.meant
    written = nbformat.writes(nb).encode()
    proven = sloppy.Attempt(False, "updated", written, sloppy_call.meant, "{}", other.meant)
    assert sloppy.judge(insert, proven) is sloppy.Outcome.LOOKALIKE
    unproven = replace(proven, lookalike=None)
    assert sloppy.judge(insert, unproven) is sloppy.Outcome.WRONG


@pytest.fixture(scope="module")
def smoke(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], str, Path]:
    if not (CORPUS_DIR / "MANIFEST.tsv").is_file():
        pytest.skip(f"the shared corpus of real notebooks is absent here ({CORPUS_DIR})")
    out = tmp_path_factory.mktemp("sloppy") / "sloppy.json"
    done = subprocess.run(
        [sys.executable, "-m", "bench.sloppy", "--smoke", "--json", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(out.read_text()), done.stdout, out


def test_the_smoke_run_on_the_corpus_meets_the_targets(
    smoke: tuple[dict[str, Any], str, Path],
) -> None:
    payload, stdout, _ = smoke
    verdict = payload["hashline"]
    assert payload["table"] == "sloppy" and payload["missing"] == []
    assert verdict["met"] and verdict["attempts"] > 0 and verdict["controls"] > 0
    assert {row["mistake"] for row in payload["rows"]} == {m.name for m in sloppy.MISTAKES}
    contenders = {row["contender"] for row in payload["rows"]}
    assert len(contenders) == 4  # hashline and the three peers
    assert "sloppy-edit targets, all together: MET" in stdout


def test_the_summary_and_the_check_carry_the_verdict(
    smoke: tuple[dict[str, Any], str, Path], tmp_path: Path
) -> None:
    payload, _, out = smoke
    assert check({"sloppy": out}) == []
    broken = {**payload, "hashline": {**payload["hashline"], "applied_wrongly": 1, "met": False}}
    path = tmp_path / "sloppy.json"
    path.write_text(json.dumps(broken))
    text = "\n".join(summarize({"sloppy": path}, tmp_path / "all.json"))
    assert "sloppy edits applied wrongly" in text and "all together: MISSED" in text
    assert check({"sloppy": path}) == ["sloppy: hashline's sloppy-edit targets missed"]
