"""The public names of jupyter_hashline.notebook (DESIGN §9): pinned."""

from __future__ import annotations

import jupyter_hashline.notebook as notebook


def test_exported_members() -> None:
    assert sorted(notebook.__all__) == [
        "CellJsonCache",
        "InvalidNotebookError",
        "LoadedNotebook",
        "NotebookFilesystem",
        "ProjectedCell",
        "cell_outputs",
        "is_notebook_path",
        "load_notebook",
        "merge_projection",
        "new_notebook",
        "output_summary",
        "parse_projection",
        "project_notebook",
        "rebase_lines",
        "serialize_notebook",
        "torn_notebook",
    ]
    for name in notebook.__all__:
        assert getattr(notebook, name) is not None
