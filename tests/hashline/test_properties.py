"""Properties of the engine, checked against a small independent reference model."""

from __future__ import annotations

import asyncio

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from testkit.edit_strategies import FILE_LINES, edit_scripts, raw_texts, texts
from testkit.reference_model import reference

from jupyter_hashline.hashline.apply import apply_edits
from jupyter_hashline.hashline.edits import Edit
from jupyter_hashline.hashline.memory_fs import InMemoryFilesystem
from jupyter_hashline.hashline.memory_store import InMemorySnapshotStore
from jupyter_hashline.hashline.patcher import Patcher
from jupyter_hashline.hashline.results import SectionOp
from jupyter_hashline.hashline.text import normalize, split_lines

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def line_count(text: str) -> int:
    return len(text.splitlines())


@st.composite
def text_and_script(draw: st.DrawFn, rows: st.SearchStrategy[str] | None = None) -> tuple:
    text = draw(texts())
    script = draw(
        edit_scripts(line_count(text)) if rows is None else edit_scripts(line_count(text), rows)
    )
    return text, script


@SETTINGS
@given(text_and_script())
def test_engine_equals_reference_model(case: tuple[str, list[Edit]]) -> None:
    text, script = case
    applied = apply_edits(text, script)
    assert applied.text == reference(text, script)
    assert list(applied.lines) == split_lines(applied.text)  # reused, never split again


@SETTINGS
@given(text_and_script(rows=FILE_LINES))
def test_engine_without_repairs_equals_reference_even_with_echo_prone_rows(
    case: tuple[str, list[Edit]],
) -> None:
    text, script = case
    applied = apply_edits(text, script, repair_echo=False)
    assert applied.text == reference(text, script)
    assert applied.changed == (applied.text != text)


@SETTINGS
@given(text_and_script(rows=FILE_LINES))
def test_echo_repair_only_ever_drops_rows(case: tuple[str, list[Edit]]) -> None:
    text, script = case
    repaired = apply_edits(text, script)
    if repaired.text != reference(text, script):
        assert any("dropped" in w for w in repaired.warnings)
        assert line_count(repaired.text) < line_count(reference(text, script))


async def _read_then_roundtrip(raw: str) -> tuple[str, str, str]:
    fs = InMemoryFilesystem({"f.txt": raw})
    patcher = Patcher(fs, InMemorySnapshotStore())
    read = await patcher.read("f.txt")
    count = line_count(read.text)
    if count:
        line = read.text.split("\n")[0]
        noop = await patcher.apply(f"{read.header}\nreplace 1:\n+{line}\n")
        assert noop.sections[0].op is SectionOp.NOOP
    after_noop = fs.get("f.txt")
    added = await patcher.apply(f"{read.header}\ninsert tail:\n+added\n")
    removed = await patcher.apply(f"{added.sections[0].header}\ndelete {count + 1}\n")
    assert removed.sections[0].written
    return after_noop, fs.get("f.txt"), added.sections[0].after


@SETTINGS
@given(raw_texts())
def test_read_then_noop_or_undo_leaves_bytes_identical(raw: str) -> None:
    after_noop, after_undo, with_tail = asyncio.run(_read_then_roundtrip(raw))
    assert after_noop == raw
    assert after_undo == raw
    assert with_tail.endswith(
        "added\n" if normalize(raw).text in ("",) or raw.endswith("\n") else "added"
    )
