"""Jupytext formats as the projection: `py:percent`, `md`, `md:myst`, ... instead of hashline's.

Invariants:
- `jupytext_text(nb, fmt)` is exactly what jupytext writes for the notebook in that format, so
  a write reports what jupytext actually produced (a dropped trailing newline shows).
- `merge_jupytext(nb, text, fmt)` keeps outputs, ids and metadata of the cells jupytext matches
  (jupytext's own `combine_inputs_with_outputs`); the result is always storable: a notebook
  older than 4.5 whose cells gained ids is upgraded to 4.5, every cell keeping or getting an id.
- `nb` is never modified.
- jupytext is imported only when a jupytext projection is used: importing it loads
  jupyter_server and tornado (its contents manager), which the notebook layer must not pull in
  for the default hashline projection.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

from nbformat import from_dict

from .errors import InvalidNotebookError
from .ids import display_ids, is_legacy

Notebook = dict[str, Any]


def check_format(fmt: str) -> str:
    """`fmt` if jupytext knows it, else a clear error naming some that work."""
    from jupytext.formats import long_form_one_format

    try:
        known = long_form_one_format(fmt).get("extension") not in (None, ".ipynb")
    except Exception:
        known = False
    if not known:
        raise ValueError(
            f"unknown projection {fmt!r}: use 'hashline' or a jupytext text format such as "
            "'py:percent', 'py:light', 'md', 'md:myst'"
        )
    return fmt


def jupytext_text(nb: Mapping[str, Any], fmt: str) -> str:
    import jupytext

    return str(jupytext.writes(from_dict(copy.deepcopy(dict(nb))), fmt=fmt))


def merge_jupytext(nb: Mapping[str, Any], text: str, fmt: str) -> tuple[Notebook, list[str]]:
    """The notebook `text` (in jupytext format `fmt`) describes, with `nb`'s outputs kept."""
    import jupytext
    from jupytext.combine import combine_inputs_with_outputs

    try:
        source = jupytext.reads(text, fmt=fmt)
    except Exception as err:
        raise InvalidNotebookError(f"jupytext could not read the text as {fmt}: {err}") from None
    outputs = from_dict(copy.deepcopy(dict(nb)))
    if outputs.nbformat != source.nbformat:
        source.nbformat = outputs.nbformat
    combined = combine_inputs_with_outputs(source, outputs, fmt=fmt)
    merged: Notebook = json.loads(json.dumps(combined))
    warnings: list[str] = []
    if is_legacy(merged) and any("id" in cell for cell in merged["cells"]):
        shown = display_ids([{k: v for k, v in c.items() if k != "id"} for c in merged["cells"]])
        for cell, cid in zip(merged["cells"], shown.ids, strict=True):
            cell.setdefault("id", cid)
        old = f"{merged.get('nbformat')}.{merged.get('nbformat_minor')}"
        merged["nbformat_minor"] = 5
        warnings.append(f"notebook upgraded from nbformat {old} to 4.5: cell ids are now stored")
    return merged, warnings
