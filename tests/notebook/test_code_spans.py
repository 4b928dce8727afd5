"""Notebook cells as code spans, and the syntax check per cell through the notebook layer."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from jupyter_hashline.hashline import (
    AmbiguousEditError,
    CodeDoesNotParseError,
    DiskFilesystem,
    InMemorySnapshotStore,
    Patcher,
)
from jupyter_hashline.hashline.syntax import broken_spans, iter_spans
from jupyter_hashline.notebook import NotebookFilesystem
from jupyter_hashline.notebook.code_spans import CellSpans, notebook_language

TEXT = [
    "# %% [markdown] id=m1",
    "# Title (",
    "# %% [code] id=c1",
    "%matplotlib inline",
    "def f(x):",
    "    return x",
    "# %% [code] id=c2",
    "\\# %% not a marker",
    "y = 1",
]


def test_a_span_is_one_cells_source_and_its_marker_belongs_to_it() -> None:
    finder = CellSpans("ipython")
    cell = finder.span_at(TEXT, 5)
    assert cell is not None and (cell.first, cell.last, cell.label) == (4, 6, "c1")
    assert finder.span_at(TEXT, 3) == cell
    markdown = finder.span_at(TEXT, 2)
    assert markdown is not None and not markdown.checked
    escaped = finder.span_at(TEXT, 9)
    assert escaped is not None and escaped.source == "# %% not a marker\ny = 1"
    assert finder.span_labelled(TEXT, "c2") == escaped
    assert finder.span_labelled(TEXT, "nope") is None


def test_language_from_the_notebook() -> None:
    assert notebook_language({"metadata": {"kernelspec": {"language": "python"}}}) == "ipython"
    assert notebook_language({"metadata": {"language_info": {"name": "R"}}}) == "r"
    assert notebook_language({"metadata": {}}) == "ipython"
    # Odd metadata (found by the reliability fuzzer) reads as none, never raises.
    assert notebook_language({"metadata": True}) == "ipython"
    assert notebook_language({"metadata": {"language_info": ["R"], "kernelspec": 3}}) == "ipython"


def _notebook(tmp_path: Path, language: str = "python") -> None:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "k", "language": language, "display_name": "k"}
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Notes"),
        nbformat.v4.new_code_cell("!ls\ndef f(x):\n    if x:\n        return 1\n    return 0"),
        nbformat.v4.new_code_cell("broken = (1"),
    ]
    nbformat.write(nb, tmp_path / "nb.ipynb")


async def _edit(tmp_path: Path, patch: str, **options: str) -> tuple[tuple[str, ...], str]:
    patcher = Patcher(
        NotebookFilesystem(DiskFilesystem(tmp_path)), InMemorySnapshotStore(), **options
    )
    read = await patcher.read("nb.ipynb")
    result = await patcher.apply(patch.replace("HEADER", read.header))
    source = nbformat.read(tmp_path / "nb.ipynb", as_version=4).cells[1].source
    return result.sections[0].warnings, source


async def test_a_cell_with_its_indentation_dropped_is_re_indented(tmp_path: Path) -> None:
    _notebook(tmp_path)
    warnings, source = await _edit(tmp_path, "HEADER\nreplace 7:\n+return 2")
    assert source.splitlines()[3] == "        return 2"
    assert any("re-indented" in w for w in warnings)


async def test_a_cell_that_stops_parsing_is_named_in_a_warning(tmp_path: Path) -> None:
    _notebook(tmp_path)
    warnings, source = await _edit(tmp_path, "HEADER\nreplace 7:\n+        return (2")
    assert "return (2" in source
    [said] = [w for w in warnings if "no longer parses" in w]
    assert "line 7" in said and "cell" in said and "never closed" in said


async def test_strict_mode_refuses_and_writes_nothing(tmp_path: Path) -> None:
    _notebook(tmp_path)
    before = (tmp_path / "nb.ipynb").read_bytes()
    with pytest.raises(CodeDoesNotParseError) as caught:
        await _edit(tmp_path, "HEADER\nreplace 7:\n+        return (2", syntax_check="strict")
    assert caught.value.status == 422 and "Nothing was written" in str(caught.value)
    assert (tmp_path / "nb.ipynb").read_bytes() == before


async def test_a_cell_broken_before_the_edit_is_not_blamed_on_it(tmp_path: Path) -> None:
    _notebook(tmp_path)
    patcher = Patcher(NotebookFilesystem(DiskFilesystem(tmp_path)), InMemorySnapshotStore())
    read = await patcher.read("nb.ipynb")
    result = await patcher.apply(f"{read.header}\nreplace 10:\n+broken = (2")
    assert not any("parses" in w for w in result.sections[0].warnings)


async def test_an_r_notebook_gets_no_python_claim(tmp_path: Path) -> None:
    _notebook(tmp_path, language="R")
    warnings, source = await _edit(tmp_path, "HEADER\nreplace 7:\n+return 2")
    assert source.splitlines()[3] == "return 2" and warnings == ()


async def test_ambiguous_indentation_in_a_cell_is_refused(tmp_path: Path) -> None:
    _notebook(tmp_path)
    with pytest.raises(AmbiguousEditError):
        await _edit(tmp_path, "HEADER\nreplace 8:\n+x = 5")


def test_lines_no_cell_holds_are_stepped_over_at_once() -> None:
    text = ["x = (", "y = 2", *TEXT, "# %% [code] id=bad id", "z = (", "# %% [code] id=c3", "w"]
    finder = CellSpans("ipython")
    assert finder.span_at(text, 1) is None and finder.span_at(text, 2) is None
    assert finder.resume_at(text, 1) == 3  # the first marker
    assert finder.span_at(text, 12) is None and finder.resume_at(text, 12) == 14
    assert finder.resume_at(text, 15) == 16  # past the end: the walk is over
    assert [(s.first, s.last, s.label) for s in iter_spans(text, finder)] == [
        (4, 4, "m1"), (6, 8, "c1"), (10, 11, "c2"), (15, 15, "c3")
    ]  # fmt: skip


def test_an_edit_putting_many_lines_above_the_first_marker_is_checked_in_one_pass() -> None:
    """200,000 lines no marker is above: each used to scan back to the top (quadratic)."""
    finder = CellSpans("ipython")
    new = ["x = 1"] * 200_000 + TEXT[2:]
    calls = 0

    class Counting:
        def span_at(self, lines, line):  # type: ignore[no-untyped-def]
            nonlocal calls
            calls += 1
            return finder.span_at(lines, line)

        def span_labelled(self, lines, label):  # type: ignore[no-untyped-def]
            return finder.span_labelled(lines, label)

        def resume_at(self, lines, line):  # type: ignore[no-untyped-def]
            return finder.resume_at(lines, line)

    regions = [(1, 200_000), (5, 7), (199_990, 200_003)]
    assert broken_spans(TEXT, new, regions, Counting()) == ()
    assert calls <= 3  # once above the first marker, then the cell under it
    del Counting.resume_at  # a finder without it: one call per line (correct, slower)
    calls = 0
    assert broken_spans(TEXT, new[199_000:], [(1, 1_003)], Counting()) == ()
    assert calls > 1_000


@pytest.mark.parametrize("where", ["insert after 8:", "insert before 9:"])
async def test_a_new_cell_after_an_indented_line_is_a_new_cell(tmp_path: Path, where: str) -> None:
    """The rows hold a cell marker: as written they make a new cell, so no re-indenting (at
    column 4 the marker would be a comment and the new code part of the function above)."""
    _notebook(tmp_path)
    patcher = Patcher(NotebookFilesystem(DiskFilesystem(tmp_path)), InMemorySnapshotStore())
    read = await patcher.read("nb.ipynb")
    result = await patcher.apply(f"{read.header}\n{where}\n+# %% [code]\n+print('agent')")
    cells = nbformat.read(tmp_path / "nb.ipynb", as_version=4).cells
    assert [c.source for c in cells[1:3]] == [
        "!ls\ndef f(x):\n    if x:\n        return 1\n    return 0",
        "print('agent')",
    ]
    assert not any("re-indented" in w for w in result.sections[0].warnings)
