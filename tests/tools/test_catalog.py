"""The tool catalog: what MCP `tools/list`, provider prompts and the REST schema are made of.

Every tool has a title and annotations; every property of every schema has a description; no
schema uses a `type` array; the JSON edit form has a full item schema; the REST schema's tool
request parts are the catalog's; a description alone names the tool's arguments.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import jsonschema

from jupyter_hashline.hashline.edits import EditOp
from jupyter_hashline.hashline.parse import patch_schema
from jupyter_hashline.server.rest_schema import generated_schema, main, rest_schema
from jupyter_hashline.tools import CATALOG, TOOL_NAMES, TOOL_SPECS, mcp_definitions


def schemas_in(node: Any, where: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every (sub)schema of `node`, with a path naming it."""
    if isinstance(node, dict):
        yield where, node
        for key, value in node.items():
            if key in ("properties", "$defs"):
                for name, sub in value.items():
                    yield from schemas_in(sub, f"{where}.{name}")
            elif key in ("items", "not"):
                yield from schemas_in(value, f"{where}[]")
            elif key in ("anyOf", "oneOf", "allOf"):
                for i, sub in enumerate(value):
                    yield from schemas_in(sub, f"{where}|{i}")


def test_every_tool_has_a_title_and_annotations() -> None:
    definitions = {d["name"]: d for d in mcp_definitions()}
    assert list(definitions) == list(TOOL_NAMES)
    for tool in definitions.values():
        assert tool["title"] and tool["annotations"]["title"] == tool["title"]
        assert tool["annotations"]["openWorldHint"] is False
    assert definitions["notebook_read"]["annotations"]["readOnlyHint"] is True
    assert definitions["notebook_outputs"]["annotations"]["readOnlyHint"] is True
    assert definitions["notebook_write"]["annotations"]["destructiveHint"] is True
    assert definitions["notebook_write"]["annotations"]["readOnlyHint"] is False
    assert definitions["notebook_edit"]["annotations"]["readOnlyHint"] is False
    run = definitions["notebook_run"]["annotations"]
    assert run["readOnlyHint"] is False and run["destructiveHint"] is True
    assert run["idempotentHint"] is False


def test_the_run_tool_bounds_its_timeout_and_names_its_statuses() -> None:
    run = next(t for t in mcp_definitions() if t["name"] == "notebook_run")
    schema = run["inputSchema"]
    assert schema["required"] == ["path", "tag"]
    assert schema["properties"]["timeout_s"] | {"description": ""} == {
        "type": "number",
        "minimum": 1,
        "maximum": 600,
        "description": "",
    }
    jsonschema.validate({"path": "a.ipynb", "tag": "9C2E", "cells": ["x"]}, schema)
    too_long = {"path": "a.ipynb", "tag": "9C2E", "timeout_s": 601}
    assert list(jsonschema.Draft202012Validator(schema).iter_errors(too_long))
    for status in ("ok", "error", "timeout", "busy", "skipped"):
        assert status in run["description"]


def test_no_property_lacks_a_description_and_no_schema_has_a_type_array() -> None:
    for tool in mcp_definitions():
        schema = tool["inputSchema"]
        assert schema["type"] == "object" and not {"anyOf", "oneOf", "allOf"} & set(schema)
        for where, sub in schemas_in(schema, tool["name"]):
            assert not isinstance(sub.get("type"), list), where
            for name, prop in sub.get("properties", {}).items():
                assert prop.get("description"), f"{where}.{name}"


def test_the_json_edit_form_has_a_full_item_schema() -> None:
    edits = next(t for t in mcp_definitions() if t["name"] == "notebook_edit")
    section, several = edits["inputSchema"]["properties"]["edits"]["anyOf"]
    assert several["items"] == section
    item = section["properties"]["edits"]["items"]
    assert item["properties"]["op"]["enum"] == [op.value for op in EditOp]
    assert set(item["properties"]) == {"op", "start", "end", "line", "lines"}
    example = {
        "path": "a.ipynb",
        "tag": "9C2E",
        "edits": [
            {"op": "replace", "start": 2, "end": 3, "lines": ["x = 1"]},
            {"op": "delete", "start": 7},
            {"op": "insert_after", "line": 4, "lines": ["y"]},
            {"op": "insert_head", "lines": ["# top"]},
        ],
    }
    jsonschema.validate({"edits": example}, edits["inputSchema"])
    jsonschema.validate({"edits": [example, example]}, edits["inputSchema"])
    jsonschema.validate(example, patch_schema())  # the engine's own schema agrees
    bad = {**example, "edits": [{"op": "frobnicate"}]}
    assert list(jsonschema.Draft202012Validator(edits["inputSchema"]).iter_errors({"edits": bad}))


def test_each_description_alone_names_every_argument() -> None:
    for spec in CATALOG:
        for field in spec.fields:
            assert field.name in spec.description, (spec.name, field.name)


def test_tool_specs_are_constant_bytes_in_the_provider_shape() -> None:
    assert [set(spec) for spec in TOOL_SPECS] == [{"name", "description", "input_schema"}] * len(
        CATALOG
    )
    again = [spec.prompt_spec() for spec in CATALOG]
    assert json.dumps(list(TOOL_SPECS)) == json.dumps(again)


def test_the_rest_schema_tool_requests_are_the_catalogs() -> None:
    schema = rest_schema()
    assert generated_schema(schema) == schema, "run python -m jupyter_hashline.server.rest_schema"
    assert main(["--check"]) == 0
    for spec in CATALOG:
        definition = schema["$defs"][spec.rest.request_def]
        assert set(definition["properties"]) == {f.name for f in spec.fields}
    jsonschema.Draft202012Validator.check_schema(schema)
