"""Hypothesis fuzzing of everything an agent can send: the patch language, the JSON form, the
notebook projection parser and the write tool.

Property, for every input: the engine either succeeds (and then the notebook on "disk" is
still a valid notebook) or raises a `HashlineError` with a message, and then nothing was
written. Any other exception, an empty message, or a write on failure is a bug. The inputs
are built from the grammar's own pieces (headers with the real tags, verbs, numbers at and
past the edges, body rows, envelopes, markers) mixed with arbitrary unicode (lone surrogates,
NUL, RTL marks, combining marks, BOMs), so most of them reach the deep end of the engine.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

import nbformat
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from testkit.faults import TALLY

from jupyter_hashline.hashline import (
    HashlineError,
    InMemoryFilesystem,
    InMemorySnapshotStore,
    Patcher,
    WriteResult,
    parse_patch,
    section_tag,
)
from jupyter_hashline.notebook import (
    NotebookFilesystem,
    merge_projection,
    parse_projection,
    project_notebook,
)

TEXT = "\ufeffimport os\r\nvalue = 1\r\n\r\nprint(value)\r\n"
NB = nbformat.v4.new_notebook()
NB.cells = [
    nbformat.v4.new_markdown_cell("# Title\nsome *text*", id="intro"),
    nbformat.v4.new_code_cell("x = 1\ny = 2", id="calc"),
    nbformat.v4.new_code_cell("print(x + y)", id="show"),
]
NB.cells[2].outputs = [nbformat.v4.new_output("stream", name="stdout", text="3\n")]
NB_TEXT = nbformat.writes(NB) + "\n"
PROJECTION = project_notebook(json.loads(NB_TEXT))
TAGS = {"a.py": section_tag("import os\nvalue = 1\n\nprint(value)\n"), "nb.ipynb": ""}
TAGS["nb.ipynb"] = section_tag(PROJECTION)

SOAK = os.environ.get("HASHLINE_SOAK") == "1"  # documented in tests/reliability/README.md
FUZZ = settings(
    max_examples=3000 if SOAK else 150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=True,
)

# -- strategies --------------------------------------------------------------------------------

ODD_CHARS = st.sampled_from(
    ["\x00", "\ud800", "\udfff", "\u202e", "\u200f", "\u0301", "\u0300", "\ufeff", "\r", "\t"]
)
ANY_TEXT = st.text(
    st.one_of(st.characters(codec=None, exclude_categories=()), ODD_CHARS), max_size=30
)
NUMBERS = st.one_of(
    st.integers(-2, 14).map(str),
    st.sampled_from(["0", "99999999999999999999", "1..3", "3..1", "2-4", "1 .. 2", "", "x"]),
)
HEADERS = st.one_of(
    st.sampled_from(list(TAGS)).map(lambda p: f"[{p}#{TAGS[p]}]"),
    st.sampled_from(["[a.py#0000]", "[nb.ipynb#ZZZZ]", "[../x.py#1234]", "[#ABCD]", "[a.py]"]),
    st.builds(lambda p, t: f"[{p}#{t}]", ANY_TEXT, ANY_TEXT),
)
VERBS = st.sampled_from(
    ["replace", "delete", "insert before", "insert after", "insert head", "insert tail", "repl"]
)
VERB_LINES = st.builds(lambda v, n, c: f"{v} {n}{c}", VERBS, NUMBERS, st.sampled_from([":", ""]))
BODY_ROWS = st.one_of(
    ANY_TEXT.map(lambda t: "+" + t),
    st.sampled_from(["+", "+# %% [code]", "+# %% [markdown] id=intro", "+# %% [bogus] id=x"]),
    st.sampled_from(["+# %% [code] id=calc", "+# %%", "+\\# %% x", "+2:value = 1"]),
)
PATCH_LINES = st.one_of(
    HEADERS, VERB_LINES, BODY_ROWS, BODY_ROWS, ANY_TEXT, st.sampled_from(["*** Begin Patch"])
)
TEXT_PATCHES = st.lists(PATCH_LINES, max_size=14).map("\n".join)

JSON_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 20), st.floats(allow_nan=False), ANY_TEXT
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(ANY_TEXT, inner, max_size=3),
    max_leaves=8,
)
OPS = st.sampled_from(
    ["replace", "delete", "insert_before", "insert_after", "insert_head", "insert_tail", "nope"]
)
LINE_NUMBERS = st.one_of(st.integers(-1, 14), JSON_VALUES)
ROWS = st.one_of(
    st.lists(st.one_of(ANY_TEXT, st.sampled_from(["# %% [code]", "a\nb", ""])), max_size=4),
    JSON_VALUES,
)
JSON_EDITS = st.fixed_dictionaries(
    {"op": st.one_of(OPS, JSON_VALUES)},
    optional={"start": LINE_NUMBERS, "end": LINE_NUMBERS, "line": LINE_NUMBERS, "lines": ROWS},
)
JSON_SECTIONS = st.fixed_dictionaries(
    {
        "path": st.one_of(st.sampled_from(list(TAGS)), JSON_VALUES),
        "tag": st.one_of(st.sampled_from([*TAGS.values(), "#" + TAGS["a.py"]]), JSON_VALUES),
        "edits": st.one_of(st.lists(JSON_EDITS, max_size=4), JSON_VALUES),
    },
    optional={"extra": JSON_VALUES},
)
JSON_PATCHES = st.one_of(JSON_SECTIONS, st.lists(JSON_SECTIONS, max_size=3), JSON_VALUES)

MARKERS = st.one_of(
    st.sampled_from(["# %% [code] id=calc", "# %% [markdown] id=intro", "# %% [code] id=show"]),
    st.sampled_from(["# %% [code]", "# %% [raw]", "# %% [markdown] id=calc", "# %%", "# %% ["]),
    st.builds(lambda t, i: f"# %% [{t}] id={i}", ANY_TEXT, ANY_TEXT),
)
PROJECTIONS = st.lists(st.one_of(MARKERS, ANY_TEXT, st.just("")), max_size=12).map(
    lambda rows: "\n".join(rows) + "\n"
)

# -- the harness -------------------------------------------------------------------------------


class CountingFilesystem(InMemoryFilesystem):
    """An in-memory disk that counts writes."""

    writes = 0

    async def write_text(self, path: str, content: str) -> WriteResult:
        self.writes += 1
        return await super().write_text(path, content)


def fresh_engine() -> tuple[Patcher, CountingFilesystem]:
    disk = CountingFilesystem({"a.py": TEXT, "nb.ipynb": NB_TEXT})
    patcher = Patcher(NotebookFilesystem(disk), InMemorySnapshotStore(), seen_lines="warn")
    asyncio.run(patcher.read("a.py"))
    asyncio.run(patcher.read("nb.ipynb"))
    return patcher, disk


def outcome(call: Any) -> HashlineError | None:
    """Run `call`; None on success, the error if it is a clean `HashlineError`."""
    TALLY["inputs tried"] += 1
    try:
        call()
    except HashlineError as err:
        assert isinstance(err.message, str) and err.message.strip(), repr(err)
        assert 400 <= err.status < 600
        TALLY["inputs clean errors"] += 1
        return err
    return None


def check_engine_call(run: Any) -> None:
    """`run(patcher)` either lands (files still valid) or fails cleanly with nothing written."""
    patcher, disk = fresh_engine()
    before, writes = disk.entries(), disk.writes
    error = outcome(lambda: asyncio.run(run(patcher)))
    if error is not None:
        assert disk.entries() == before
        assert disk.writes == writes
    nb = nbformat.reads(disk.get("nb.ipynb"), as_version=4)
    nbformat.validate(nb)
    assert "\x00" not in disk.get("a.py")


# -- properties --------------------------------------------------------------------------------


@FUZZ
@given(TEXT_PATCHES)
def test_text_patches_parse_or_fail_cleanly(patch: str) -> None:
    outcome(lambda: parse_patch(patch))


@FUZZ
@given(TEXT_PATCHES)
def test_text_patches_apply_or_fail_cleanly_without_writing(patch: str) -> None:
    check_engine_call(lambda patcher: patcher.apply(patch))


@FUZZ
@given(JSON_PATCHES)
def test_json_patches_apply_or_fail_cleanly_without_writing(patch: Any) -> None:
    check_engine_call(lambda patcher: patcher.apply(patch))


@FUZZ
@given(JSON_PATCHES)
def test_json_text_patches_parse_or_fail_cleanly(patch: Any) -> None:
    outcome(lambda: parse_patch(json.dumps(patch)))


@FUZZ
@given(PROJECTIONS)
def test_projection_parser_and_merge_fail_only_cleanly(text: str) -> None:
    outcome(lambda: parse_projection(text))
    error = outcome(lambda: merge_projection(json.loads(NB_TEXT), text))
    if error is None:
        merged, _ = merge_projection(json.loads(NB_TEXT), text)
        assert isinstance(merged, dict) and isinstance(merged["cells"], list)


@FUZZ
@given(PROJECTIONS)
def test_notebook_writes_land_valid_or_write_nothing(text: str) -> None:
    check_engine_call(lambda patcher: patcher.write("nb.ipynb", text))


@FUZZ
@given(st.sampled_from(list(TAGS)), ANY_TEXT)
def test_whole_file_writes_land_or_write_nothing(path: str, text: str) -> None:
    check_engine_call(lambda patcher: patcher.write(path, text))


@FUZZ
@given(st.lists(st.tuples(VERB_LINES, st.lists(BODY_ROWS, max_size=3)), max_size=5))
def test_well_headed_notebook_edits_land_valid_or_write_nothing(
    edits: list[tuple[str, list[str]]],
) -> None:
    body = "".join(f"{verb}\n" + "".join(f"{row}\n" for row in rows) for verb, rows in edits)
    patch = f"[nb.ipynb#{TAGS['nb.ipynb']}]\n{body}"
    check_engine_call(lambda patcher: patcher.apply(patch))


def test_python_values_that_are_not_json_fail_cleanly() -> None:
    circular: list[Any] = []
    circular.append(circular)
    nested: Any = []
    for _ in range(5000):
        nested = [nested]
    deep_text = '[{"a": ' + "[" * 100_000 + "]" * 100_000 + "}]"
    for bad in [5, None, 1.5, b"bytes", {("tuple",): 1}, circular, nested, deep_text, [], {}]:
        error = outcome(lambda bad=bad: parse_patch(bad))
        assert error is not None, bad
        check_engine_call(lambda patcher, bad=bad: patcher.apply(bad))


CELL_SHAPES = st.fixed_dictionaries(
    {},
    optional={
        "cell_type": st.one_of(st.sampled_from(["code", "markdown", "raw", "other"]), JSON_VALUES),
        "id": st.one_of(st.sampled_from(["c1", "c1", "bad id", ""]), JSON_VALUES),
        "source": st.one_of(ANY_TEXT, st.lists(ANY_TEXT, max_size=3), JSON_VALUES),
        "metadata": st.one_of(st.just({}), JSON_VALUES),
        "outputs": st.one_of(st.just([]), JSON_VALUES),
        "execution_count": st.one_of(st.none(), JSON_VALUES),
        "attachments": JSON_VALUES,
    },
)
NOTEBOOK_SHAPES = st.fixed_dictionaries(
    {
        "cells": st.one_of(st.lists(st.one_of(CELL_SHAPES, JSON_VALUES), max_size=4), JSON_VALUES),
        "nbformat": st.one_of(st.just(4), st.integers(0, 6), JSON_VALUES),
    },
    optional={
        "metadata": st.one_of(st.just({}), JSON_VALUES),
        "nbformat_minor": st.one_of(st.integers(0, 6), JSON_VALUES),
    },
)


@FUZZ
@given(NOTEBOOK_SHAPES)
def test_odd_notebook_files_read_and_edit_or_fail_cleanly(shape: dict[str, Any]) -> None:
    raw = json.dumps(shape)
    disk = CountingFilesystem({"odd.ipynb": raw})
    patcher = Patcher(NotebookFilesystem(disk), InMemorySnapshotStore(), seen_lines="off")
    view = None

    def read() -> None:
        nonlocal view
        view = asyncio.run(patcher.read("odd.ipynb"))

    if outcome(read) is not None or view is None:
        assert disk.writes == 0
        return
    patch = f"{view.header}\ninsert tail:\n+added = 1\n"
    if outcome(lambda: asyncio.run(patcher.apply(patch))) is not None:
        assert disk.get("odd.ipynb") == raw and disk.writes == 0
        return
    nbformat.validate(nbformat.reads(disk.get("odd.ipynb"), as_version=4))
