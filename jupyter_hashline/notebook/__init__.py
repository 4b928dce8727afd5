"""Notebooks as text: the hashline projection, merging it back, and Jupyter-exact serialization.

`NotebookFilesystem(inner)` shows every `.ipynb` behind any `Filesystem` as a cell-marked
projection that the hashline engine edits like any text; writes merge the text back into the
notebook (outputs, ids, metadata kept) and report what landed. The pure parts are usable alone:
`project_notebook`, `merge_projection`, `serialize_notebook`, `cell_outputs`.
"""

from __future__ import annotations

from .contents import contents_model, is_paired, parse_notebook_text
from .errors import InvalidNotebookError
from .executed import Executed
from .figures import Figure, FigureLimits, Figures, collect_figures
from .filesystem import NotebookFilesystem, WriteGuard, is_notebook_path, new_notebook
from .ids import display_ids
from .keep import LAYOUTS, layout_for_call
from .loading import LoadedNotebook, load_notebook, torn_notebook
from .merge import merge_projection
from .outputs import cell_outputs, output_summary
from .pairing import PairedDiskFilesystem
from .projection import ProjectedCell, parse_projection, project_notebook
from .rebase import rebase_lines
from .repair import repairs_between
from .restore import capturing_removed, restoring_cells
from .serialize import CellJsonCache, serialize_notebook
from .trust import NbformatNotary, Notary, SigningKey, data_dir_notary, notebook_digest

__all__ = [
    "LAYOUTS",
    "CellJsonCache",
    "Executed",
    "Figure",
    "FigureLimits",
    "Figures",
    "InvalidNotebookError",
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
