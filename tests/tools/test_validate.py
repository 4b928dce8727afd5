"""One validator for every surface: raw arguments to typed requests, errors naming the field."""

from __future__ import annotations

from typing import Any

import pytest

from jupyter_hashline.tools import (
    BadArgumentsError,
    EditRequest,
    OutputsRequest,
    ReadRequest,
    Source,
    spec_for,
    tool_request,
)


def request(name: str, arguments: dict[str, Any], source: Source = Source.JSON) -> Any:
    spec = spec_for(name)
    assert spec is not None
    return tool_request(spec, arguments, agent="ann", source=source)


def test_json_arguments_become_typed_requests() -> None:
    read = request("notebook_read", {"path": "a.ipynb", "offset": 2, "limit": 5.0, "cells": "x, y"})
    assert read == ReadRequest(agent="ann", path="a.ipynb", offset=2, limit=5, cells=("x", "y"))
    edit = request("notebook_edit", {"edits": '{"path": "a", "tag": "1234", "edits": []}'})
    assert edit == EditRequest(agent="ann", edits={"path": "a", "tag": "1234", "edits": []})
    assert edit.arguments() == {"edits": {"path": "a", "tag": "1234", "edits": []}}
    outputs = request("notebook_outputs", {"path": "a.ipynb", "cell": "c", "max_chars": None})
    assert outputs == OutputsRequest(agent="ann", path="a.ipynb", cell="c")


def test_query_text_is_converted_by_kind() -> None:
    read = request(
        "notebook_read", {"path": "a", "offset": "3", "cells": "a,b", "limit": ""}, Source.QUERY
    )
    assert (read.offset, read.limit, read.cells) == (3, None, ("a", "b"))


@pytest.mark.parametrize(
    ("name", "arguments", "source", "message"),
    [
        ("notebook_read", {"path": 7}, Source.JSON, "`path` must be a non-empty string"),
        ("notebook_read", {"path": ""}, Source.JSON, "`path` must not be empty"),
        ("notebook_read", {}, Source.JSON, "`path` is required"),
        ("notebook_read", {"path": "a", "offset": "2"}, Source.JSON, "`offset` must be a whole"),
        ("notebook_read", {"path": "a", "offset": True}, Source.JSON, "`offset` must be a whole"),
        ("notebook_read", {"path": "a", "limit": 2.5}, Source.JSON, "`limit` must be a whole"),
        ("notebook_read", {"path": "a", "offset": "x"}, Source.QUERY, "`offset` must be a whole"),
        ("notebook_read", {"path": "a", "offset": "٣"}, Source.QUERY, "`offset` must be a whole"),
        ("notebook_read", {"path": "a", "cells": [1]}, Source.JSON, "`cells` must be a list of"),
        ("notebook_read", {"path": "a", "ofset": 2}, Source.JSON, "unknown argument(s) ofset"),
        ("notebook_outputs", {"path": "a", "cell": "c", "max_chars": 0}, Source.JSON,
         "`max_chars` must be a whole number >= 1 (or leave it out), not 0"),
        ("notebook_outputs", {"path": "a", "cell": "c", "max_chars": "0"}, Source.QUERY,
         "`max_chars` must be a whole number >= 1"),
        ("notebook_edit", {}, Source.JSON, "exactly one of `patch` or `edits` (neither"),
        ("notebook_edit", {"patch": "x", "edits": {}}, Source.JSON, "(both was given)"),
        ("notebook_edit", {"edits": "replace 1"}, Source.JSON, "`edits` is a string but not JSON"),
        ("notebook_edit", {"edits": 3}, Source.JSON, "`edits` must be the JSON form"),
        ("notebook_write", {"path": "a"}, Source.JSON, "`content` is required"),
    ],
)  # fmt: skip
def test_every_mistake_names_the_field_and_what_to_send(
    name: str, arguments: dict[str, Any], source: Source, message: str
) -> None:
    with pytest.raises(BadArgumentsError) as raised:
        request(name, arguments, source)
    text = raised.value.message
    assert message in text and text.startswith(f"Bad arguments for {name}: ")
    assert "not supported between" not in text and "Nothing was changed" in text
    assert raised.value.kind == "bad_arguments" and raised.value.status == 400


@pytest.mark.parametrize("path", ["a\nb.py", "tab\there.ipynb", "nul\x00.py", "bad\udb0f.py"])
@pytest.mark.parametrize("tool", ["notebook_read", "notebook_write", "notebook_outputs"])
def test_paths_with_control_characters_or_lone_surrogates_are_refused(tool: str, path: str) -> None:
    """A line break in a path would split the `[path#TAG]` header of every reply (a REST fuzz
    created such a file through notebook_write)."""
    arguments = {"path": path, "content": "x\n", "cell": "c"}
    spec = spec_for(tool)
    assert spec is not None
    wanted = {f.name: arguments[f.name] for f in spec.fields if f.required}
    with pytest.raises(BadArgumentsError, match=r"`path` contains .* control characters"):
        request(tool, wanted)
    assert request("notebook_read", {"path": "ünïcode ok/€.py"}).path == "ünïcode ok/€.py"


def test_write_flags_are_booleans_in_json_and_true_or_false_in_a_query() -> None:
    write = request("notebook_write", {"path": "a", "content": "", "overwrite": True})
    assert write.overwrite is True and write.tag is None
    query = request(
        "notebook_write", {"path": "a", "content": "", "overwrite": "false"}, Source.QUERY
    )
    assert query.overwrite is False
    with pytest.raises(BadArgumentsError, match="`overwrite` must be true or false"):
        request("notebook_write", {"path": "a", "content": "", "overwrite": "yes"})
