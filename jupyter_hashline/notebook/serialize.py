"""Notebook serialization, byte for byte as Jupyter writes it, without nbformat's overhead.

`serialize_notebook(nb)` returns exactly `nbformat.writes(nb) + "\\n"` for a valid v4 notebook:
JSON with `indent=1`, keys sorted, `(",", ": ")` separators, non-ASCII kept; multi-line
strings split into lists of lines (`str.splitlines(keepends=True)`) where nbformat splits them
(cell sources; stream text; `text/*`, `application/javascript` and `image/svg+xml` values of
output and attachment bundles); transient keys dropped (notebook metadata `orig_nbformat`,
`orig_nbformat_minor`, `signature`; cell metadata `trusted`); bytes written as ASCII text.

Invariants:
- The notebook passed in is never modified (nbformat deep-copies; this builds the disk form
  on the fly with shallow copies of the few containers it changes).
- With a `CellJsonCache`, a cell object serialized before is not serialized again: its JSON is
  reused. The cache is keyed by object identity, so it is only for notebooks whose cells are
  treated as immutable values (the notebook layer never mutates a cell in place; merging copies
  the cells it changes). Without a cache every call serializes everything.
- `cell_json_reusing(cell, old, old_json)` is `cell_json(cell)` whenever `old_json` is
  `cell_json(old)`: it copies the JSON of the values `cell` shares with `old` (the very
  objects) and writes the rest, and declines (None) bytes laid out otherwise.
- Outputs and attachments may come as nbformat stores them (lists of lines) or as nbformat
  reads them (joined strings): both are written the way nbformat writes what it read.
- Validation is not done here (see `validation.py`): nbformat.writes validates the whole
  notebook on every call; the notebook layer validates only what changed.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

_encode_str: Callable[[str], str] = json.encoder.encode_basestring
_SPLIT_MIMES = frozenset({"application/javascript", "image/svg+xml"})
_NB_TRANSIENT = frozenset({"orig_nbformat", "orig_nbformat_minor", "signature"})
_CELL_INDENT = "\n  "  # cells sit at depth 2: {"cells": [ <cell>, ... ]}


class CellJsonCache:
    """Serialized JSON of recently written cells, keyed by the cell object's identity.

    Holds a reference to every cached cell (so an id can never be reused by another object
    while its entry lives). Bounded by two generations of at most `max_cells // 2` entries each:
    an entry is put, or found again in the old generation, into the young one; a full young
    generation becomes the old one and the old one is dropped. So an entry used since the last
    `max_cells // 2` others were put stays, and a hit in the young generation (every cell of a
    notebook written again and again) costs one dictionary lookup, with no reordering.
    """

    def __init__(self, max_cells: int = 20_000) -> None:
        self._young: dict[int, tuple[object, str]] = {}
        self._old: dict[int, tuple[object, str]] = {}
        self._half = max(1, max_cells // 2)
        self._lock = threading.Lock()  # worker threads share it (notebook/filesystem.py)

    def __len__(self) -> int:
        return len(self._young) + len(self._old)

    def get(self, cell: object) -> str | None:
        return self.get_many((cell,))[0]

    def get_many(self, cells: Iterable[object]) -> list[str | None]:
        """`get` of each cell, under one hold of the lock."""
        found: list[str | None] = []
        with self._lock:
            young = self._young.get
            for cell in cells:
                entry = young(id(cell))
                if entry is None:
                    entry = self._old.pop(id(cell), None)
                    if entry is not None:
                        self._keep(id(cell), entry)
                        young = self._young.get  # the generations may have turned
                found.append(entry[1] if entry is not None and entry[0] is cell else None)
        return found

    def put(self, cell: object, text: str) -> None:
        with self._lock:
            self._old.pop(id(cell), None)
            self._keep(id(cell), (cell, text))

    def _keep(self, key: int, entry: tuple[object, str]) -> None:
        self._young[key] = entry
        if len(self._young) >= self._half:
            self._old, self._young = self._young, {}

    def clear(self) -> None:
        with self._lock:
            self._young, self._old = {}, {}


def serialize_notebook(nb: Mapping[str, Any], *, cache: CellJsonCache | None = None) -> str:
    """The exact text Jupyter writes for `nb` (`nbformat.writes(nb) + "\\n"`)."""
    disk: dict[str, Any] = dict(nb)
    metadata = nb.get("metadata")
    if isinstance(metadata, Mapping) and not _NB_TRANSIENT.isdisjoint(metadata):
        disk["metadata"] = {k: v for k, v in metadata.items() if k not in _NB_TRANSIENT}
    out: list[str] = ["{"]
    for index, (key, value) in enumerate(sorted(disk.items(), key=lambda kv: kv[0])):
        out.append(",\n " if index else "\n ")
        out.append(_encode_str(key) + ": ")
        if key == "cells" and isinstance(value, list) and value:
            _emit_cells(value, cache, out)
        else:
            _emit(value, "\n ", out)
    out.append("\n}\n")
    return "".join(out)


def _emit_cells(cells: list[Any], cache: CellJsonCache | None, out: list[str]) -> None:
    out.append("[" + _CELL_INDENT)
    known = cache.get_many(cells) if cache is not None else None
    for index, cell in enumerate(cells):
        if index:
            out.append("," + _CELL_INDENT)
        if known is not None:
            text = known[index]
            out.append(cell_json(cell, cache) if text is None else text)
        elif isinstance(cell, Mapping):
            _emit(disk_cell(cell), _CELL_INDENT, out)
        else:
            _emit(cell, _CELL_INDENT, out)
    out.append("\n ]")


def cell_json(cell: Any, cache: CellJsonCache | None = None) -> str:
    """One cell's JSON as it appears in the file (indented for its place in `cells`)."""
    if cache is not None:
        text = cache.get(cell)
        if text is not None:
            return text
    text = _dump(disk_cell(cell) if isinstance(cell, Mapping) else cell, _CELL_INDENT)
    if cache is not None:
        cache.put(cell, text)
    return text


