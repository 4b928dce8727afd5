"""The JSON layout a notebook file was written in, and writing JSON in that layout.

Tools write notebooks differently: nbformat (and so Jupyter) with one space of indent and sorted
keys, Colab with two spaces and its own key order, others with four spaces, sources as one
string, CRLF line ends, everything on one line, or no final newline. `FileStyle` names those
choices; `detect_style` guesses them from a file's bytes with a few searches (never a parse);
`StyledJson` writes JSON in a style.

Invariants:
- For a notebook nbformat stored, `StyledJson(NBFORMAT).cell(cell)` is `cell_json(cell)`: nbformat's
  layout is one style among others (serialize.py keeps its own faster path for it).
- A guess is only a guess: a style is trusted for a file only once writing the file's notebook
  in it gives the file's bytes back exactly (keep.py checks that).
- Written JSON parses to the value written (disk forms aside: sources and text values split
  into lines or joined, `trusted` and transient notebook metadata dropped, as nbformat does).
- Dicts are written in the order they hold their keys (a parsed file's own order), so a cell
  an edit changed keeps its key order even where the file is not sorted. Only what can be new
  is ordered: a cell whose keys come in an order the file never used (a new cell) is sorted,
  or put in the order of the file's cells (`key_order`, unknown keys last) where the file is
  not sorted; in a sorted file, outputs (a kernel's come in any order) and the top level
  (written only when an edit changed it) are sorted.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from .serialize import stored_cell

_NB_TRANSIENT = frozenset({"orig_nbformat", "orig_nbformat_minor", "signature"})
_SPLIT_MIMES = frozenset({"application/javascript", "image/svg+xml"})
_KEY_SAMPLE = 64  # cells whose key orders are remembered as the file's own


@dataclass(frozen=True, slots=True)
class FileStyle:
    """How a notebook file lays out its JSON. `indent` None: everything on one line."""

    indent: int | None = 1
    sort_keys: bool = True
    split_sources: bool = True
    split_outputs: bool = True
    newline: str = "\n"
    final_newline: bool = True
    ensure_ascii: bool = False
    item_separator: str = ","
    key_separator: str = ": "
    key_order: tuple[str, ...] = ()
    known_orders: frozenset[tuple[str, ...]] = frozenset()

    def shape(self) -> FileStyle:
        """The style without its memory of the file's key orders (to compare two styles)."""
        return replace(self, key_order=(), known_orders=frozenset())

    def describe(self) -> str:
        """The style in a few words, for notes ("indent 2, keys unsorted, CRLF")."""
        words = ["minified" if self.indent is None else f"indent {self.indent}"]
        words.append("keys sorted" if self.sort_keys else "keys in the file's order")
        words.append("sources as lines" if self.split_sources else "sources as strings")
        if self.newline != "\n":
            words.append("CRLF")
        if not self.final_newline:
            words.append("no final newline")
        if self.ensure_ascii:
            words.append("non-ASCII escaped")
        return ", ".join(words)


NBFORMAT = FileStyle()
"""nbformat's layout: what `nbformat.writes(nb) + "\\n"` gives."""


def is_nbformat(style: FileStyle) -> bool:
    """Whether `style` writes exactly what nbformat writes (key order memory aside)."""
    return style.shape() == NBFORMAT


_FIRST_KEY = re.compile(rb'\{\s*"(?:[^"\\]|\\.)*"(\s*):(\s*)')
_SOURCE = re.compile(rb'"source"\s*:\s*([\["])')
# the first multi-line value nbformat splits into lines (stream text, a bundle's text/*, SVG or
# JavaScript, in outputs or attachments): a list when the file's tool split them too
_SPLIT_VALUE = re.compile(
    rb'"(?:text|text/[\w.+-]+|image/svg\+xml|application/javascript)"\s*:\s*([\["])'
)
_ESCAPED_NON_ASCII = re.compile(rb"\\u(?:00[89a-fA-F]|0[1-9a-fA-F]|[1-9a-fA-F])")


