"""Validating notebooks against the nbformat schema: whole, or only what a write changes.

Invariants:
- The compiled validator nbformat picks (fastjsonschema when installed) decides; jsonschema
  only words the first problem once one is known (the slow path runs on invalid input alone).
- `top_level_problem` checks everything but the cells (metadata, version fields);
  `cells_problem` checks the given cells, each alone in a minimal notebook of the same version,
  so a write validates what it changed at a cost that does not grow with the notebook.
- Ids a write repairs (missing or duplicate ids of 4.5 cells) are not problems here.
- `known_problem` answers "is this notebook still invalid, and why" at a cost that stays small
  for valid notebooks: a screen of every cell's and output's keys, types and id (a few
  lookups per cell) decides which need the schema; only a notebook the screen doubts is
  validated whole. The screen never passes a cell whose keys, cell or output types, or id
  break the schema; deeper values (metadata fields nbformat types) are left to the schema
  when a cell changes.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from nbformat.validator import ValidationError, better_validation_error, get_validator

from .ids import display_ids, is_legacy

Where = tuple[Any, ...]


def notebook_problem(nb: Mapping[str, Any]) -> str | None:
    """The first schema problem of the whole notebook (ids repairable on write are ignored)."""
    candidate: Any = nb
    if not is_legacy(nb):
        candidate = {**nb, "cells": _with_repairable_ids(nb.get("cells", []))}
    found = _schema_problem(candidate, _minor(nb))
    if found is None:
        return None
    where, message = found
    if len(where) >= 2 and where[0] == "cells" and isinstance(where[1], int):
        cells = nb.get("cells", [])
        shown = display_ids([c if isinstance(c, Mapping) else {} for c in cells]).ids
        return f"cell {shown[where[1]]} (cell #{where[1] + 1}): {message}"
    return f"{_path(where)}: {message}"


def top_level_problem(nb: Mapping[str, Any]) -> str | None:
    """The first schema problem outside the cells (metadata, nbformat fields), or None."""
    found = _schema_problem({**nb, "cells": []}, _minor(nb))
    return None if found is None else f"{_path(found[0])}: {found[1]}"


KNOWN_CELL_TYPES = frozenset({"code", "markdown", "raw"})


def top_structure_problem(nb: Mapping[str, Any]) -> str | None:
    """Why the top level is too broken for any tool to open (metadata not an object, a
    version that is not a whole number), or None. Other top-level schema problems (a field of
    the metadata of the wrong type) are kept by writes, as Jupyter keeps them."""
    if not isinstance(nb.get("metadata"), Mapping):
        return "its metadata is not an object"
    if not isinstance(nb.get("nbformat_minor"), int):
        return "its nbformat_minor is not a whole number"
    return None


def structure_problem(nb: Mapping[str, Any]) -> str | None:
    """The first cell too broken for any tool to read as a cell, or None: a cell type that is
    not text (or unknown where the version knows every type), a source that is not text,
    metadata that is not an object, code outputs that are not a list. Cheap: a few type checks
    per cell, so every write can afford it where full validation of every cell cannot."""
    cells = nb.get("cells", [])
    future = _minor(nb) > 5
    for index, cell in enumerate(cells):
        problem = cell_structure_problem(cell, future)
        if problem is not None:
            shown = display_ids([c if isinstance(c, Mapping) else {} for c in cells]).ids
            return f"cell {shown[index]} (cell #{index + 1}): {problem}"
    return None


def cell_structure_problem(cell: Mapping[str, Any], future: bool) -> str | None:
    kind = cell.get("cell_type")
    if not isinstance(kind, str) or (kind not in KNOWN_CELL_TYPES and not future):
        return f"cell_type {kind!r} is not code, markdown or raw"
    if "source" in cell and not isinstance(cell["source"], str):
        return "its source is not text"
    if not isinstance(cell.get("metadata", {}), Mapping):
        return "its metadata is not an object"
    if kind == "code" and not isinstance(cell.get("outputs", []), list):
        return "its outputs are not a list"
    return None


def cells_problem(
    nb: Mapping[str, Any],
    cells: Iterable[Mapping[str, Any]],
    names: Callable[[], Mapping[int, str]],
) -> str | None:
    """The first schema problem of the given cells of `nb`; `names()` maps id(cell) to the id
    the cell is shown with (asked for only when there is a problem to report)."""
    minor = _minor(nb)
    frame = {"metadata": {}, "nbformat": nb.get("nbformat", 4), "nbformat_minor": minor}
    for cell in cells:
        found = _schema_problem({**frame, "cells": [cell]}, minor)
        if found is not None:
            where, message = found
            inside = "/".join(map(str, where[2:]))
            name = names().get(id(cell), "?")
            return f"cell {name}{': ' + inside if inside else ''}: {message}"
    return None


_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}\Z")
_REQUIRED = {"code": ("outputs", "execution_count"), "markdown": (), "raw": ()}
_ALLOWED = {
    "code": frozenset({"id", "cell_type", "metadata", "source", "outputs", "execution_count"}),
    "markdown": frozenset({"id", "cell_type", "metadata", "source", "attachments"}),
    "raw": frozenset({"id", "cell_type", "metadata", "source", "attachments"}),
}
_OUTPUT_KEYS = {
    "stream": (frozenset({"output_type", "name", "text"}), frozenset({"name", "text"})),
    "display_data": (
        frozenset({"output_type", "data", "metadata"}),
        frozenset({"data", "metadata"}),
    ),
    "execute_result": (
        frozenset({"output_type", "data", "metadata", "execution_count"}),
        frozenset({"data", "metadata", "execution_count"}),
    ),
    "error": (
        frozenset({"output_type", "ename", "evalue", "traceback"}),
        frozenset({"ename", "evalue", "traceback"}),
    ),
}


def known_problem(nb: Mapping[str, Any]) -> str | None:
    """The notebook's first schema problem (as `notebook_problem` words it), or None; the
    whole-notebook schema runs only when the screen doubts a cell (module docstring)."""
    return top_level_problem(nb) or cells_known_problem(nb)


def cells_known_problem(nb: Mapping[str, Any]) -> str | None:
    """`known_problem` of a notebook whose top level is known valid (its cells, screened)."""
    if all(map(_looks_valid, nb.get("cells", []))) and _ids_ok(nb):
        return None
    return notebook_problem(nb)


def cells_pass_screen(nb: Mapping[str, Any], cells: Iterable[Any]) -> bool:
    """Whether `cells` (of `nb`) pass the screen `known_problem` applies to every cell: a
    notebook known valid whose other cells did not change is valid when they do."""
    cells = list(cells)
    return all(map(_looks_valid, cells)) and _ids_ok(nb, cells)


def _ids_ok(nb: Mapping[str, Any], cells: Iterable[Any] | None = None) -> bool:
    """No id in a notebook older than 4.5; in 4.5 and later, every id well formed."""
    legacy = is_legacy(nb)
    for cell in nb.get("cells", []) if cells is None else cells:
        cid = cell.get("id")
        if (cid is not None) if legacy else not (isinstance(cid, str) and _ID.match(cid)):
            return False
    return True


def _looks_valid(cell: Any) -> bool:
    if type(cell) is not dict or type(cell.get("metadata")) is not dict:
        return False
    if type(cell.get("source")) is not str or not _cell_shape(cell.get("cell_type"), tuple(cell)):
        return False
    outputs = cell.get("outputs", ())
    if type(outputs) is not list:
        return outputs == ()
    for output in outputs:
        if type(output) is not dict or not _output_shape(output.get("output_type"), tuple(output)):
            return False
    return True


@functools.lru_cache(maxsize=256)
def _cell_shape(kind: Any, keys: tuple[str, ...]) -> bool:
    """Whether a cell of type `kind` may have exactly these keys (cached: notebooks repeat a
    handful of shapes, so the screen is a lookup per cell)."""
    allowed = _ALLOWED.get(kind) if isinstance(kind, str) else None
    if allowed is None or not allowed.issuperset(keys) or "metadata" not in keys:
        return False
    return all(key in keys for key in _REQUIRED[kind])


@functools.lru_cache(maxsize=256)
def _output_shape(kind: Any, keys: tuple[str, ...]) -> bool:
    found = _OUTPUT_KEYS.get(kind) if isinstance(kind, str) else None
    return found is not None and found[0].issuperset(keys) and found[1].issubset(keys)


def _minor(nb: Mapping[str, Any]) -> int:
    minor = nb.get("nbformat_minor", 0)
    return minor if isinstance(minor, int) else 0


def _path(where: Where) -> str:
    return "/".join(map(str, where)) or "notebook"


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


def _validator(minor: int) -> Any:
    """nbformat's validator for 4.`minor` (the one `NBFORMAT_VALIDATOR` names), kept per name."""
    key = (minor, os.environ.get("NBFORMAT_VALIDATOR"))
    found = _VALIDATORS.get(key)
    if found is None:
        found = _VALIDATORS[key] = get_validator(version=4, version_minor=minor)
    return found


_VALIDATORS: dict[tuple[int, str | None], Any] = {}


def _schema_problem(nb: Any, minor: int) -> tuple[Where, str] | None:
    """None when `nb` is valid; else where and what the first problem is."""
    validator = _validator(minor)
    if validator is None:
        return (), f"no schema is known for nbformat 4.{minor}"
    try:
        validator.validate(nb)
    except ValidationError:
        return _explain(nb, minor)
    return None


def _explain(nb: Any, minor: int) -> tuple[Where, str]:
    explainer = get_validator(version=4, version_minor=minor, name="jsonschema")
    for error in explainer.iter_errors(nb) if explainer is not None else ():
        message = better_validation_error(error, 4, minor).message
        return tuple(error.absolute_path), str(message)
    return (), "the notebook does not match the nbformat schema"
