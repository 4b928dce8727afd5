"""One validator from raw tool arguments (MCP JSON, a REST query or body, the CLI) to requests.

`tool_request(spec, arguments, agent=..., source=...)` checks the arguments against the
catalog entry's fields and builds the entry's request type. JSON sources (MCP, REST bodies,
the CLI, `Session`) must send JSON types; query strings send strings, converted here by the
field's kind.

Invariants:
- Every problem is a `BadArgumentsError` that names the tool, the field and the expected type
  (and says what to do); no Python error text (`'<' not supported between ...`) ever leaks.
- Unknown fields are refused (a misspelt `ofset` must not silently read the whole file).
- `max_chars=0` (any positive-integer field at 0) is refused the same way on every surface:
  the field means "at most this many", 0 would show nothing; omit it for the default.
- Lenient only where models and clients commonly differ and nothing is ambiguous: `cells` as a
  comma-separated string, and `edits` sent as a JSON string of the JSON form.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from enum import Enum
from typing import Any

from ..kernels.runner import MAX_TIMEOUT_S
from ..notebook import LAYOUTS
from .catalog import QUERY_FLAGS, Field, FieldKind, ToolSpec
from .errors import BadArgumentsError

__all__ = ["Source", "tool_request"]

_UNUSABLE_IN_PATH = re.compile("[\x00-\x1f\x7f\ud800-\udfff]")
_TAG = re.compile(r"#?[0-9A-Fa-f]{4}")
_WHOLE = re.compile(r"[0-9]+")
_DECIMAL = re.compile(r"[0-9]*\.?[0-9]+")


class Source(Enum):
    """Where the raw arguments come from: typed JSON, or query-string text."""

    JSON = "json"
    QUERY = "query"


def tool_request(
    spec: ToolSpec, arguments: Mapping[str, Any], *, agent: str, source: Source = Source.JSON
) -> Any:
    """The request of `spec.request` type for `arguments`, or `BadArgumentsError`."""
    if not isinstance(arguments, Mapping):
        raise _bad(spec, f"the arguments must be an object, not {_type_name(arguments)}")
    unknown = sorted(str(name) for name in arguments if spec.field(str(name)) is None)
    if unknown:
        allowed = ", ".join(f.name for f in spec.fields)
        raise _bad(spec, f"unknown argument(s) {', '.join(unknown)}; its arguments are {allowed}")
    values: dict[str, Any] = {}
    for field in spec.fields:
        raw = arguments.get(field.name)
        if raw is None or (source is Source.QUERY and raw == "" and not field.required):
            if field.required:
                raise _bad(spec, f"`{field.name}` is required ({_expected(field)})")
            continue
        values[field.name] = _convert(spec, field, raw, source)
    _check_exactly_one(spec, values)
    return spec.request(agent=agent, **values)


def _check_exactly_one(spec: ToolSpec, values: Mapping[str, Any]) -> None:
    if not spec.exactly_one_of:
        return
    given = [name for name in spec.exactly_one_of if name in values]
    if len(given) != 1:
        names = " or ".join(f"`{name}`" for name in spec.exactly_one_of)
        got = "both" if given else "neither"
        raise _bad(spec, f"send exactly one of {names} ({got} was given)")


def _convert(spec: ToolSpec, field: Field, raw: Any, source: Source) -> Any:
    if source is Source.QUERY:
        if not isinstance(raw, str):
            raise _bad(spec, f"`{field.name}` must be {_expected(field)}")
        return _QUERY[field.kind](spec, field, raw)
    return _JSON[field.kind](spec, field, raw)


# -- converters, one per kind and source ---------------------------------------------------------


def _string(spec: ToolSpec, field: Field, raw: Any) -> str:
    if not isinstance(raw, str):
        raise _wrong(spec, field, raw)
    if field.kind in (FieldKind.PATH, FieldKind.NAME) and not raw.strip():
        raise _bad(spec, f"`{field.name}` must not be empty ({_expected(field)})")
    unusable = _UNUSABLE_IN_PATH.search(raw) if field.kind is FieldKind.PATH else None
    if unusable is not None:
        # A line break in a path would break the `[path#TAG]` header every reply starts with.
        raise _bad(
            spec,
            f"`{field.name}` contains {unusable.group()!a} at position {unusable.start()}:"
            " paths may not hold control characters (line breaks, tabs, NUL) or unpaired "
            "surrogates",
        )
    return raw


def _tag(spec: ToolSpec, field: Field, raw: Any) -> str:
    if not isinstance(raw, str) or not _TAG.fullmatch(raw.strip()):
        raise _wrong(spec, field, raw)
    return raw.strip().lstrip("#").upper()


def _positive_int(spec: ToolSpec, field: Field, raw: Any) -> int:
    number = raw
    if isinstance(raw, float) and raw.is_integer():
        number = int(raw)
    if isinstance(number, bool) or not isinstance(number, int) or number < 1:
        raise _wrong(spec, field, raw)
    return number


def _positive_int_text(spec: ToolSpec, field: Field, raw: str) -> int:
    if not _WHOLE.fullmatch(raw) or int(raw) < 1:  # ASCII digits only: not "³" or "٣"
        raise _wrong(spec, field, raw)
    return int(raw)


def _positive_number(spec: ToolSpec, field: Field, raw: Any) -> float:
    ok = isinstance(raw, (int, float)) and not isinstance(raw, bool)
    if not ok or not math.isfinite(raw) or raw <= 0:
        raise _wrong(spec, field, raw)
    return float(raw)


def _positive_number_text(spec: ToolSpec, field: Field, raw: str) -> float:
    if not _DECIMAL.fullmatch(raw) or float(raw) <= 0:
        raise _wrong(spec, field, raw)
    return float(raw)


def _seconds(spec: ToolSpec, field: Field, raw: Any) -> float:
    ok = isinstance(raw, (int, float)) and not isinstance(raw, bool)
    if not ok or not math.isfinite(raw) or not 1 <= raw <= MAX_TIMEOUT_S:
        raise _wrong(spec, field, raw)
    return float(raw)


def _seconds_text(spec: ToolSpec, field: Field, raw: str) -> float:
    if not _DECIMAL.fullmatch(raw):
        raise _wrong(spec, field, raw)
    return _seconds(spec, field, float(raw))


def _names(spec: ToolSpec, field: Field, raw: Any) -> tuple[str, ...]:
    items = raw.split(",") if isinstance(raw, str) else raw
    if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
        raise _wrong(spec, field, raw)
    return tuple(item.strip() for item in items if item.strip())


def _json_edits(spec: ToolSpec, field: Field, raw: Any) -> Any:
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except (ValueError, RecursionError):
            raise _bad(
                spec, f"`{field.name}` is a string but not JSON; {_expected(field)}"
            ) from None
    if not isinstance(raw, (dict, list)):
        raise _wrong(spec, field, raw)
    return raw


def _layout(spec: ToolSpec, field: Field, raw: Any) -> str:
    if raw not in LAYOUTS:
        raise _wrong(spec, field, raw)
    return str(raw)


def _flag(spec: ToolSpec, field: Field, raw: Any) -> bool:
    if not isinstance(raw, bool):
        raise _wrong(spec, field, raw)
    return raw


def _flag_text(spec: ToolSpec, field: Field, raw: str) -> bool:
    """A query boolean as clients send them: `true`/`false` (JSON's words, also capitalised
    as Python's `requests` sends a `bool`) or `1`/`0` (Jupyter's own, e.g. `content=1`)."""
    value = QUERY_FLAGS.get(raw)
    if value is None:
        raise _wrong(spec, field, raw)
    return value


def _unsupported(spec: ToolSpec, field: Field, raw: Any) -> Any:
    raise _bad(spec, f"`{field.name}` cannot be sent in a query string; send a JSON body")


Converter = Callable[[ToolSpec, Field, Any], Any]

_JSON: dict[FieldKind, Converter] = {
    FieldKind.PATH: _string,
    FieldKind.TEXT: _string,
    FieldKind.NAME: _string,
    FieldKind.TAG: _tag,
    FieldKind.POSITIVE_INT: _positive_int,
    FieldKind.POSITIVE_NUMBER: _positive_number,
    FieldKind.SECONDS: _seconds,
    FieldKind.NAMES: _names,
    FieldKind.JSON_EDITS: _json_edits,
    FieldKind.LAYOUT: _layout,
    FieldKind.FLAG: _flag,
}
_QUERY: dict[FieldKind, Converter] = {
    **_JSON,
    FieldKind.POSITIVE_INT: _positive_int_text,
    FieldKind.POSITIVE_NUMBER: _positive_number_text,
    FieldKind.SECONDS: _seconds_text,
    FieldKind.JSON_EDITS: _unsupported,
    FieldKind.FLAG: _flag_text,
}

_EXPECTED = {
    FieldKind.PATH: "a non-empty string: a path relative to the root",
    FieldKind.TEXT: "a string",
    FieldKind.NAME: "a non-empty string",
    FieldKind.TAG: "the 4 hex digits of your read header, e.g. 9C2E",
    FieldKind.POSITIVE_INT: "a whole number >= 1",
    FieldKind.POSITIVE_NUMBER: "a number > 0",
    FieldKind.SECONDS: f"a number of seconds from 1 to {MAX_TIMEOUT_S:g}",
    FieldKind.NAMES: "a list of strings (ids)",
    FieldKind.JSON_EDITS: "the JSON form: an object {path, tag, edits} or a list of them",
    FieldKind.LAYOUT: "keep or nbformat",
    FieldKind.FLAG: "true or false (in a query string also 1 or 0)",
}


def _expected(field: Field) -> str:
    return _EXPECTED[field.kind]


def _type_name(value: Any) -> str:
    names = {str: "a string", bool: "a boolean", int: "an integer", float: "a number"}
    names.update({list: "a list", dict: "an object", type(None): "null"})
    return names.get(type(value), type(value).__name__)


def _wrong(spec: ToolSpec, field: Field, raw: Any) -> BadArgumentsError:
    shown = json.dumps(raw) if isinstance(raw, (str, int, float, bool)) else _type_name(raw)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    optional = "" if field.required else " (or leave it out)"
    return _bad(spec, f"`{field.name}` must be {_expected(field)}{optional}, not {shown}")


def _bad(spec: ToolSpec, problem: str) -> BadArgumentsError:
    return BadArgumentsError(f"Bad arguments for {spec.name}: {problem}. Nothing was changed.")