def detect_style(raw: bytes, nb: Mapping[str, Any]) -> FileStyle | str:
    """The style `raw` (the bytes `nb` was loaded from) looks written in, or why none fits."""
    if not raw.startswith(b"{"):
        return "it does not start with `{` (leading space or a byte order mark)"
    first = _FIRST_KEY.match(raw)
    if first is None:
        return "its first key could not be found"
    newline_at = raw.find(b"\n")
    final = raw.endswith(b"\n")
    crlf = newline_at > 0 and raw[newline_at - 1 : newline_at] == b"\r"
    newline = "\r\n" if crlf else "\n"
    style = FileStyle(
        final_newline=final,
        newline=newline,
        ensure_ascii=raw.isascii() and _ESCAPED_NON_ASCII.search(raw) is not None,
        split_sources=_first_is_list(_SOURCE, raw, True),
        sort_keys=_looks_sorted(nb),
        key_order=_key_order(nb),
        known_orders=frozenset(tuple(c) for c in _cells(nb)[:_KEY_SAMPLE]),
    )
    style = replace(style, split_outputs=_first_is_list(_SPLIT_VALUE, raw, style.split_sources))
    if newline_at == -1 or newline_at >= len(raw) - len(newline):
        spaced = bool(first.group(2))  # json.dumps's default separators, or compact ones
        return replace(
            style,
            indent=None,
            key_separator=": " if spaced else ":",
            item_separator=", " if spaced else ",",
        )
    if raw[: newline_at + 1] not in (b"{\n", b"{\r\n"):
        return "its first line is not `{`"
    line = raw[newline_at + 1 : newline_at + 64]
    indent = len(line) - len(line.lstrip(b" "))
    if line[indent : indent + 1] != b'"':
        return "it is indented with something other than spaces"
    items = ", " if (", " + newline).encode() in raw else ","
    key_sep = ":" + first.group(2).decode().replace("\n", "").replace("\r", "")
    return replace(style, indent=indent, item_separator=items, key_separator=key_sep)


def _first_is_list(pattern: re.Pattern[bytes], raw: bytes, default: bool) -> bool:
    found = pattern.search(raw)
    return default if found is None else found.group(1) == b"["


def _cells(nb: Mapping[str, Any]) -> list[Any]:
    cells = nb.get("cells")
    return [c for c in cells if isinstance(c, Mapping)] if isinstance(cells, list) else []


def _looks_sorted(nb: Mapping[str, Any]) -> bool:
    """Whether the top level, its metadata and the first cells list their keys sorted."""
    metadata = nb.get("metadata")
    mappings = [nb, *(metadata,) * isinstance(metadata, Mapping), *_cells(nb)[:_KEY_SAMPLE]]
    return all(list(m) == sorted(m) for m in mappings)


def _key_order(nb: Mapping[str, Any]) -> tuple[str, ...]:
    """The cell keys in the order the file's cells first list them."""
    order: dict[str, None] = {}
    for cell in _cells(nb)[:_KEY_SAMPLE]:
        order.update(dict.fromkeys(cell))
    return tuple(order)


