"""The sidebar's TypeScript types come from the REST JSON Schema the server tests validate
against: regenerating them must give the checked-in file, byte for byte."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]
GENERATOR = REPO / "labextension" / "scripts" / "generate_rest_types.py"
SCHEMA = REPO / "jupyter_hashline" / "server" / "rest_schema.json"
CHECKED_IN = REPO / "labextension" / "src" / "rest-types.ts"


@pytest.fixture(scope="module")
def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("generate_rest_types", GENERATOR)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_checked_in_types_match_the_schema(generator: ModuleType) -> None:
    regenerated = generator.generate(json.loads(SCHEMA.read_text(encoding="utf-8")))
    assert regenerated == CHECKED_IN.read_text(encoding="utf-8"), (
        "labextension/src/rest-types.ts is stale: "
        "run python labextension/scripts/generate_rest_types.py"
    )


def test_every_schema_definition_is_exported() -> None:
    defs = json.loads(SCHEMA.read_text(encoding="utf-8"))["$defs"]
    exported = re.findall(r"^export (?:interface|type) (\w+)", CHECKED_IN.read_text(), re.M)
    assert exported == list(defs)


def test_check_mode_reports_a_stale_file(generator: ModuleType, tmp_path: Path) -> None:
    stale = tmp_path / "rest-types.ts"
    stale.write_text("// old\n")
    assert generator.main(["--check"], stale) == 1
    assert generator.main([], stale) == 0
    assert generator.main(["--check"], stale) == 0
    assert stale.read_text() == CHECKED_IN.read_text()


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"type": ["integer", "null"]}, "number | null"),
        ({"enum": ["a", "b"]}, '"a" | "b"'),
        ({"type": "array", "items": {"type": "string"}}, "string[]"),
        (
            {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2},
            "[number, number]",
        ),
        ({"oneOf": [{"$ref": "#/$defs/Tag"}, {"type": "null"}]}, "Tag | null"),
        ({"type": "object"}, "{ [key: string]: unknown }"),
        (
            {
                "type": "object",
                "required": ["a"],
                "properties": {"a": {"type": "string"}},
                "additionalProperties": False,
            },
            "{\n  a: string;\n}",
        ),
        (
            {"type": "object", "properties": {"a": {"type": "boolean"}}},
            "{\n  a?: boolean;\n  [key: string]: unknown;\n}",
        ),
    ],
)
def test_translations(generator: ModuleType, schema: dict[str, object], expected: str) -> None:
    assert generator.ts_type(schema, "test") == expected


def test_unknown_keywords_are_refused_not_dropped(generator: ModuleType) -> None:
    with pytest.raises(generator.UnsupportedSchema, match="patternProperties"):
        generator.ts_type({"type": "object", "patternProperties": {}}, "$defs.X")
    with pytest.raises(generator.UnsupportedSchema, match="local"):
        generator.ts_type({"$ref": "other.json#/X"}, "$defs.Y")
