"""Minimal diffs and repairs on real files: nbdime is the witness of what an edit changed.

- A one-line edit to an nbformat 4.4 notebook changes one cell in nbdime's diff, keeps
  `nbformat_minor` and stores no ids; the other cells keep their bytes.
- A notebook JupyterLab would repair on save (Azure Data Studio's outputs on markdown cells) can
  be edited: the repair is made, with a warning naming the cells.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbdime import diff_notebooks

from jupyter_hashline.hashline import DiskFilesystem, InMemorySnapshotStore, Patcher
from jupyter_hashline.notebook import NotebookFilesystem, serialize_notebook


def legacy_notebook() -> dict:
    cells = []
    for n in range(12):
        if n % 3 == 0:
            cells.append({"cell_type": "markdown", "metadata": {}, "source": f"## Part {n}"})
            continue
        cells.append(
            {"cell_type": "code", "execution_count": n, "metadata": {"tags": ["t"]},
             "outputs": [{"name": "stdout", "output_type": "stream", "text": f"{n}\nok\n"}],
             "source": f"value = {n}\nprint(value)"}
        )  # fmt: skip
    meta = {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}}
    return {"cells": cells, "metadata": meta, "nbformat": 4, "nbformat_minor": 4}


async def test_a_one_line_edit_to_a_4_4_notebook_changes_one_cell_in_nbdime(
    tmp_path: Path,
) -> None:
    raw = serialize_notebook(legacy_notebook())
    (tmp_path / "old.ipynb").write_text(raw)
    patcher = Patcher(NotebookFilesystem(DiskFilesystem(tmp_path)), InMemorySnapshotStore())
    read = await patcher.read("old.ipynb")
    line = read.text.split("\n").index("value = 4") + 1
    result = await patcher.apply(f"{read.header}\nreplace {line}:\n+value = 40\n")
    assert result.sections[0].written
    written = (tmp_path / "old.ipynb").read_text()
    before, after = nbformat.reads(raw, as_version=4), nbformat.reads(written, as_version=4)
    diff = diff_notebooks(before, after)
    assert [entry["key"] for entry in diff] == ["cells"]
    assert [entry["key"] for entry in diff[0]["diff"]] == [4]
    assert [entry["key"] for entry in diff[0]["diff"][0]["diff"]] == ["source"]
    assert after.nbformat_minor == 4 and all("id" not in cell for cell in after.cells)
    old_lines, new_lines = raw.split("\n"), written.split("\n")
    changed = [n for n, (a, b) in enumerate(zip(old_lines, new_lines, strict=True)) if a != b]
    assert len(changed) == 1 and '"value = 40\\n"' in new_lines[changed[0]]
    assert written == nbformat.writes(after) + "\n"


def azure_data_studio_notebook() -> dict:
    """Markdown cells carrying `outputs` and `execution_count`, as Azure Data Studio saves."""
    nb = legacy_notebook()
    nb["nbformat_minor"] = 2
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            cell["outputs"] = []
            cell["execution_count"] = None
    return nb


async def test_an_azure_data_studio_notebook_can_be_edited_with_a_warning(
    tmp_path: Path,
) -> None:
    raw = serialize_notebook(azure_data_studio_notebook())
    (tmp_path / "ads.ipynb").write_text(raw)
    try:
        nbformat.validate(nbformat.reads(raw, as_version=4))
    except nbformat.ValidationError:
        pass
    else:
        raise AssertionError("the test notebook should be invalid as Azure Data Studio's are")
    patcher = Patcher(NotebookFilesystem(DiskFilesystem(tmp_path)), InMemorySnapshotStore())
    read = await patcher.read("ads.ipynb")
    line = read.text.split("\n").index("value = 1") + 1
    result = await patcher.apply(f"{read.header}\nreplace {line}:\n+value = 10\n")
    section = result.sections[0]
    assert section.written
    warning = next(w for w in section.warnings if "non-code cells" in w)
    assert "cell-1, cell-4, cell-7, cell-10" in warning
    after = nbformat.reads((tmp_path / "ads.ipynb").read_text(), as_version=4)
    nbformat.validate(after)
    assert after.nbformat_minor == 2
    assert after.cells[1].source == "value = 10\nprint(value)"
    assert all("outputs" not in c for c in after.cells if c.cell_type == "markdown")
