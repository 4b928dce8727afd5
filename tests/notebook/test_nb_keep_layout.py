"""A notebook keeps the layout its file has: a one-line edit is a one-line diff in any layout.

The layout-varied set (bench/layouts.py) is one notebook written as Jupyter, Colab, other
tools write it; edits go through the notebook filesystem on disk; every result must parse, with
nbformat, to exactly the notebook expected. Properties hold `assemble_kept` (kept cells' bytes
reused) to writing the whole notebook in the style, for random notebooks in random styles.
"""

from __future__ import annotations

import asyncio
import copy
import json
from pathlib import Path
from typing import Any

import nbformat
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from testkit.nb_strategies import notebooks, sources

from bench.diffs import edit_one_line, measure
from bench.layouts import LAYOUTS, MIXED, disk_form, sample_notebook
from jupyter_hashline.hashline.disk import DiskFilesystem
from jupyter_hashline.hashline.memory_fs import InMemoryFilesystem
from jupyter_hashline.notebook import (
    NotebookFilesystem,
    load_notebook,
    loading,
    parse_projection,
    serialize_notebook,
)
from jupyter_hashline.notebook import keep as keep_module
from jupyter_hashline.notebook.filesystem import SMALL_FILE
from jupyter_hashline.notebook.incremental.layout import find_layout
from jupyter_hashline.notebook.incremental.region import common_prefix
from jupyter_hashline.notebook.keep import (
    KeptLayout,
    assemble_kept,
    find_kept_layout,
    layout_for_call,
)
from jupyter_hashline.notebook.loading import rejoin_lines
from jupyter_hashline.notebook.style import FileStyle, StyledJson, detect_style

KEPT = sorted(name for name in LAYOUTS if name != MIXED)
FALLBACK = "in nbformat's layout"


def layout_file(name: str) -> bytes:
    return LAYOUTS[name](disk_form(sample_notebook()))


def reads(data: bytes) -> Any:
    return nbformat.reads(data.decode("utf-8"), as_version=4)


@pytest.mark.parametrize("name", KEPT)
def test_a_one_line_edit_is_a_one_line_diff_in_every_layout(name: str) -> None:
    row = measure(name, layout_file(name))
    assert row is not None
    assert row.exact and not row.fallback and not row.repaired
    assert (row.added, row.deleted) == (1, 1)
    assert row.span < 0.02


def test_a_mixed_file_is_written_in_nbformats_layout_with_one_note(tmp_path: Path) -> None:
    raw = layout_file(MIXED)
    assert isinstance(find_kept_layout(raw, load_notebook(raw).nb), str)
    edited = asyncio.run(edit_one_line(tmp_path, raw))
    assert edited is not None
    notes = [w for w in edited.warnings if FALLBACK in w]
    assert len(notes) == 1 and "cell #1 is not written as the rest of the file" in notes[0]
    assert edited.data.decode() == nbformat.writes(reads(edited.data)) + "\n"
    again = asyncio.run(edit_one_line(tmp_path, edited.data))
    assert again is not None and not any(FALLBACK in w for w in again.warnings)


async def add_cell(folder: Path, name: str, raw: bytes, **options: Any) -> tuple[bytes, Any]:
    (folder / name).write_bytes(raw)
    fs = NotebookFilesystem(DiskFilesystem(folder), **options)
    text = await fs.read_text(name)
    result = await fs.write_text(name, text + "# %% [code]\nprint('new ✓')\n")
    assert not any(FALLBACK in w for w in result.warnings)
    return (folder / name).read_bytes(), result


@pytest.mark.parametrize("name", KEPT)
def test_a_new_cell_is_written_in_the_files_layout(name: str, tmp_path: Path) -> None:
    raw = layout_file(name)
    data, _ = asyncio.run(add_cell(tmp_path, "nb.ipynb", raw))
    before, kept = reads(raw), find_kept_layout(raw, load_notebook(raw).nb)
    assert not isinstance(kept, str)
    assert common_prefix(raw, data) >= kept.cells.spans[-1][1]  # every old cell's bytes kept
    after, now = reads(data), find_kept_layout(data, load_notebook(data).nb)
    assert not isinstance(kept, str) and not isinstance(now, str), now
    assert now.style.shape() == kept.style.shape()
    assert after.cells[:-1] == before.cells
    assert after.cells[-1].source == "print('new ✓')" and after.cells[-1].cell_type == "code"


def test_the_nbformat_layout_rewrites_the_file_as_jupyter_does(tmp_path: Path) -> None:
    raw = layout_file("colab (indent 2)")
    data, _ = asyncio.run(add_cell(tmp_path, "nb.ipynb", raw, layout="nbformat"))
    assert data.decode() == nbformat.writes(reads(data)) + "\n"
    data, _ = asyncio.run(add_cell(tmp_path, "other.ipynb", raw))
    assert data.startswith(b'{\n  "nbformat": 4')  # keep: Colab's layout
    with layout_for_call("nbformat"):
        data, _ = asyncio.run(add_cell(tmp_path, "third.ipynb", raw))
    assert data.decode() == nbformat.writes(reads(data)) + "\n"
    with pytest.raises(ValueError, match="layout must be one of keep, nbformat"):
        NotebookFilesystem(DiskFilesystem(tmp_path), layout="pretty")


