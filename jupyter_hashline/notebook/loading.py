"""Reading notebook files into memory, and validating notebooks (whole, or only what changed).

Invariants:
- `load_notebook(raw)` gives the notebook nbformat.reads would give for a v4 file (multi-line
  fields joined, transient keys dropped), as plain dicts, without repairing anything and without
  nbformat's per-read validation cost. Files older than v4 are converted by nbformat and then
  treated as legacy (their converted ids are random, so they are not shown).
- A file that is not JSON, or not a notebook at all, raises `InvalidNotebookError` saying what
  to do; a notebook that merely fails schema validation loads (it can be read) and reports the
  problem from `LoadedNotebook.write_problem()`: it cannot be written.
- Missing ids and duplicate ids in a 4.5+ notebook are repairable: the first write stores the
  shown ids (missing) or fresh ones (duplicates), with a warning.
- Validation runs at most once per loaded text (cached on the `LoadedNotebook`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import nbformat
from nbformat.validator import ValidationError, better_validation_error, get_validator

from .errors import InvalidNotebookError
from .ids import DisplayIds, display_ids, is_legacy
from .projection import project_notebook

Notebook = dict[str, Any]
_NB_TRANSIENT = ("orig_nbformat", "orig_nbformat_minor", "signature")
_UNCHECKED = object()


class LoadedNotebook:
    """One version of a notebook file: its raw text, the notebook, and what it projects to.

    Treat `nb` as immutable: it is shared with caches (serialized cells, projections).
    """

    __slots__ = ("_ids", "_problem", "_projection", "_views", "nb", "raw")

    def __init__(self, raw: str, nb: Notebook, *, validated: bool = False) -> None:
        """`validated=True` when the caller already validated `nb` (e.g. it just wrote it)."""
        self.raw = raw
        self.nb = nb
        self._projection: str | None = None
        self._ids: DisplayIds | None = None
        self._problem: object = None if validated else _UNCHECKED
        self._views: dict[str, Any] = {}

    @property
    def projection(self) -> str:
        if self._projection is None:
            self._projection = project_notebook(self.nb)
        return self._projection

    @property
    def ids(self) -> DisplayIds:
        if self._ids is None:
            self._ids = display_ids(self.nb.get("cells", []))
        return self._ids

    def view(self, fmt: str, render: Callable[[Notebook, str], Any]) -> Any:
        """`render(nb, fmt)`, computed once per `fmt` (jupytext texts, annotations, ...)."""
        if fmt not in self._views:
            self._views[fmt] = render(self.nb, fmt)
        return self._views[fmt]

    def write_problem(self) -> str | None:
        """Why this notebook cannot be written (schema problems), or None. Cached."""
        if self._problem is _UNCHECKED:
            self._problem = notebook_problem(self.nb)
        return self._problem  # type: ignore[return-value]


def load_notebook(raw: str, path: str = "notebook") -> LoadedNotebook:
    """Parse a notebook file's text (see the module docstring)."""
    try:
        data = json.loads(raw)
    except ValueError as err:
        raise InvalidNotebookError(
            f"{path} is not valid JSON ({err}), so it cannot be read as a notebook. Repair the "
            "file (for example resolve git conflict markers) or restore it, then read it again."
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("nbformat"), int):
        raise InvalidNotebookError(
            f"{path} is JSON but not a notebook (no integer `nbformat` field)."
        )
    if data["nbformat"] != 4:
        return LoadedNotebook(raw, _converted(raw, data["nbformat"], path))
    if not isinstance(data.get("cells"), list):
        raise InvalidNotebookError(f"{path} is not a readable notebook: it has no `cells` list.")
    odd = next((n for n, cell in enumerate(data["cells"]) if not isinstance(cell, dict)), None)
    if odd is not None:
        raise InvalidNotebookError(
            f"{path} is not a readable notebook: cell {odd + 1} is not a JSON object. Repair the "
            "file (or restore it from version control), then read it again."
        )
    rejoin_lines(data)
    return LoadedNotebook(raw, data)


def _converted(raw: str, version: int, path: str) -> Notebook:
    if version not in (1, 2, 3):
        raise InvalidNotebookError(
            f"{path} uses nbformat {version}, which this version cannot read (only 1 to 4)."
        )
    try:
        node = nbformat.reads(raw, as_version=4)
    except Exception as err:
        raise InvalidNotebookError(
            f"{path} (nbformat {version}) cannot be converted: {err}"
        ) from None
    nb = json.loads(json.dumps(node))
    for cell in nb.get("cells", []):
        cell.pop("id", None)
    nb["nbformat_minor"] = 4
    return rejoin_lines(nb)