_CELL_OPEN = b'{\n   "'  # a cell's first key, at depth 3
_CELL_ITEM = b',\n   "'  # between two keys of a cell: a JSON string holds no raw line break,
# so exactly three spaces then a quote after one occur only there
_CELL_CLOSE = b"\n  }"


def cell_json_reusing(cell: Any, old: Any, old_json: bytes) -> bytes | None:
    """`cell_json(cell)` as UTF-8, reusing from `old_json` (the bytes `cell_json(old)` gives)
    the JSON of every value `cell` holds under the same key as `old` (the very object), so an
    edit of a cell's source does not write its outputs again. None when `old_json` is not laid
    out as such bytes are (the caller serializes the cell). Raises `UnicodeEncodeError` for
    text that cannot be UTF-8 (a lone surrogate)."""
    if not (isinstance(cell, Mapping) and isinstance(old, Mapping) and cell and old):
        return None
    if not all(type(key) is str for key in (*cell, *old)):
        return None
    if not (old_json.startswith(_CELL_OPEN) and old_json.endswith(_CELL_CLOSE)):
        return None
    keys = sorted(old)
    pieces = old_json[len(_CELL_OPEN) : -len(_CELL_CLOSE)].split(_CELL_ITEM)
    if len(pieces) != len(keys):
        return None
    kept: dict[str, bytes] = {}
    for key, piece in zip(keys, pieces, strict=True):
        if not piece.startswith(_encode_str(key)[1:].encode("utf-8") + b": "):
            return None
        kept[key] = piece
    same_type = cell.get("cell_type") == old.get("cell_type")  # outputs are stored by type
    disk: dict[str, Any] | None = None
    parts: list[bytes] = []
    for key in sorted(cell):
        shared = key in old and old[key] is cell[key] and (same_type or key != "outputs")
        found = kept.get(key) if shared else None
        if found is None:
            disk = disk_cell(cell) if disk is None else disk
            found = (_encode_str(key)[1:] + ": " + _dump(disk[key], "\n   ")).encode("utf-8")
        parts.append(found)
    return _CELL_OPEN + _CELL_ITEM.join(parts) + _CELL_CLOSE


def disk_cell(cell: Mapping[str, Any]) -> dict[str, Any]:
    """The cell as nbformat writes it: lines split, transient metadata dropped (a shallow copy)."""
    disk = stored_cell(cell, _split_bundle, _disk_output)
    source = disk.get("source")
    if isinstance(source, str):
        disk["source"] = source.splitlines(True)
    return disk


def stored_cell(
    cell: Mapping[str, Any],
    bundle: Callable[[Any], Any] | None = None,
    output: Callable[[Any], Any] | None = None,
) -> dict[str, Any]:
    """A shallow copy of `cell` as a file stores it: no `trusted` metadata; each attachment's
    mime bundle through `bundle` and each output of a code cell through `output` (how a file's
    layout stores their values), when given."""
    disk = dict(cell)
    metadata = disk.get("metadata")
    if isinstance(metadata, Mapping) and "trusted" in metadata:
        disk["metadata"] = {k: v for k, v in metadata.items() if k != "trusted"}
    attachments = disk.get("attachments")
    if bundle is not None and isinstance(attachments, Mapping) and attachments:
        disk["attachments"] = {name: bundle(b) for name, b in attachments.items()}
    outputs = disk.get("outputs")
    if output is not None and disk.get("cell_type") == "code" and isinstance(outputs, list):
        disk["outputs"] = [output(item) for item in outputs]
    return disk


