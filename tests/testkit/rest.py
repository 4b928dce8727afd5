"""Helpers for the REST tests: the REST schema, a named test user, notebooks on disk."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from importlib.resources import files
from pathlib import Path
from typing import Any

import nbformat
from jsonschema import Draft202012Validator
from jupyter_server.auth.identity import IdentityProvider, User
from tornado.httpclient import HTTPResponse
from tornado.web import RequestHandler

REST_SCHEMA = json.loads(
    files("jupyter_hashline.server").joinpath("rest_schema.json").read_text("utf-8")
)
Fetch = Callable[..., Awaitable[HTTPResponse]]
Api = Callable[..., Awaitable[tuple[int, dict[str, Any]]]]


def validator(definition: str) -> Draft202012Validator:
    schema = {"$defs": REST_SCHEMA["$defs"], "$ref": f"#/$defs/{definition}"}
    return Draft202012Validator(schema)


def check_schema(definition: str, instance: object) -> None:
    """Raise (with every problem listed) unless `instance` matches the named definition."""
    errors = [e.message for e in validator(definition).iter_errors(instance)]
    assert not errors, f"{definition}: {errors}"


class NamedUserProvider(IdentityProvider):
    """Token requests authenticate as one named person, so activity can be attributed."""

    def generate_anonymous_user(self, handler: RequestHandler) -> User:
        return User(username="ada", name="Ada Lovelace")


def write_notebook(path: Path, *sources: str, outputs: bool = False) -> nbformat.NotebookNode:
    """A v4.5 notebook with code cells `cell-0`, `cell-1`, ... holding `sources`."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.cells = [nbformat.v4.new_code_cell(src, id=f"cell-{i}") for i, src in enumerate(sources)]
    if outputs:
        nb.cells[0].outputs = [nbformat.v4.new_output("stream", name="stdout", text="hello\n")]
        nb.cells[0].execution_count = 1
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return nb


async def read_view(api: Api, path: str) -> dict[str, Any]:
    """`GET read?path=...`, checked against the schema and expected to succeed."""
    status, body = await api("read", params={"path": path}, schema="ReadResponse")
    assert status == 200, body
    return body
