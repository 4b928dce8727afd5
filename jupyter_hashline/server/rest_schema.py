"""The REST API's JSON Schema (`rest_schema.json`), whose tool request parts come from the
tool catalog.

The file describes every request and response body (the TypeScript types of the sidebar are
generated from it). The definitions of the tool routes' queries and bodies (`ReadQuery`,
`PatchRequest`, `WriteRequest`, `OutputsQuery`, ...) are written by this module from
`tools.catalog`, so the REST schema and the tool schemas cannot drift:

    python -m jupyter_hashline.server.rest_schema          # rewrite the generated parts
    python -m jupyter_hashline.server.rest_schema --check  # exit 1 when the file is stale

Invariants:
- Pure: reads (and, when asked, writes) the packaged file, nothing else.
- Regenerating keeps every other definition and the order of all of them.
"""

from __future__ import annotations

import json
import sys
from importlib import resources
from pathlib import Path
from typing import Any

from ..tools import rest_request_definitions

__all__ = ["SCHEMA_FILE", "generated_schema", "main", "rest_schema"]

SCHEMA_FILE = Path(__file__).with_name("rest_schema.json")


def rest_schema() -> dict[str, Any]:
    """The packaged JSON Schema of every REST body (rest_schema.json)."""
    source = resources.files("jupyter_hashline.server").joinpath("rest_schema.json")
    schema: dict[str, Any] = json.loads(source.read_text(encoding="utf-8"))
    return schema


def generated_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with the tool request definitions replaced by the catalog's."""
    generated = rest_request_definitions()
    defs = {name: generated.get(name, value) for name, value in schema["$defs"].items()}
    defs.update({name: value for name, value in generated.items() if name not in defs})
    return {**schema, "$defs": defs}


def _text(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    current = SCHEMA_FILE.read_text(encoding="utf-8")
    wanted = _text(generated_schema(json.loads(current)))
    if "--check" in argv:
        if current != wanted:
            print(f"{SCHEMA_FILE} is stale: run python -m {__spec__.name}", file=sys.stderr)
            return 1
        return 0
    SCHEMA_FILE.write_text(wanted, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
