"""Every notebook of the shared corpus: lossless round trips, one-line edits, invalid files."""

from __future__ import annotations

import asyncio
import copy
import csv
import json
import re
import warnings
from pathlib import Path

import nbformat
import pytest

from jupyter_hashline.hashline.memory_fs import InMemoryFilesystem
from jupyter_hashline.notebook import (
    NotebookFilesystem,
    load_notebook,
    merge_projection,
    parse_projection,
    project_notebook,
    serialize_notebook,
)
from jupyter_hashline.notebook.errors import InvalidNotebookError
from jupyter_hashline.notebook.incremental.region import common_prefix, common_suffix
from jupyter_hashline.notebook.loading import rejoin_lines
from jupyter_hashline.notebook.validation import notebook_problem

pytestmark = pytest.mark.corpus


def manifest(corpus_dir: Path) -> list[dict[str, str]]:
    with (corpus_dir / "MANIFEST.tsv").open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def valid_rows(corpus_dir: Path) -> list[dict[str, str]]:
    return [
        r for r in manifest(corpus_dir)
        if r["file"].endswith(".ipynb") and not r["file"].startswith("invalid/")
    ]  # fmt: skip


def jupyter_layout(raw: str) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return nbformat.writes(nbformat.reads(raw, as_version=4)) + "\n" == raw
        except Exception:
            return False


def joined(nb: dict) -> dict:
    """The notebook as nbformat.reads gives it (outputs joined: loading keeps them as stored)."""
    return rejoin_lines(copy.deepcopy(nb))


def changed_span(old: bytes, new: bytes) -> tuple[int, int]:
    """Where `old` stops being `new`: the bytes of `old` outside its common prefix and suffix."""
    prefix = common_prefix(old, new)
    return prefix, len(old) - common_suffix(old, new, min(len(old), len(new)) - prefix)


def first_source_line(text: str) -> int:
    """0-based index of the first line of the projection that belongs to a cell source."""
    for cell in parse_projection(text):
        if cell.line_count and cell.source.split("\n")[0].strip():
            return cell.line
    raise AssertionError("no editable line")


def test_the_corpus_has_what_these_tests_need(corpus_dir: Path) -> None:
    rows = valid_rows(corpus_dir)
    assert len(rows) >= 30
    assert sum(jupyter_layout((corpus_dir / r["file"]).read_text("utf-8")) for r in rows) >= 20


def test_every_valid_notebook_round_trips_byte_for_byte(corpus_dir: Path) -> None:
    checked = 0
    for row in valid_rows(corpus_dir):
        raw = (corpus_dir / row["file"]).read_text("utf-8")
        loaded = load_notebook(raw, row["file"])
        assert notebook_problem(loaded.nb) is None, row["file"]
        merged, notes = merge_projection(loaded.nb, loaded.projection)
        assert merged is loaded.nb and notes == [], row["file"]
        assert project_notebook(merged) == loaded.projection
        if jupyter_layout(raw):
            assert serialize_notebook(merged) == raw, row["file"]
            checked += 1
    assert checked >= 20


def test_loading_gives_the_notebook_nbformat_reads(corpus_dir: Path) -> None:
    for row in valid_rows(corpus_dir):
        raw = (corpus_dir / row["file"]).read_text("utf-8")
        if row["nbformat"] in ("2", "3.0") or row["valid"].startswith("warn"):
            continue  # converted or repaired by nbformat with random ids
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = json.loads(json.dumps(nbformat.reads(raw, as_version=4)))
        assert joined(load_notebook(raw).nb) == expected, row["file"]


async def test_a_no_op_write_leaves_every_file_byte_identical(corpus_dir: Path) -> None:
    for row in valid_rows(corpus_dir):
        raw = (corpus_dir / row["file"]).read_text("utf-8")
        inner = InMemoryFilesystem({"nb.ipynb": raw})
        fs = NotebookFilesystem(inner)
        text = await fs.read_text("nb.ipynb")
        assert (await fs.write_text("nb.ipynb", text)).text == text
        assert inner.get("nb.ipynb") == raw, row["file"]