def test_a_file_in_nbformats_layout_stays_byte_identical_to_nbformat(tmp_path: Path) -> None:
    raw = layout_file("nbformat")
    data, _ = asyncio.run(add_cell(tmp_path, "nb.ipynb", raw))
    assert data.decode() == nbformat.writes(reads(data)) + "\n"


@pytest.mark.parametrize(
    ("name", "proven_whole"),
    [("nbformat", True), ("string sources", False), ("non-ASCII escaped", False)],
)
def test_a_small_file_in_nbformats_layout_is_proven_by_writing_it_whole(
    name: str, proven_whole: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Writing a small file whole costs less than proving its kept layout; a file that only
    looks like nbformat's (its opening and end) still has its own layout proven and kept."""
    raw = layout_file(name)
    assert len(raw) < SMALL_FILE and raw.startswith(b'{\n "cells": [')
    proofs: list[bytes] = []
    original = loading.find_kept_layout

    def counted(data: bytes, nb: Any) -> Any:
        proofs.append(data)
        return original(data, nb)

    monkeypatch.setattr(loading, "find_kept_layout", counted)
    data, _ = asyncio.run(add_cell(tmp_path, "nb.ipynb", raw))
    assert proofs == ([] if proven_whole else [raw])
    assert common_prefix(raw, data) >= raw.index(b"\n ],\n")  # every old cell's bytes kept
    assert reads(data).cells[:-1] == reads(raw).cells
    assert (data.decode() == nbformat.writes(reads(data)) + "\n") is proven_whole


def test_outputs_a_kernel_gives_are_stored_as_the_file_stores_outputs(tmp_path: Path) -> None:
    for name, listed in (("colab (indent 2)", True), ("string sources", True)):
        raw = layout_file(name)
        (tmp_path / "nb.ipynb").write_bytes(raw)
        fs = NotebookFilesystem(DiskFilesystem(tmp_path))
        last = parse_projection(asyncio.run(fs.read_text("nb.ipynb")))[-1].cell_id
        assert last is not None
        stream = {"output_type": "stream", "name": "stdout", "text": "a\nb\n"}
        asyncio.run(fs.write_outputs("nb.ipynb", {last: ((stream,), 3)}))
        data = (tmp_path / "nb.ipynb").read_bytes()
        assert reads(data).cells[4].outputs[0].text == "a\nb\n"
        stored = json.loads(data)["cells"][4]["outputs"][0]["text"]
        assert stored == (["a\n", "b\n"] if listed else "a\nb\n")
        assert not isinstance(find_kept_layout(data, load_notebook(data).nb), str)


def test_a_large_hand_written_cell_is_checked_not_sampled_past() -> None:
    """nbdime's mixed-conflicts--3: a 38 KB cell with `"tags": ["bar"]` inline in a file
    otherwise in nbformat's layout. Its bytes must not be reused as if nbformat wrote them."""
    big = "\n".join(f"line {n} " + "x" * 60 for n in range(560))
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell("a = 1", id="first"),
            nbformat.v4.new_code_cell(big, id="big", metadata={"tags": ["bar"]}),
            nbformat.v4.new_code_cell("b = 2", id="last"),
        ]
    )
    text = serialize_notebook(json.loads(json.dumps(nb)))
    text = text.replace('"tags": [\n     "bar"\n    ]', '"tags": ["bar"]')
    raw = text.encode()
    loaded = load_notebook(raw)
    big_span = raw.index(b'"id": "big"')
    assert len(raw) > 38_000 and big_span > 0
    assert find_layout(raw, loaded.nb, loaded.survey.suspect) is None
    assert str(loaded.kept_layout()).startswith("cell #2 is not written as the rest")
    for layout in ("keep", "nbformat"):
        inner = InMemoryFilesystem({"nb.ipynb": text})
        fs = NotebookFilesystem(inner, layout=layout)
        view = asyncio.run(fs.read_text("nb.ipynb"))
        result = asyncio.run(fs.write_text("nb.ipynb", view.replace("b = 2", "b = 3")))
        written = inner.get("nb.ipynb")
        assert written == nbformat.writes(nbformat.reads(written, as_version=4)) + "\n"
        assert '"tags": [\n     "bar"\n    ]' in written
        assert any(FALLBACK in w for w in result.warnings) == (layout == "keep")


