"""The public names of jupyter_hashline.notebook (DESIGN §9): pinned."""

from __future__ import annotations

import jupyter_hashline.notebook as notebook


def test_exported_members() -> None:
    assert sorted(notebook.__all__) == [
        "CellJsonCache",
        "Executed",
        "Figure",
        "FigureLimits",
        "Figures",
        "InvalidNotebookError",
        "LAYOUTS",
        "LoadedNotebook",
        "NbformatNotary",
        "Notary",
        "NotebookFilesystem",
        "PairedDiskFilesystem",
        "ProjectedCell",
        "SigningKey",
        "WriteGuard",
        "capturing_removed",
        "cell_outputs",
        "collect_figures",
        "contents_model",
        "data_dir_notary",
        "display_ids",
        "is_notebook_path",
        "is_paired",
        "layout_for_call",
        "load_notebook",
        "merge_projection",
        "new_notebook",
        "notebook_digest",
        "output_summary",
        "parse_notebook_text",
        "parse_projection",
        "project_notebook",
        "rebase_lines",
        "repairs_between",
        "restoring_cells",
        "serialize_notebook",
        "torn_notebook",
    ]
    for name in notebook.__all__:
        assert getattr(notebook, name) is not None
