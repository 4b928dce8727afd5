"""Generate `src/rest-types.ts`, the TypeScript types of the REST API, from its JSON Schema.

The server tests validate every response against `jupyter_hashline/server/rest_schema.json`;
the sidebar's types come from the same file, so the two cannot drift apart silently. A test
(tests/labextension/test_rest_types.py) regenerates the file and requires it to be unchanged.

Invariants:
- Deterministic: definitions in schema order, properties in schema order, no timestamps.
- Only the JSON Schema the REST schema uses is understood: `type` (one or a list), `enum`,
  `$ref` to `#/$defs/...`, `oneOf`/`anyOf` (a union), `allOf` (an intersection), `properties`
  with `required`, `items`, `additionalProperties`. Branches of a combinator that only add
  `required`/`not` constraints (no type of their own) are dropped: TypeScript cannot say
  "exactly one of". Anything else raises, so a schema change cannot be half-translated.

Run: `python labextension/scripts/generate_rest_types.py` (writes the file) or with `--check`
(exit 1 when the checked-in file is stale).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SCHEMA_PATH = HERE.parent.parent / "jupyter_hashline" / "server" / "rest_schema.json"
OUTPUT_PATH = HERE.parent / "src" / "rest-types.ts"

SCALARS = {
    "string": "string",
    "integer": "number",
    "number": "number",
    "boolean": "boolean",
    "null": "null",
}
KNOWN_KEYS = {
    "$schema", "$id", "$ref", "title", "description", "type", "enum", "oneOf", "anyOf",
    "allOf", "not", "properties", "required", "items", "additionalProperties", "pattern",
    "minLength", "minimum", "maximum", "minItems", "maxItems",
}  # fmt: skip
CONSTRAINT_ONLY = {"required", "not", "description"}
INDENT = "  "


class UnsupportedSchema(ValueError):
    """The schema uses a construct this generator does not translate."""


def _check_keys(schema: Mapping[str, Any], where: str) -> None:
    unknown = set(schema) - KNOWN_KEYS
    if unknown:
        raise UnsupportedSchema(
            f"{where}: keys {sorted(unknown)} are not translated; extend generate_rest_types.py"
        )


def _is_constraint_only(schema: Mapping[str, Any]) -> bool:
    return set(schema) <= CONSTRAINT_ONLY


def _comment(text: str | None, indent: str) -> list[str]:
    if not text:
        return []
    safe = text.replace("*/", "*\\/")
    return [f"{indent}/** {safe} */"]


def _ref_name(ref: str) -> str:
    prefix = "#/$defs/"
    if not ref.startswith(prefix):
        raise UnsupportedSchema(f"only local $defs references are translated, not {ref!r}")
    return ref[len(prefix) :]


def _union(parts: list[str]) -> str:
    unique = list(dict.fromkeys(parts))
    return unique[0] if len(unique) == 1 else " | ".join(unique)


def _wrap(ts: str) -> str:
    """Parenthesize a union or intersection used as an array element or intersection part."""
    return f"({ts})" if (" | " in ts or " & " in ts) and not ts.startswith("{") else ts


def ts_type(schema: Mapping[str, Any], where: str, indent: str = "") -> str:
    """The TypeScript type expression of one schema."""
    _check_keys(schema, where)
    if "$ref" in schema:
        return _ref_name(schema["$ref"])
    if "enum" in schema:
        return _union([json.dumps(value) for value in schema["enum"]])
    if "allOf" in schema:
        parts = [
            ts_type(sub, f"{where}.allOf[{i}]", indent) for i, sub in enumerate(schema["allOf"])
        ]
        return " & ".join(_wrap(part) for part in parts)
    combinator = schema.get("oneOf") or schema.get("anyOf")
    typed = [sub for sub in combinator or [] if not _is_constraint_only(sub)]
    if typed:
        return _union([ts_type(sub, f"{where}.oneOf[{i}]", indent) for i, sub in enumerate(typed)])
    kinds = schema.get("type")
    if kinds is None:
        return (
            _object_type(schema, where, indent)
            if "properties" in schema or "required" in schema
            else "unknown"
        )
    names = kinds if isinstance(kinds, list) else [kinds]
    return _union([_one_type(schema, name, where, indent) for name in names])


def _one_type(schema: Mapping[str, Any], name: str, where: str, indent: str) -> str:
    if name in SCALARS:
        return SCALARS[name]
    if name == "array":
        items = schema.get("items")
        size = schema.get("minItems")
        if items is not None and size is not None and size == schema.get("maxItems"):
            element = ts_type(items, f"{where}.items", indent)
            return "[" + ", ".join([element] * size) + "]"
        element = "unknown" if items is None else ts_type(items, f"{where}.items", indent)
        return f"Array<{element}>" if " " in element else f"{element}[]"
    if name == "object":
        return _object_type(schema, where, indent)
    raise UnsupportedSchema(f"{where}: type {name!r} is not translated")


def _object_type(schema: Mapping[str, Any], where: str, indent: str) -> str:
    properties: Mapping[str, Any] = schema.get("properties", {})
    required = list(schema.get("required", []))
    names = list(properties) + [name for name in required if name not in properties]
    closed = schema.get("additionalProperties") is False
    if not names:
        return "Record<string, never>" if closed else "{ [key: string]: unknown }"
    inner = indent + INDENT
    lines = ["{"]
    for name in names:
        sub = properties.get(name, {})
        lines.extend(_comment(sub.get("description"), inner))
        optional = "" if name in required else "?"
        lines.append(f"{inner}{name}{optional}: {ts_type(sub, f'{where}.{name}', inner)};")
    if not closed:
        lines.append(f"{inner}[key: string]: unknown;")
    lines.append(f"{indent}}}")
    return "\n".join(lines)


def _declarations(defs: Mapping[str, Any]) -> Iterator[str]:
    for name, schema in defs.items():
        body = ts_type(schema, f"$defs.{name}")
        doc = _comment(schema.get("description"), "")
        if _is_plain_object(body):
            yield "\n".join([*doc, f"export interface {name} {body}"])
        else:
            yield "\n".join([*doc, f"export type {name} = {body};"])


def _is_plain_object(body: str) -> bool:
    """True when `body` is one object literal (not a union or intersection of them)."""
    if not body.startswith("{"):
        return False
    depth = 0
    for index, char in enumerate(body):
        depth += char == "{"
        depth -= char == "}"
        if depth == 0 and index != len(body) - 1:
            return False
    return True


def generate(schema: Mapping[str, Any]) -> str:
    """The whole TypeScript module for `schema`."""
    header = [
        "// Generated by labextension/scripts/generate_rest_types.py from",
        "// jupyter_hashline/server/rest_schema.json. Do not edit: change the schema and run",
        "// `python labextension/scripts/generate_rest_types.py`.",
        "",
        *_comment(schema.get("description"), ""),
        "",
    ]
    return "\n".join(header) + "\n" + "\n\n".join(_declarations(schema["$defs"])) + "\n"


def write_or_check(output: Path, text: str, argv: list[str], script: str) -> int:
    """Write `text` to `output`, or with `--check` only compare them (1 when stale)."""
    if "--check" in argv:
        current = output.read_text(encoding="utf-8") if output.exists() else ""
        if current != text:
            print(f"{output} is stale: run python {Path(script).name}", file=sys.stderr)
            return 1
        return 0
    output.write_text(text, encoding="utf-8")
    return 0


def main(argv: list[str], output: Path = OUTPUT_PATH) -> int:
    """Write `output`, or with `--check` only compare it (1 when stale)."""
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return write_or_check(output, generate(schema), argv, __file__)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