styles = st.builds(
    lambda indent, spaced, **kw: FileStyle(
        indent=indent,
        item_separator=", " if spaced else ",",
        key_separator=": " if spaced or indent is not None else ":",
        **kw,
    ),
    st.sampled_from([None, 0, 1, 2, 4]),
    st.booleans(),
    sort_keys=st.booleans(),
    split_sources=st.booleans(),
    split_outputs=st.booleans(),
    newline=st.sampled_from(["\n", "\r\n"]),
    final_newline=st.booleans(),
    ensure_ascii=st.booleans(),
)


def edited_cells(cells: list[Any], data: st.DataObject) -> list[Any]:
    new = list(cells)
    for change in data.draw(st.lists(st.sampled_from(["edit", "add", "drop", "move"]), max_size=4)):
        at = data.draw(st.integers(0, max(0, len(new) - 1)))
        if change == "edit" and new:
            new[at] = {**new[at], "source": data.draw(sources)}
        elif change == "add":
            new.insert(at, {"cell_type": "raw", "metadata": {}, "source": data.draw(sources)})
        elif change == "drop" and new:
            del new[at]
        elif change == "move" and len(new) > 1:
            new.insert(data.draw(st.integers(0, len(new) - 1)), new.pop(at))
    return new


@settings(max_examples=300, deadline=None)
@given(notebooks(), styles, st.data())
def test_a_layout_round_trips_and_edits_keep_it(
    nb: dict[str, Any], style: FileStyle, data: st.DataObject
) -> None:
    raw = StyledJson(style).notebook(nb).encode("utf-8")
    loaded = load_notebook(raw)
    kept = loaded.kept_layout()
    assert not isinstance(kept, str), kept
    merged = {**loaded.nb, "cells": edited_cells(loaded.nb["cells"], data)}
    if data.draw(st.booleans()):
        merged["metadata"] = {**merged["metadata"], "x-new": 1}
    snapshot = copy.deepcopy(loaded.nb)
    written, layout = assemble_kept(loaded.raw, loaded.nb, kept, merged)
    assert loaded.nb == snapshot
    expected = rejoin_lines(json.loads(json.dumps(merged)))
    assert rejoin_lines(json.loads(written)) == expected
    spans = kept.cells.spans
    if merged["metadata"] is loaded.nb["metadata"] and spans and layout.cells.spans:
        head, tail = raw[: spans[0][0]], raw[kept.cells.tail_start :]  # an unchanged top level
        assert written.startswith(head) and written.endswith(tail)
    elif layout.cells.spans:
        assert written == StyledJson(kept.style).notebook(merged).encode("utf-8")
    writer = StyledJson(kept.style)
    for cell, (start, end) in zip(merged["cells"], layout.cells.spans, strict=True):
        assert written[start:end] == writer.cell(cell).encode("utf-8")
    assert not isinstance(load_notebook(written).kept_layout(), str)


@pytest.mark.parametrize(
    ("name", "described"),
    [
        ("nbformat", "indent 1, keys sorted, sources as lines"),
        (
            "colab (indent 2)",
            "indent 2, keys in the file's order, sources as lines, no final newline",
        ),
        ("indent 4", "indent 4, keys sorted, sources as lines"),
        ("unsorted keys", "indent 1, keys in the file's order, sources as lines"),
        ("string sources", "indent 1, keys sorted, sources as strings"),
        ("CRLF", "indent 1, keys sorted, sources as lines, CRLF"),
        ("minified", "minified, keys sorted, sources as lines, no final newline"),
        ("no final newline", "indent 1, keys sorted, sources as lines, no final newline"),
        ("non-ASCII escaped", "indent 1, keys sorted, sources as lines, non-ASCII escaped"),
    ],
)
def test_each_layout_is_recognised_for_what_it_is(name: str, described: str) -> None:
    kept = load_notebook(layout_file(name)).kept_layout()
    assert not isinstance(kept, str) and kept.style.describe() == described


def test_attachments_stored_as_strings_are_seen_before_proving(monkeypatch: Any) -> None:
    """nbconvert's attachment.ipynb stores an attachment's SVG as one string and has no stream
    output: the style says so from the bytes, and the layout is proven on the first try (it
    used to be proven once with lines split, failing on that cell, then again)."""
    svg = "<svg>\n<rect/>\n</svg>\n"
    cell = {
        "attachments": {"image.png": {"image/svg+xml": svg, "image/png": "iVBORw0KGgo="}},
        "cell_type": "markdown", "metadata": {}, "source": ["![image.png](attachment:image.png)"],
    }  # fmt: skip
    nb = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 4}
    raw = (json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode()
    assert '"image/svg+xml": "<svg>' in raw.decode()
    loaded = load_notebook(raw)
    style = detect_style(raw, loaded.nb)
    assert not isinstance(style, str) and not style.split_outputs
    proofs: list[Any] = []
    whole = keep_module._prove

    def counted(*args: Any) -> Any:
        proofs.append(args[2])
        return whole(*args)

    monkeypatch.setattr(keep_module, "_prove", counted)
    assert isinstance(find_kept_layout(raw, loaded.nb), KeptLayout)
    assert len(proofs) == 1