def rejoin_lines(nb: Notebook) -> Notebook:
    """In place, as nbformat reads do: join line lists into strings; drop transient keys."""
    metadata = nb.get("metadata")
    if isinstance(metadata, dict):
        for key in _NB_TRANSIENT:
            metadata.pop(key, None)
    for cell in nb["cells"]:
        if isinstance(cell, dict):
            _rejoin_cell(cell)
    return nb


def _rejoin_cell(cell: dict[str, Any]) -> None:
    source = cell.get("source")
    if isinstance(source, list) and all(isinstance(line, str) for line in source):
        cell["source"] = "".join(source)
    attachments = cell.get("attachments")
    if isinstance(attachments, dict):
        for bundle in attachments.values():
            _rejoin_bundle(bundle)
    metadata = cell.get("metadata")
    if isinstance(metadata, dict):
        metadata.pop("trusted", None)
    if cell.get("cell_type") != "code" or not isinstance(cell.get("outputs"), list):
        return
    for output in cell["outputs"]:
        if not isinstance(output, dict):
            continue
        kind = output.get("output_type", "")
        if kind in ("execute_result", "display_data"):
            _rejoin_bundle(output.get("data"))
        elif (
            kind
            and isinstance(output.get("text"), list)
            and all(isinstance(line, str) for line in output["text"])
        ):
            output["text"] = "".join(output["text"])


def _rejoin_bundle(bundle: Any) -> None:
    if not isinstance(bundle, dict):
        return
    for mime, value in bundle.items():
        if _is_json_mime(mime) or not isinstance(value, list):
            continue
        if all(isinstance(line, str) for line in value):
            bundle[mime] = "".join(value)


def _is_json_mime(mime: str) -> bool:
    return mime == "application/json" or (
        mime.startswith("application/") and mime.endswith("+json")
    )


# -- validation --------------------------------------------------------------------------------


def notebook_problem(nb: Mapping[str, Any]) -> str | None:
    """The first schema problem of the whole notebook (ids repairable on write are ignored)."""
    minor = nb.get("nbformat_minor", 0)
    candidate: Any = nb
    if not is_legacy(nb):
        candidate = {**nb, "cells": _with_repairable_ids(nb.get("cells", []))}
    return _schema_problem(candidate, minor if isinstance(minor, int) else 0)


def changed_cells_problem(
    nb: Mapping[str, Any], cells: Iterable[Mapping[str, Any]], names: Mapping[int, str]
) -> str | None:
    """Schema problems of the given cells only, each checked in `nb`'s notebook frame."""
    minor = nb.get("nbformat_minor", 0)
    frame = {k: v for k, v in nb.items() if k != "cells"}
    for cell in cells:
        problem = _schema_problem(
            {**frame, "cells": [cell]}, minor if isinstance(minor, int) else 0
        )
        if problem is not None:
            return f"cell {names.get(id(cell), '?')}: {problem.replace('data.cells[0]', 'cell')}"
    return None


def _with_repairable_ids(cells: list[Any]) -> list[Any]:
    """The cells as the first write stores them: shown ids for missing ones, fresh duplicates."""
    shown = display_ids([c if isinstance(c, Mapping) else {} for c in cells]).ids
    seen: set[str] = set()
    fixed: list[Any] = []
    for index, (cell, cid) in enumerate(zip(cells, shown, strict=True)):
        own = cell.get("id") if isinstance(cell, Mapping) else None
        if isinstance(cell, Mapping) and (own is None or (isinstance(own, str) and own in seen)):
            cell = {**cell, "id": cid if own is None else f"repaired-{index}"}
        if isinstance(cell, Mapping) and isinstance(cell.get("id"), str):
            seen.add(cell["id"])
        fixed.append(cell)
    return fixed


def _schema_problem(nb: Any, minor: int) -> str | None:
    """None when `nb` is valid; else the first problem, worded by jsonschema (slow, rare path)."""
    validator = get_validator(version=4, version_minor=minor)
    if validator is None:
        return f"no schema is known for nbformat 4.{minor}"
    try:
        validator.validate(nb)
    except ValidationError:
        return _explain(nb, minor)
    return None


def _explain(nb: Any, minor: int) -> str:
    explainer = get_validator(version=4, version_minor=minor, name="jsonschema")
    for error in explainer.iter_errors(nb) if explainer is not None else ():
        where = list(error.absolute_path)
        message = better_validation_error(error, 4, minor).message
        if len(where) >= 2 and where[0] == "cells" and isinstance(where[1], int):
            cells = nb.get("cells", [])
            shown = display_ids([c if isinstance(c, Mapping) else {} for c in cells]).ids
            return f"cell {shown[where[1]]} (cell #{where[1] + 1}): {message}"
        return f"{'/'.join(map(str, where)) or 'notebook'}: {message}"
    return "the notebook does not match the nbformat schema"
