"""Reference pages generated from the package at build time.

Four pages are written into `reference/generated/` when the builder starts, from the code that
defines each thing, so the documentation cannot drift from it:

- `configuration.md`: every configurable trait of the classes in `hashline_config_classes`
  (name, type, default, help), as `jupyter hashline --help-all` shows them, plus the keys a
  workspace overlay file may set;
- `rest.md`: every route of the REST API with its query, body and response schemas, from the
  OpenAPI document the server package builds out of its JSON Schema;
- `tools.md`: the tool catalog an agent sees (names, titles, hints, descriptions, inputs);
- `cli.md`: the `jupyter-hashline` command's help, command by command.

Invariants:
- Pure functions from Python values to Markdown text; the only I/O is writing the four files,
  and a file is rewritten only when its text changed (so incremental builds stay incremental).
- Every value shown is read from the package; nothing here restates a default or a route.
"""

from __future__ import annotations

import argparse
import importlib
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx

GENERATED = Path("reference") / "generated"


# -- configuration -------------------------------------------------------------------------------


def _import(dotted: str) -> Any:
    module, _, name = dotted.rpartition(".")
    return getattr(importlib.import_module(module), name)


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return " ".join(text.split()).replace("|", "\\|")


def config_page(class_names: Sequence[str], overlay_keys: Iterable[str]) -> str:
    lines = [
        "# Configuration reference",
        "",
        "Generated from the code. Set these in a Jupyter config file "
        "(`jupyter_server_config.py`: `c.HashlineExtension.read_only = True`) or on the command "
        "line (`jupyter lab --HashlineExtension.read_only=True`); the command line wins over "
        "config files, which win over the defaults. `jupyter hashline --help-all` (or "
        "`jupyter-hashline config`) lists them in a terminal; `jupyter server --help-all` "
        "cannot, since it prints its help before any extension is loaded.",
        "",
    ]
    for dotted in class_names:
        cls = _import(dotted)
        lines += [f"## {cls.__name__}", "", _cell(cls.__doc__ or "").strip(), ""]
        for name, trait in sorted(cls.class_own_traits(config=True).items()):
            lines += _trait_entry(cls.__name__, name, trait)
    keys = ", ".join(f"`{key}`" for key in sorted(overlay_keys))
    lines += [
        "## Workspace overlay",
        "",
        "A JSON file at the server root (its name is `HashlineExtension.workspace_overlay`) "
        f"may set these keys, and only to tighten them: {keys}. Any other key, and any value "
        "that would loosen a setting, is refused with a warning in the server log.",
        "",
    ]
    return "\n".join(lines)


def _trait_entry(owner: str, name: str, trait: Any) -> list[str]:
    default = trait.default_value_repr()
    return [
        f"### `{owner}.{name}`",
        "",
        f"{type(trait).__name__}, default `{default}`",
        "",
        " ".join(str(trait.help or "(no help)").split()),
        "",
    ]


# -- REST ----------------------------------------------------------------------------------------


def _type_of(schema: Mapping[str, Any]) -> str:
    if "$ref" in schema:
        name = str(schema["$ref"]).rsplit("/", 1)[-1]
        return f"[{name}](#{name.lower()})"
    for key in ("oneOf", "anyOf"):
        if key in schema:
            return " or ".join(_type_of(option) for option in schema[key])
    if "enum" in schema:
        return " \\| ".join(f"`{json.dumps(value)}`" for value in schema["enum"])
    if "const" in schema:
        return f"`{json.dumps(schema['const'])}`"
    kind = schema.get("type", "any")
    if kind == "array":
        return f"array of {_type_of(schema.get('items', {}))}"
    if "pattern" in schema:
        return f"{kind} (`{schema['pattern']}`)"
    return str(kind)


def schema_table(schema: Mapping[str, Any]) -> list[str]:
    properties = schema.get("properties") or {}
    if not properties:
        return [f"Type: {_type_of(schema)}", ""]
    required = set(schema.get("required", ()))
    rows = ["| field | type | required | description |", "|---|---|---|---|"]
    for name, prop in properties.items():
        mark = "yes" if name in required else ""
        rows.append(
            f"| `{name}` | {_cell(_type_of(prop))} | {mark} | "
            f"{_cell(str(prop.get('description', '')))} |"
        )
    return [*rows, ""]


