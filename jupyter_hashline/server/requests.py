"""Parse REST request inputs (query arguments, JSON bodies) into typed requests.

Pure: no tornado, no I/O. Every malformed input is a `BadRequestError` whose message says
which field is wrong and what to send instead (bodies nested deeper than `MAX_JSON_DEPTH`
included, so nothing recurses near the interpreter's limit later); `TooLargeError` for
oversized bodies.
The shapes mirror `rest_schema.json`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..hashline.errors import TooLargeError
from .errors import BadRequestError

QueryArgs = Mapping[str, list[bytes]]
MAX_JSON_DEPTH = 64
"""Deepest nesting of arrays/objects a request body may have: every hashline request fits
in a few levels, and a bound keeps parsing and re-serializing (session snapshots are served
back) far from the interpreter's recursion limit."""


@dataclass(frozen=True, slots=True)
class ReadRequest:
    path: str
    offset: int | None = None
    limit: int | None = None
    cells: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class PatchRequest:
    patch: str | Mapping[str, Any] | list[Any]


@dataclass(frozen=True, slots=True)
class WriteRequest:
    path: str
    content: str


@dataclass(frozen=True, slots=True)
class OutputsRequest:
    path: str
    cell: str
    max_chars: int | None = None


@dataclass(frozen=True, slots=True)
class SessionPost:
    session_id: str | None
    label: str | None
    snapshot: Any


def _one(args: QueryArgs, name: str) -> str | None:
    values = args.get(name)
    if not values:
        return None
    try:
        return values[-1].decode("utf-8")
    except UnicodeDecodeError:
        raise BadRequestError(f"Query argument {name!r} is not UTF-8.") from None


def _required(args: QueryArgs, name: str, example: str) -> str:
    value = _one(args, name)
    if value is None or value == "":
        raise BadRequestError(f"Query argument {name!r} is required, e.g. ?{name}={example}.")
    return value


def _positive_int(args: QueryArgs, name: str) -> int | None:
    value = _one(args, name)
    if value is None or value == "":
        return None
    if not (value.isascii() and value.isdigit()) or int(value) < 1:  # not "³" or "٣"
        raise BadRequestError(
            f"Query argument {name!r} must be a whole number >= 1, not {value!r}."
        )
    return int(value)


def parse_read_query(args: QueryArgs) -> ReadRequest:
    cells = _one(args, "cells")
    cell_ids = tuple(c.strip() for c in cells.split(",") if c.strip()) if cells else None
    return ReadRequest(
        path=_required(args, "path", "analysis.ipynb"),
        offset=_positive_int(args, "offset"),
        limit=_positive_int(args, "limit"),
        cells=cell_ids or None,
    )


def parse_outputs_query(args: QueryArgs) -> OutputsRequest:
    return OutputsRequest(
        path=_required(args, "path", "analysis.ipynb"),
        cell=_required(args, "cell", "load-data"),
        max_chars=_positive_int(args, "max_chars"),
    )


def parse_limit_query(args: QueryArgs) -> int | None:
    return _positive_int(args, "limit")


def json_object(body: bytes, max_bytes: int) -> dict[str, Any]:
    """The request body as a JSON object, refusing bodies over `max_bytes`."""
    if len(body) > max_bytes:
        raise TooLargeError(
            f"The request body is {len(body)} bytes; this server accepts at most {max_bytes}. "
            "Split the edit into smaller patches."
        )
    try:
        value = json.loads(body or b"null")
    except RecursionError:  # nested past the interpreter's own limit
        raise _too_deep() from None
    except (ValueError, UnicodeDecodeError) as err:
        raise BadRequestError(f"The request body is not valid JSON: {err}.") from None
    if not isinstance(value, dict):
        raise BadRequestError("The request body must be a JSON object.")
    _check_depth(value, MAX_JSON_DEPTH)
    return value


def _too_deep() -> BadRequestError:
    return BadRequestError(
        f"The request body is nested more than {MAX_JSON_DEPTH} levels deep; no hashline "
        "request needs that. Send a flatter JSON body."
    )


def _check_depth(value: object, limit: int) -> None:
    """Refuse JSON nested deeper than `limit` arrays/objects (iteratively: no recursion)."""
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if not isinstance(item, (dict, list)):
            continue
        if depth >= limit:
            raise _too_deep()
        children = item.values() if isinstance(item, dict) else item
        stack.extend((child, depth + 1) for child in children)


def _string_field(body: Mapping[str, Any], name: str) -> str:
    value = body.get(name)
    if not isinstance(value, str):
        raise BadRequestError(f"Field {name!r} must be a string.")
    return value


def parse_patch_body(body: Mapping[str, Any]) -> PatchRequest:
    """`{"patch": text}` or `{"edits": JSON form}`; the engine checks the patch's size."""
    has_text, has_edits = "patch" in body, "edits" in body
    if has_text == has_edits:
        raise BadRequestError(
            'Send exactly one of {"patch": "<edit text>"} or {"edits": <JSON form>}.'
        )
    if has_text:
        return PatchRequest(_string_field(body, "patch"))
    edits = body["edits"]
    if not isinstance(edits, (dict, list)):
        raise BadRequestError('"edits" must be a JSON object {path, tag, edits} or a list of them.')
    return PatchRequest(edits)


def parse_write_body(body: Mapping[str, Any]) -> WriteRequest:
    return WriteRequest(_string_field(body, "path"), _string_field(body, "content"))


def parse_session_body(body: Mapping[str, Any]) -> SessionPost:
    if "snapshot" not in body:
        raise BadRequestError('Send {"id"?, "label"?, "snapshot": <Session.snapshot()>}.')
    session_id = _string_field(body, "id") if body.get("id") is not None else None
    label = _string_field(body, "label") if body.get("label") is not None else None
    return SessionPost(session_id, label, body["snapshot"])
