"""bench/cold.py's untimed person's save writes exactly what nbformat writes, and its check
catches a save that does not (a planted one)."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

import bench.cold as cold
from bench.notebook import generated_notebook
from jupyter_hashline.notebook import serialize_notebook


def _case(tmp_path: Path) -> cold.ColdCase:
    return cold.ColdCase(serialize_notebook(generated_notebook(30)), tmp_path, first_contact=False)


def test_the_person_save_is_nbformats_write_of_the_person_edit(tmp_path: Path) -> None:
    case = _case(tmp_path)
    try:
        case.check_person_save()
        case.reset(case.path)()
        saved = nbformat.read(case.path, as_version=4)
        for index in case.person_cells:
            assert saved.cells[index].source.endswith(f"\n# saved {case.count}")
        untouched = [i for i in range(len(saved.cells)) if i not in case.person_cells]
        assert not any("# saved" in saved.cells[i].source for i in untouched)
    finally:
        case.close()


def test_a_person_save_unlike_nbformats_fails_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    case = _case(tmp_path)
    try:
        monkeypatch.setattr(cold, "serialize_notebook", lambda nb: json.dumps(nb, indent=2))
        with pytest.raises(AssertionError, match="differs from nbformat"):
            case.check_person_save()
    finally:
        case.close()
