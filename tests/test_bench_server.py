"""The REST throughput tally counts what it claims: a writer's last acknowledged edit is kept
only when the saved notebook holds it in that writer's cell, and a torn or missing file is said
to be so."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import nbformat

from bench.server import edited_line, last_edits_kept


def _saved(path: Path, sources: list[str]) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    nbformat.write(nb, path)


def _writer(cell: int, last: str) -> SimpleNamespace:
    return SimpleNamespace(cell=cell, last=last)


def test_kept_counts_only_the_writers_whose_line_is_in_their_own_cell(tmp_path: Path) -> None:
    path = tmp_path / "nb.ipynb"
    mine, theirs = edited_line(0, 3, 1), edited_line(1, 5, 2)
    stale = edited_line(1, 4, 2)  # another writer's round trip put back what it had read
    _saved(path, [f"{mine}\nx = 1", f"{stale}\ny = 2", "z = 3"])
    writers = [_writer(0, mine), _writer(1, theirs)]
    assert last_edits_kept(path, writers) == 1  # planted: the second writer's edit is lost
    _saved(path, [f"{mine}\nx = 1", f"{theirs}\ny = 2", "z = 3"])
    assert last_edits_kept(path, writers) == 2
    assert last_edits_kept(path, [_writer(2, "")]) == 0  # nothing acknowledged: nothing kept
    assert last_edits_kept(path, [_writer(2, mine)]) == 0  # the line, but in another cell


def test_a_torn_or_missing_notebook_is_said_not_counted(tmp_path: Path) -> None:
    path = tmp_path / "nb.ipynb"
    _saved(path, ["a = 1"])
    whole = path.read_text()
    path.write_text(whole + whole[-40:])  # a shorter save over a longer one: a stale tail
    assert last_edits_kept(path, [_writer(0, "a = 1")]) == "not JSON"
    path.unlink()
    assert last_edits_kept(path, [_writer(0, "a = 1")]) == "missing"