def rest_page(document: Mapping[str, Any]) -> str:
    info = document.get("info", {})
    lines = [
        "# REST API reference",
        "",
        "Generated from the JSON Schema the server validates against. "
        + " ".join(str(info.get("description", "")).split()),
        "",
        "Authenticate with the Jupyter server's token (`Authorization: token <token>`; see "
        "[where the token comes from](../../quickstart/agents.md#where-the-token-comes-from)) or "
        "a login cookie; a browser's POST also sends the XSRF cookie/header pair. Every route "
        "takes an optional `X-Hashline-Agent` header naming the agent. A read then a patch with "
        "curl: [over REST, with curl](../../quickstart/agents.md#over-rest-with-curl).",
        "",
        "## Routes",
        "",
    ]
    for route, methods in document.get("paths", {}).items():
        for method, operation in methods.items():
            lines += _operation(route, method, operation)
    lines += ["## Schemas", ""]
    for name, schema in document.get("components", {}).get("schemas", {}).items():
        description = _cell(str(schema.get("description", "")))
        lines += [f"### {name}", "", description, "", *schema_table(schema)]
    return "\n".join(lines)


def _operation(route: str, method: str, operation: Mapping[str, Any]) -> list[str]:
    lines = [f"### `{method.upper()} {route}`", "", str(operation.get("summary", "")), ""]
    params = operation.get("parameters") or []
    if params:
        lines += ["| parameter | in | type | required | description |", "|---|---|---|---|---|"]
        for param in params:
            lines.append(
                f"| `{param['name']}` | {param.get('in', 'query')} | "
                f"{_cell(_type_of(param.get('schema', {})))} | "
                f"{'yes' if param.get('required') else ''} | "
                f"{_cell(_param_description(param))} |"
            )
        lines.append("")
    body = operation.get("requestBody", {}).get("content", {}).get("application/json")
    if body:
        lines += [f"Body: {_type_of(body.get('schema', {}))}", ""]
    for status, response in operation.get("responses", {}).items():
        content = response.get("content", {}).get("application/json", {})
        shape = _type_of(content["schema"]) if "schema" in content else "no body"
        lines.append(f"- `{status}`: {_cell(str(response.get('description', '')))} ({shape})")
    return [*lines, ""]


def _param_description(param: Mapping[str, Any]) -> str:
    return str(param.get("description") or param.get("schema", {}).get("description", ""))


# -- tools ---------------------------------------------------------------------------------------


def tools_page(specs: Sequence[Mapping[str, Any]]) -> str:
    lines = [
        "# Tool catalog",
        "",
        "Generated from the catalog every surface serves (MCP, the REST API, the CLI, agent "
        "sessions, Jupyter AI). The description is what a model reads; it is complete on its "
        "own, because some hosts drop the descriptions of single inputs.",
        "",
    ]
    for spec in specs:
        title = spec.get("title") or spec["name"]
        lines += [f"## `{spec['name']}`: {title}", ""]
        hints = [key for key, value in (spec.get("annotations") or {}).items() if value is True]
        if hints:
            lines += ["Hints: " + ", ".join(f"`{hint}`" for hint in hints), ""]
        lines += ["```text", str(spec["description"]), "```", ""]
        schema = spec.get("input_schema") or spec.get("inputSchema") or {}
        lines += ["Inputs:", "", *schema_table(schema)]
    return "\n".join(lines)


# -- CLI -----------------------------------------------------------------------------------------


def cli_page(parser: argparse.ArgumentParser) -> str:
    lines = ["# Command line", "", "Generated from the command's own help.", ""]
    lines += ["```text", parser.format_help().rstrip(), "```", ""]
    for action in parser._actions:  # argparse keeps subcommands here and nowhere public
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                lines += [f"## `{parser.prog} {name}`", "", "```text"]
                lines += [sub.format_help().rstrip(), "```", ""]
    return "\n".join(lines)


# -- Sphinx --------------------------------------------------------------------------------------


def _write(path: Path, text: str) -> None:
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def generate(app: Sphinx) -> None:
    out = Path(app.srcdir) / GENERATED
    out.mkdir(parents=True, exist_ok=True)
    config = app.config
    overlay_keys = _import(config.hashline_overlay_keys)
    _write(out / "configuration.md", config_page(config.hashline_config_classes, overlay_keys))
    _write(out / "rest.md", rest_page(_import(config.hashline_openapi)()))
    specs = _import(config.hashline_tool_specs)
    _write(out / "tools.md", tools_page(specs() if callable(specs) else specs))
    _write(out / "cli.md", cli_page(_import(config.hashline_cli_parser)()))


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_config_value("hashline_config_classes", [], "env")
    app.add_config_value("hashline_overlay_keys", "", "env")
    app.add_config_value("hashline_openapi", "", "env")
    app.add_config_value("hashline_tool_specs", "", "env")
    app.add_config_value("hashline_cli_parser", "", "env")
    app.connect("builder-inited", generate)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
