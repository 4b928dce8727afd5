"""The REST API as an OpenAPI 3.1 document, built from the package's JSON Schema.

`rest_schema.json` describes every request and response body (JSON Schema 2020-12, which
OpenAPI 3.1 uses as is); this module adds what OpenAPI needs besides: the routes, their
methods, query parameters, bodies, responses and the token security scheme. Tools that speak
OpenAPI (client generators, API explorers, schemathesis for fuzzing) can use it directly:

    python -c "import json; from jupyter_hashline.server.openapi import openapi_document; \
print(json.dumps(openapi_document()))"

Invariants:
- Pure: reads the packaged schema, no server, no I/O beyond that. Every `$ref` points into
  `#/components/schemas`, which holds the schema's `$defs` unchanged but for the refs.
- `OPERATIONS` names exactly the routes of `handlers.ROUTES` (a test checks it), each with the
  schema definitions of its query, body and success response; the tool routes come from the
  tool catalog, like their handlers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..tools import CATALOG, ToolSpec
from .rest_schema import rest_schema

__all__ = ["OPERATIONS", "Operation", "openapi_document", "rest_schema"]

_DEFS = "#/$defs/"
_COMPONENTS = "#/components/schemas/"


@dataclass(frozen=True, slots=True)
class Operation:
    """One route and method, named by the schema definitions it uses."""

    route: str  # as in handlers.ROUTES (a regex for routes with a path parameter)
    method: str
    summary: str
    response: str
    query: str | None = None
    body: str | None = None


def _tool_operation(spec: ToolSpec) -> Operation:
    rest = spec.rest
    where = {"query": rest.request_def} if rest.http_method == "GET" else {"body": rest.request_def}
    return Operation(rest.route, rest.http_method.lower(), rest.summary, rest.response_def, **where)


OPERATIONS: tuple[Operation, ...] = (
    *(_tool_operation(spec) for spec in CATALOG),
    Operation("revert", "post", "Undo recorded edits, safely", "RevertResponse",
              body="RevertRequest"),
    Operation("snapshots", "get", "Tracked paths and their versions", "SnapshotsResponse"),
    Operation("activity", "get", "Recent edits, newest first", "ActivityResponse",
              query="ActivityQuery"),
    Operation("sessions", "get", "Registered agent sessions", "SessionsResponse"),
    Operation("sessions", "post", "Register or update an agent session", "SessionPostResponse",
              body="SessionPostRequest"),
    Operation(r"sessions/(?P<session_id>[^/]+)", "get", "One agent session", "SessionResponse"),
    Operation("proposals", "get", "Proposed edits waiting for review (and decided ones)",
              "ProposalsResponse", query="ProposalsQuery"),
    Operation(r"proposals/(?P<proposal_id>[^/]+)/accept", "post",
              "Accept a proposal (or some of its cells): it lands, safely",
              "ProposalDecisionResponse", body="ProposalDecisionRequest"),
    Operation(r"proposals/(?P<proposal_id>[^/]+)/reject", "post",
              "Reject a proposal (or some of its cells): nothing of it is written",
              "ProposalDecisionResponse", body="ProposalDecisionRequest"),
    Operation("proposals/accept-all", "post", "Accept every pending proposal of a file",
              "ProposalsDecisionResponse", body="ProposalsDecisionRequest"),
    Operation("proposals/reject-all", "post", "Reject every pending proposal of a file",
              "ProposalsDecisionResponse", body="ProposalsDecisionRequest"),
    Operation("review", "get", "Review mode, for everyone and per agent", "ReviewModeResponse"),
    Operation("review", "post", "Turn review mode on or off", "ReviewModeResponse",
              body="ReviewModeRequest"),
)  # fmt: skip

_PATH_PARAMETERS = {
    "session_id": {
        "name": "session_id",
        "in": "path",
        "required": True,
        "schema": {"type": "string", "pattern": "^[A-Za-z0-9._-]{1,64}$"},
        "description": "The id the session was registered with (POST sessions).",
    },
    "proposal_id": {
        "name": "proposal_id",
        "in": "path",
        "required": True,
        "schema": {"type": "integer", "minimum": 1},
        "description": "The proposal's id (its agent's reply, GET proposals).",
    },
}
_ROUTE_PARAMETER = re.compile(r"\(\?P<(?P<name>[a-z_]+)>[^)]*\)")


def _rewrite_refs(node: Any) -> Any:
    if isinstance(node, dict):
        return {
            key: (value.replace(_DEFS, _COMPONENTS) if key == "$ref" else _rewrite_refs(value))
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [_rewrite_refs(item) for item in node]
    return node


def _openapi_path(route: str, prefix: str) -> str:
    return prefix + _ROUTE_PARAMETER.sub(lambda found: "{" + found["name"] + "}", route)


def _query_parameters(schemas: dict[str, Any], name: str) -> list[dict[str, Any]]:
    query = schemas[name]
    required = set(query.get("required", ()))
    return [
        {"name": key, "in": "query", "required": key in required, "schema": schema}
        for key, schema in query["properties"].items()
    ]


def _json(ref: str) -> dict[str, Any]:
    return {"application/json": {"schema": {"$ref": _COMPONENTS + ref}}}


def _operation(op: Operation, schemas: dict[str, Any]) -> dict[str, Any]:
    parameters = _query_parameters(schemas, op.query) if op.query else []
    named = [found["name"] for found in _ROUTE_PARAMETER.finditer(op.route)]
    parameters += [_PATH_PARAMETERS[name] for name in named]
    name = _ROUTE_PARAMETER.sub("one", op.route).replace("/", "_").replace("-", "_")
    name = "session" if name == "sessions_one" else name
    spec: dict[str, Any] = {
        "operationId": f"{op.method}_{name}",
        "summary": op.summary,
        "parameters": parameters,
        "responses": {
            "200": {"description": "Success", "content": _json(op.response)},
            "default": {
                "description": "An error: the engine's kind (or the HTTP status's) and the "
                "text for the agent.",
                "content": _json("ErrorResponse"),
            },
        },
    }
    if op.body:
        spec["requestBody"] = {"required": True, "content": _json(op.body)}
    return spec


def openapi_document(base_url: str = "/", server_url: str | None = None) -> dict[str, Any]:
    """The OpenAPI 3.1 document for a server whose `base_url` is `base_url`."""
    schema = rest_schema()
    schemas = _rewrite_refs(schema["$defs"])
    prefix = base_url.rstrip("/") + "/hashline/"
    paths: dict[str, dict[str, Any]] = {}
    for op in OPERATIONS:
        paths.setdefault(_openapi_path(op.route, prefix), {})[op.method] = _operation(op, schemas)
    document: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {"title": schema["title"], "version": "1", "description": schema["description"]},
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": {
                "token": {
                    "type": "apiKey",
                    "in": "header",
                    "name": "Authorization",
                    "description": "`token <the server's token>`",
                }
            },
        },
        "security": [{"token": []}],
    }
    if server_url is not None:
        document["servers"] = [{"url": server_url}]
    return document