def _disk_output(output: Any) -> Any:
    """An output as nbformat writes it: what its reader joins is joined, then split again."""
    if not isinstance(output, Mapping):
        return output
    kind = output.get("output_type")
    if kind in ("execute_result", "display_data"):
        data = output.get("data")
        if isinstance(data, Mapping):
            return {**output, "data": _split_bundle(data)}
        return output
    text = output.get("text")
    if isinstance(text, list) and kind:
        text = joined_lines(text)
    if kind == "stream" and isinstance(text, str):
        return {**output, "text": text.splitlines(True)}
    return output if text is output.get("text") else {**output, "text": text}


def _split_bundle(bundle: Any) -> Any:
    if not isinstance(bundle, Mapping):
        return bundle
    return {mime: _disk_value(mime, value) for mime, value in bundle.items()}


def _disk_value(mime: str, value: Any) -> Any:
    if isinstance(value, list) and not is_json_mime(mime):
        value = joined_lines(value)
    if isinstance(value, str) and (mime.startswith("text/") or mime in _SPLIT_MIMES):
        return value.splitlines(True)
    return value


def joined_lines(value: list[Any]) -> Any:
    """`"".join(value)` for a list of strings; any other list unchanged."""
    try:
        return "".join(value)
    except TypeError:
        return value


def is_json_mime(mime: str) -> bool:
    return mime == "application/json" or (
        mime.startswith("application/") and mime.endswith("+json")
    )


def _dump(obj: Any, newline: str) -> str:
    """JSON of `obj` as `json.dumps(indent=1, sort_keys=True, ensure_ascii=False)` writes it
    when `obj` sits on a line indented as `newline` ("\\n" + spaces) says."""
    out: list[str] = []
    _emit(obj, newline, out)
    return "".join(out)


def _emit(obj: Any, newline: str, out: list[str]) -> None:
    """Append the JSON of `obj` to `out` in pieces (joined once: no copying per nesting level)."""
    if isinstance(obj, str):
        out.append(_encode_str(obj))
    elif obj is None:
        out.append("null")
    elif obj is True:
        out.append("true")
    elif obj is False:
        out.append("false")
    elif isinstance(obj, int):
        out.append(int.__repr__(obj))
    elif isinstance(obj, float):
        out.append(_float(obj))
    elif isinstance(obj, (list, tuple)):
        _emit_list(obj, newline, out)
    elif isinstance(obj, dict):
        _emit_dict(obj, newline, out)
    elif isinstance(obj, bytes):  # nbformat's BytesEncoder
        out.append(_encode_str(obj.decode("ascii")))
    else:
        raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")


def _emit_list(items: list[Any] | tuple[Any, ...], newline: str, out: list[str]) -> None:
    if not items:
        out.append("[]")
        return
    inner = newline + " "
    out.append("[" + inner)
    if len(items) > 1 or not isinstance(items[0], str):
        try:  # lists of lines are the bulk of a notebook: encode them in one C-level pass
            out.append(("," + inner).join(map(_encode_str, items)))
        except TypeError:
            for index, item in enumerate(items):
                if index:
                    out.append("," + inner)
                _emit(item, inner, out)
    else:
        out.append(_encode_str(items[0]))
    out.append(newline + "]")


def _emit_dict(mapping: dict[Any, Any], newline: str, out: list[str]) -> None:
    if not mapping:
        out.append("{}")
        return
    inner = newline + " "
    separator = "," + inner
    out.append("{" + inner)
    for index, (key, value) in enumerate(sorted(mapping.items())):
        if index:
            out.append(separator)
        out.append(_key(key) + ": ")
        _emit(value, inner, out)
    out.append(newline + "}")


def _key(key: Any) -> str:
    if isinstance(key, str):
        return _encode_str(key)
    if isinstance(key, float):
        return _encode_str(_float(key))
    if key is True:
        return '"true"'
    if key is False:
        return '"false"'
    if key is None:
        return '"null"'
    if isinstance(key, int):
        return _encode_str(int.__repr__(key))
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


def _float(value: float) -> str:
    if value != value:
        return "NaN"
    if value == float("inf"):
        return "Infinity"
    if value == float("-inf"):
        return "-Infinity"
    return float.__repr__(value)