class StyledJson:
    """Writes notebooks, cells and any JSON value in one `FileStyle`."""

    def __init__(self, style: FileStyle, *, as_held: bool = False) -> None:
        """`as_held`: order nothing, not even new cells and outputs (to compare with a file:
        a file's own order is the order its parsed dicts hold)."""
        self.style = style
        self.as_held = as_held
        self.encode: Callable[[str], str] = (
            json.encoder.encode_basestring_ascii
            if style.ensure_ascii
            else json.encoder.encode_basestring
        )
        self.step = None if style.indent is None else " " * style.indent
        self.cell_newline = None if self.step is None else style.newline + self.step * 2

    @property
    def separator(self) -> str:
        """What stands between two cells of the `cells` list."""
        return self.style.item_separator + (self.cell_newline or "")

    def cell(self, cell: Any) -> str:
        """A cell's JSON as it sits in the file's `cells` list (indented for its depth)."""
        out: list[str] = []
        disk = self.disk_cell(cell) if isinstance(cell, Mapping) else cell
        self.emit(disk, self.cell_newline, out)
        return "".join(out)

    def frame(self, nb: Mapping[str, Any]) -> tuple[str, str, str]:
        """(head, separator, tail): a notebook with cells is `head + separator.join(cells) +
        tail`. Its top level is written as `notebook` writes it."""
        top = {**self.disk_top(nb), "cells": _PLACEHOLDER}
        text = self._top_text(top)
        marker = self.encode(_PLACEHOLDER)
        at = text.index(marker)
        if self.cell_newline is None:
            open_, separator, close = "[", self.style.item_separator, "]"
        else:
            list_newline = self.style.newline + (self.step or "")
            open_ = "[" + self.cell_newline
            separator = self.style.item_separator + self.cell_newline
            close = list_newline + "]"
        return text[:at] + open_, separator, close + text[at + len(marker) :]

    def notebook(self, nb: Mapping[str, Any]) -> str:
        """The whole file's text for `nb`."""
        cells = nb.get("cells")
        if not isinstance(cells, list) or not cells:
            return self._top_text(self.disk_top(nb))
        head, separator, tail = self.frame(nb)
        return head + separator.join(map(self.cell, cells)) + tail

    def _top_text(self, top: Mapping[str, Any]) -> str:
        out: list[str] = []
        self.emit(top, None if self.step is None else self.style.newline, out)
        out.append(self.style.newline if self.style.final_newline else "")
        return "".join(out)

    def disk_top(self, nb: Mapping[str, Any]) -> dict[str, Any]:
        """Everything but the cells as this style stores it: transient metadata dropped and,
        in a sorted style, keys sorted (an edit's new metadata comes in any order)."""
        disk = dict(nb)
        metadata = nb.get("metadata")
        if isinstance(metadata, Mapping) and not _NB_TRANSIENT.isdisjoint(metadata):
            disk["metadata"] = {k: v for k, v in metadata.items() if k not in _NB_TRANSIENT}
        if self.style.sort_keys and not self.as_held:
            return {k: disk[k] if k == "cells" else _sorted_json(disk[k]) for k in sorted(disk)}
        return disk

    def disk_cell(self, cell: Mapping[str, Any]) -> dict[str, Any]:
        """The cell as this style stores it (a shallow copy)."""
        style = self.style
        disk = _stored_cell(cell, style.split_outputs)
        source = cell.get("source")
        if isinstance(source, str):
            disk["source"] = source.splitlines(True) if style.split_sources else source
        if self.as_held:
            return disk
        if style.sort_keys and isinstance(disk.get("outputs"), list):
            disk["outputs"] = _sorted_json(disk["outputs"])
        if tuple(disk) not in style.known_orders:
            rank = {key: n for n, key in enumerate(style.key_order)}
            ranked = (
                sorted(disk)
                if style.sort_keys
                else sorted(disk, key=lambda k: rank.get(k, len(rank)))
            )
            disk = {key: disk[key] for key in ranked}
        return disk

    def emit(self, obj: Any, newline: str | None, out: list[str]) -> None:
        """Append the JSON of `obj` to `out`; `newline` is the line break and indent of the
        line `obj` sits on (None: no line breaks at all)."""
        if isinstance(obj, str):
            out.append(self.encode(obj))
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
            self._list(obj, newline, out)
        elif isinstance(obj, Mapping):
            self._dict(obj, newline, out)
        elif isinstance(obj, bytes):
            out.append(self.encode(obj.decode("ascii")))
        else:
            raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")

    def _inner(self, newline: str | None) -> tuple[str | None, str]:
        """The newline of the items inside a container on `newline`, and what joins them."""
        if newline is None or self.step is None:
            return None, self.style.item_separator
        inner = newline + self.step
        return inner, self.style.item_separator + inner

    def _list(self, items: Sequence[Any], newline: str | None, out: list[str]) -> None:
        if not items:
            out.append("[]")
            return
        inner, separator = self._inner(newline)
        out.append("[" + (inner or ""))
        try:  # lists of lines are the bulk of a notebook: encode them in one C-level pass
            out.append(separator.join(map(self.encode, items)))
        except TypeError:
            for index, item in enumerate(items):
                if index:
                    out.append(separator)
                self.emit(item, inner, out)
        out.append((newline or "") + "]")

    def _dict(self, mapping: Mapping[Any, Any], newline: str | None, out: list[str]) -> None:
        if not mapping:
            out.append("{}")
            return
        inner, separator = self._inner(newline)
        out.append("{" + (inner or ""))
        for index, (key, value) in enumerate(mapping.items()):
            if index:
                out.append(separator)
            out.append(self.encode(str(key)) + self.style.key_separator)
            self.emit(value, inner, out)
        out.append((newline or "") + "}")


_PLACEHOLDER = "\x00cells\x00"


def _sorted_json(value: Any) -> Any:
    """`value` with the keys of every dict in it sorted (lists of text are not copied)."""
    if isinstance(value, Mapping):
        return {key: _sorted_json(value[key]) for key in sorted(value)}
    if isinstance(value, list) and any(isinstance(item, (Mapping, list)) for item in value):
        return [_sorted_json(item) for item in value]
    return value


def _float(value: float) -> str:
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    return float.__repr__(value)


def _stored_cell(cell: Mapping[str, Any], split: bool) -> dict[str, Any]:
    """The cell's outputs and attachments as a file in this style stores them: values stored
    as lists stay as they are; text values held as strings (a kernel's new outputs) are split
    into lines where nbformat splits them when `split`, else kept. No `trusted` metadata."""
    return stored_cell(cell, _split_bundle, _split_output) if split else stored_cell(cell)


def _split_output(output: Any) -> Any:
    if not isinstance(output, Mapping):
        return output
    if output.get("output_type") in ("execute_result", "display_data"):
        data = output.get("data")
        return {**output, "data": _split_bundle(data)} if isinstance(data, Mapping) else output
    text = output.get("text")
    if isinstance(text, str) and output.get("output_type") == "stream":
        return {**output, "text": text.splitlines(True)}
    return output


def _split_bundle(bundle: Any) -> Any:
    if not isinstance(bundle, Mapping):
        return bundle
    return {
        mime: value.splitlines(True)
        if isinstance(value, str) and (mime.startswith("text/") or mime in _SPLIT_MIMES)
        else value
        for mime, value in bundle.items()
    }