async def test_a_one_line_edit_changes_exactly_that_cell(corpus_dir: Path) -> None:
    for row in valid_rows(corpus_dir):
        raw = (corpus_dir / row["file"]).read_text("utf-8")
        before = joined(load_notebook(raw).nb)
        inner = InMemoryFilesystem({"nb.ipynb": raw})
        fs = NotebookFilesystem(inner)
        text = await fs.read_text("nb.ipynb")
        lines = text.split("\n")
        if not any(c.line_count for c in parse_projection(text)):
            continue
        target = first_source_line(text)
        lines[target] += "  # edited"
        edited = "\n".join(lines)
        landed = await fs.write_text("nb.ipynb", edited)
        if row["valid"].startswith("warn"):  # duplicate or missing ids: repaired, with a warning
            assert any(w.startswith("repaired cell ids") for w in landed.warnings)
        else:
            assert landed.text == edited, row["file"]
        written = inner.get("nb.ipynb")
        fell_back = any("in nbformat's layout" in w for w in landed.warnings)
        if fell_back or jupyter_layout(raw):
            assert jupyter_layout(written), row["file"]
        elif not row["valid"].startswith("warn"):  # the layout kept: one cell's bytes changed
            kept = load_notebook(raw).kept_layout()
            assert not isinstance(kept, str), row["file"]
            old = raw.encode("utf-8")
            first, last = changed_span(old, written.encode("utf-8"))
            assert any(a <= first and last <= b for a, b in kept.cells.spans), row["file"]
        after = joined(load_notebook(written).nb)
        assert after["metadata"] == before["metadata"]
        changed = [
            i for i, (a, b) in enumerate(zip(before["cells"], after["cells"], strict=True))
            if {**a, "id": None} != {**b, "id": None}
        ]  # fmt: skip
        assert len(changed) == 1, row["file"]
        old, new = before["cells"][changed[0]], after["cells"][changed[0]]
        assert new["source"] != old["source"]
        assert {**old, "source": "", "id": None} == {**new, "source": "", "id": None}


def test_invalid_notebooks_are_repaired_kept_or_refused_never_damaged(corpus_dir: Path) -> None:
    """Broken JSON cannot be read; a cell too broken to be a cell cannot be written. What
    JupyterLab repairs on save is repaired with a warning. Other schema problems (invalid
    metadata, an illegal id) are kept byte for byte by an edit that adds none, which is
    written with a warning saying the notebook is still invalid and why."""
    rows = [r for r in manifest(corpus_dir) if r["file"].startswith("invalid/")]
    assert len(rows) >= 5
    kept = refused = 0
    for row in rows:
        raw = (corpus_dir / row["file"]).read_text("utf-8")
        inner = InMemoryFilesystem({"nb.ipynb": raw})
        fs = NotebookFilesystem(inner)
        try:
            text = asyncio.run(fs.read_text("nb.ipynb"))
        except InvalidNotebookError as err:
            assert "not valid JSON" in str(err) and "Repair the file" in str(err)
            continue
        edited = text + "# %% [markdown]\nadded\n"
        if load_notebook(raw).survey.broken is not None:  # a v3 heading cell
            with pytest.raises(InvalidNotebookError, match="can be read but not written"):
                asyncio.run(fs.write_text("nb.ipynb", edited))
            assert inner.get("nb.ipynb") == raw, row["file"]
            refused += 1
            continue
        result = asyncio.run(fs.write_text("nb.ipynb", edited))
        written = inner.get("nb.ipynb")
        before = joined(load_notebook(raw).nb)["cells"]
        after = joined(load_notebook(written).nb)["cells"]
        assert after[-1]["source"] == "added" and len(after) == len(before) + 1
        if notebook_problem(load_notebook(written).nb) is None:
            assert any("repaired" in w or "removed" in w for w in result.warnings), row["file"]
            continue
        assert [{**c, "id": None} for c in after[:-1]] == [{**c, "id": None} for c in before]
        assert any("is still not a valid notebook" in w for w in result.warnings), row["file"]
        kept += 1
    assert kept >= 2 and refused >= 1


def test_an_edit_of_an_invalid_cell_is_written_saying_it_is_still_invalid(
    corpus_dir: Path,
) -> None:
    """The cell's id was illegal before the edit and still is: the edit adds no problem, so it
    is written as Jupyter would save it, and this write and every later one say why the
    notebook is still invalid (an insert elsewhere as well as an edit of that cell)."""
    raw = (corpus_dir / "invalid" / "jupyter__nbformat__invalid_cell_id.ipynb").read_text()
    inner = InMemoryFilesystem({"nb.ipynb": raw})
    fs = NotebookFilesystem(inner)
    text = asyncio.run(fs.read_text("nb.ipynb"))
    cell = next(c for c in parse_projection(text) if c.cell_id == "$illegal_chars")
    lines = text.split("\n")
    lines[cell.line] += " edited"
    why = r"still not a valid notebook \(cell \$illegal_chars \(cell #1\): '\$illegal_chars'"
    for edited in ("\n".join(lines), "\n".join(lines) + "# %% [markdown]\nadded\n"):
        result = asyncio.run(fs.write_text("nb.ipynb", edited))
        assert sum(bool(re.search(why, w)) for w in result.warnings) == 1
    after = load_notebook(inner.get("nb.ipynb")).nb
    assert after["cells"][0]["id"] == "$illegal_chars"
    assert after["cells"][0]["source"].endswith(" edited")
