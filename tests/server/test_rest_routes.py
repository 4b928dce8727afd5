"""Every hashline route through a real Jupyter server (pytest-jupyter), success and errors,
each body validated against rest_schema.json."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import nbformat
import pytest
from testkit.rest import REST_SCHEMA, Api, write_notebook


def rows(view: str) -> list[str]:
    """The numbered rows of a read view (the header and annotations left out)."""
    return [r for r in view.split("\n")[1:] if r.split(":", 1)[0].isdigit()]


async def test_read_text_file(api: Api, jp_root_dir: Path) -> None:
    (jp_root_dir / "demo.py").write_text("import pandas as pd\nprint(1)\n")
    status, body = await api("read", params={"path": "/demo.py"}, schema="ReadResponse")
    assert status == 200
    assert body["header"] == f"[demo.py#{body['tag']}]"
    assert body["view"].startswith(body["header"] + "\n")
    assert rows(body["view"]) == ["1:import pandas as pd", "2:print(1)"]


async def test_read_notebook_partial_and_by_cell(api: Api, jp_root_dir: Path) -> None:
    write_notebook(jp_root_dir / "nb.ipynb", "a = 1", "b = 2\nc = 3", outputs=False)
    _, whole = await api("read", params={"path": "nb.ipynb"}, schema="ReadResponse")
    assert rows(whole["view"]) == [
        "1:# %% [code] id=cell-0",
        "2:a = 1",
        "3:# %% [code] id=cell-1",
        "4:b = 2",
        "5:c = 3",
    ]
    _, part = await api("read", params={"path": "nb.ipynb", "offset": "2", "limit": "2"})
    assert rows(part["view"]) == ["2:a = 1", "3:# %% [code] id=cell-1"]
    assert part["tag"] == whole["tag"]
    _, cell = await api("read", params={"path": "nb.ipynb", "cells": "cell-1"})
    assert rows(cell["view"]) == ["3:# %% [code] id=cell-1", "4:b = 2", "5:c = 3"]


@pytest.mark.parametrize(
    ("params", "status", "kind"),
    [
        ({}, 400, "bad_arguments"),
        ({"path": "missing.py"}, 404, "not_found"),
        ({"path": "../outside.py"}, 403, "path_outside_root"),
        ({"path": "%2e%2e/outside.py"}, 403, "path_outside_root"),
        ({"path": ".hidden.py"}, 403, "hidden_path"),
        ({"path": "demo.py", "offset": "x"}, 400, "bad_arguments"),
        ({"path": "nb.ipynb", "cells": "nope"}, 400, "bad_anchor"),
        ({"path": "demo.py", "cells": "cell-1"}, 400, "bad_anchor"),  # a text file has no cells
        ({"path": "binary.bin"}, 415, "not_text"),
    ],
)
async def test_read_errors(
    api: Api, jp_root_dir: Path, params: dict[str, str], status: int, kind: str
) -> None:
    (jp_root_dir / "demo.py").write_text("x = 1\n")
    (jp_root_dir / ".hidden.py").write_text("secret = 1\n")
    (jp_root_dir / "binary.bin").write_bytes(b"\x89PNG\xff\xfe")
    write_notebook(jp_root_dir / "nb.ipynb", "x = 1")
    got, body = await api("read", params=params)
    assert (got, body["error"]) == (status, kind)
    assert body["message"]


async def test_patch_text_form_then_chain_with_the_new_header(api: Api, jp_root_dir: Path) -> None:
    (jp_root_dir / "demo.py").write_text("a = 1\nb = 2\n")
    _, read = await api("read", params={"path": "demo.py"})
    patch = f"{read['header']}\nreplace 2:\n+b = 20\ninsert after 2:\n+c = 3\n"
    status, body = await api("patch", method="POST", body={"patch": patch}, schema="PatchResponse")
    assert status == 200
    [section] = body["sections"]
    assert section["op"] == "update" and section["path"] == "demo.py"
    assert (jp_root_dir / "demo.py").read_text() == "a = 1\nb = 20\nc = 3\n"
    assert section["header"] in body["text"] and "3:c = 3" in body["text"]
    again = f"{section['header']}\nreplace 3:\n+c = 30\n"
    status, _ = await api("patch", method="POST", body={"patch": again})
    assert status == 200
    assert (jp_root_dir / "demo.py").read_text() == "a = 1\nb = 20\nc = 30\n"


async def test_patch_json_form_on_a_notebook_keeps_outputs(api: Api, jp_root_dir: Path) -> None:
    write_notebook(jp_root_dir / "nb.ipynb", "print('hello')", "x = 1", outputs=True)
    _, read = await api("read", params={"path": "nb.ipynb"})
    edits = {
        "path": "nb.ipynb",
        "tag": read["tag"],
        "edits": [{"op": "replace", "start": 4, "end": 4, "lines": ["x = 2"]}],
    }
    status, body = await api("patch", method="POST", body={"edits": edits}, schema="PatchResponse")
    assert status == 200, body
    nb = nbformat.read(jp_root_dir / "nb.ipynb", as_version=4)
    nbformat.validate(nb)
    assert [c.source for c in nb.cells] == ["print('hello')", "x = 2"]
    assert nb.cells[0].outputs[0]["text"] == "hello\n"


@pytest.mark.parametrize(
    ("payload", "status", "kind"),
    [
        ({"patch": "[demo.py#0000]\nreplace 1:\n+z = 0\n"}, 409, None),
        ({"patch": "[demo.py#TAG]\nfrobnicate 1:\n+z\n"}, 400, None),
        ({"patch": "x", "edits": {}}, 400, "bad_arguments"),
        ({}, 400, "bad_arguments"),
        ({"edits": "replace 1"}, 400, "bad_arguments"),
        ({"patch": 7}, 400, "bad_arguments"),
        ({"patch": "[missing.py#1234]\nreplace 1:\n+z\n"}, 404, "not_found"),
        ({"patch": "[../up.py#1234]\nreplace 1:\n+z\n"}, 403, "path_outside_root"),
    ],
)
async def test_patch_errors_leave_the_file_untouched(
    api: Api, jp_root_dir: Path, payload: dict[str, Any], status: int, kind: str | None
) -> None:
    (jp_root_dir / "demo.py").write_text("a = 1\n")
    got, body = await api("patch", method="POST", body=payload)
    assert (got, kind or body["error"]) == (status, body["error"])
    assert (jp_root_dir / "demo.py").read_text() == "a = 1\n"


async def test_stale_edit_is_rejected_with_the_current_header(api: Api, jp_root_dir: Path) -> None:
    (jp_root_dir / "demo.py").write_text("a = 1\nb = 2\n")
    _, read = await api("read", params={"path": "demo.py"})
    (jp_root_dir / "demo.py").write_text("a = 1\nb = 99\n")
    status, body = await api(
        "patch", method="POST", body={"patch": f"{read['header']}\nreplace 2:\n+b = 3\n"}
    )
    assert status == 409 and body["error"] == "stale_tag"
    assert "demo.py#" in body["message"]
    assert (jp_root_dir / "demo.py").read_text() == "a = 1\nb = 99\n"


async def test_malformed_json_body(api: Api) -> None:
    status, body = await api("patch", method="POST", raw_body=b"{not json")
    assert status == 400 and body["error"] == "bad_request"
    status, body = await api("write", method="POST", raw_body=b"[1, 2]")
    assert status == 400 and "JSON object" in body["message"]


async def test_write_creates_and_overwrites(api: Api, jp_root_dir: Path) -> None:
    status, body = await api(
        "write",
        method="POST",
        body={"path": "new.md", "content": "# Title\n"},
        schema="WriteResponse",
    )
    assert status == 200 and body["sections"][0]["op"] == "create"
    assert (jp_root_dir / "new.md").read_text() == "# Title\n"
    created = body["sections"][0]
    status, body = await api(
        "write", method="POST", body={"path": "new.md", "content": "# Other\n"}
    )
    assert (status, body["error"]) == (409, "tag_required")
    assert f"Current header: {created['header']}" in body["message"]
    assert (jp_root_dir / "new.md").read_text() == "# Title\n"
    status, body = await api(
        "write",
        method="POST",
        body={"path": "new.md", "content": "# Other\n", "tag": created["tag"]},
        schema="WriteResponse",
    )
    assert status == 200 and body["sections"][0]["op"] == "update"
    assert (jp_root_dir / "new.md").read_text() == "# Other\n"
    status, body = await api(
        "write", method="POST", body={"path": "new.md", "content": "# Third\n", "overwrite": True}
    )
    assert status == 200 and (jp_root_dir / "new.md").read_text() == "# Third\n"


async def test_a_write_under_a_stale_tag_is_refused_with_the_current_header(
    api: Api, jp_root_dir: Path
) -> None:
    write_notebook(jp_root_dir / "nb.ipynb", "a = 1", outputs=False)
    _, read = await api("read", params={"path": "nb.ipynb"}, schema="ReadResponse")
    write_notebook(jp_root_dir / "nb.ipynb", "a = 1", "b = 2  # a person's cell", outputs=False)
    before = (jp_root_dir / "nb.ipynb").read_bytes()
    content = "# %% [code]\nreplaced = True\n"
    status, body = await api(
        "write", method="POST", body={"path": "nb.ipynb", "content": content, "tag": read["tag"]}
    )
    assert (status, body["error"]) == (409, "stale_tag")
    _, now = await api("read", params={"path": "nb.ipynb"}, schema="ReadResponse")
    assert f"Current header: {now['header']}" in body["message"]
    assert (jp_root_dir / "nb.ipynb").read_bytes() == before
    status, body = await api(
        "write", method="POST", body={"path": "nb.ipynb", "content": content, "overwrite": 1}
    )
    assert (status, body["error"]) == (400, "bad_arguments")
    assert "`overwrite` must be true or false" in body["message"]


async def test_write_errors(api: Api, jp_root_dir: Path) -> None:
    locked = jp_root_dir / "locked.py"
    locked.write_text("keep = 1\n")
    locked.chmod(0o444)
    status, body = await api(
        "write", method="POST", body={"path": "locked.py", "content": "x\n", "overwrite": True}
    )
    assert (status, body["error"]) == (403, "permission_denied")
    assert locked.read_text() == "keep = 1\n"
    status, body = await api("write", method="POST", body={"path": "n.txt", "content": "a\x00"})
    assert (status, body["error"]) == (415, "not_text")
    status, body = await api("write", method="POST", body={"path": "n.txt"})
    assert (status, body["error"]) == (400, "bad_arguments")
    assert "`content` is required" in body["message"]
    status, body = await api("write", method="POST", body={"path": ".env", "content": "K=1\n"})
    assert (status, body["error"]) == (403, "hidden_path")
    assert not (jp_root_dir / "n.txt").exists() and not (jp_root_dir / ".env").exists()


async def test_patch_to_a_non_writable_notebook_is_refused(api: Api, jp_root_dir: Path) -> None:
    path = jp_root_dir / "ro.ipynb"
    write_notebook(path, "x = 1")
    before = path.read_bytes()
    path.chmod(0o444)
    _, read = await api("read", params={"path": "ro.ipynb"})
    status, body = await api(
        "patch", method="POST", body={"patch": f"{read['header']}\nreplace 2:\n+x = 2\n"}
    )
    assert (status, body["error"]) == (403, "permission_denied")
    assert path.read_bytes() == before


async def test_outputs(api: Api, jp_root_dir: Path) -> None:
    write_notebook(jp_root_dir / "nb.ipynb", "print('hello')", "y = 1", outputs=True)
    (jp_root_dir / "plain.py").write_text("x = 1\n")
    params = {"path": "nb.ipynb", "cell": "cell-0"}
    status, body = await api("outputs", params=params, schema="OutputsResponse")
    assert status == 200 and "hello" in body["text"] and body["cell"] == "cell-0"
    _, clipped = await api("outputs", params={**params, "max_chars": "2"})
    assert "clipped" in clipped["text"]
    for bad, code in [
        ({"path": "nb.ipynb", "cell": "nope"}, 400),
        ({"path": "nb.ipynb"}, 400),
        ({"path": "plain.py", "cell": "cell-0"}, 400),
        ({"path": "gone.ipynb", "cell": "cell-0"}, 404),
    ]:
        status, body = await api("outputs", params=bad)
        assert status == code, (bad, body)


async def test_snapshots_list_tags_and_seen_lines(api: Api, jp_root_dir: Path) -> None:
    (jp_root_dir / "demo.py").write_text("".join(f"line {n}\n" for n in range(1, 11)))
    _, read = await api("read", params={"path": "demo.py", "offset": "3", "limit": "4"})
    status, body = await api("snapshots", schema="SnapshotsResponse")
    assert status == 200
    [entry] = [p for p in body["paths"] if p["path"] == "demo.py"]
    assert entry["head"] == read["tag"]
    assert entry["versions"][0]["seen_lines"] == [[3, 6]]
    assert entry["versions"][0]["lines"] == 10


async def test_activity_records_who_what_and_which_cells(api: Api, jp_root_dir: Path) -> None:
    write_notebook(jp_root_dir / "nb.ipynb", "a = 1", "b = 2")
    _, read = await api("read", params={"path": "nb.ipynb"})
    await api("patch", method="POST", body={"patch": f"{read['header']}\nreplace 4:\n+b = 3\n"})
    await api("write", method="POST", body={"path": "notes.txt", "content": "n\n"})
    status, body = await api("activity", schema="ActivityResponse")
    assert status == 200
    newest, older = body["edits"][:2]
    assert (newest["path"], newest["source"], newest["op"]) == ("notes.txt", "write", "create")
    assert older["cells"] == ["cell-1"] and older["header_before"] == read["header"]
    assert "-b = 2" in older["diff"] and "+b = 3" in older["diff"]
    assert older["who"] == newest["who"] == "ada"  # the identity provider's username
    _, one = await api("activity", params={"limit": "1"})
    assert [e["id"] for e in one["edits"]] == [newest["id"]]


def session_snapshot(turns: int) -> dict[str, Any]:
    return {
        "zones": {"prefix": {"short_id": "0123456789ab"}, "log": {}, "scratch": {}},
        "cache": {"hit_ratio": 0.75, "turns": [{"n": i} for i in range(turns)]},
        "audit": [],
        "edits": [],
    }


async def test_sessions_register_update_list_and_get(api: Api) -> None:
    status, created = await api(
        "sessions",
        method="POST",
        body={"label": "demo agent", "snapshot": session_snapshot(1)},
        schema="SessionPostResponse",
    )
    assert status == 200 and created["created"] is True
    sid = created["id"]
    _, updated = await api(
        "sessions", method="POST", body={"id": sid, "snapshot": session_snapshot(3)}
    )
    assert updated["created"] is False and updated["updates"] == 2 and updated["turns"] == 3
    _, listing = await api("sessions", schema="SessionsResponse")
    assert [s["id"] for s in listing["sessions"]] == [sid]
    assert listing["sessions"][0]["label"] == "demo agent"
    status, one = await api(f"sessions/{sid}", schema="SessionResponse")
    assert status == 200 and len(one["snapshot"]["cache"]["turns"]) == 3
    assert one["prefix_short_id"] == "0123456789ab" and one["hit_ratio"] == 0.75


async def test_session_errors(api: Api) -> None:
    status, body = await api("sessions/unknown-id")
    assert (status, body["error"]) == (404, "session_not_found")
    status, body = await api("sessions", method="POST", body={"snapshot": {"zones": {}}})
    assert (status, body["error"]) == (400, "bad_request") and "lacks" in body["message"]
    status, body = await api(
        "sessions", method="POST", body={"id": "bad id!", "snapshot": session_snapshot(0)}
    )
    assert status == 400


@pytest.mark.parametrize(
    "hashline_config", [{"max_request_bytes": 2048, "max_patch_bytes": 512}], indirect=True
)
async def test_size_limits_answer_413(api: Api, jp_root_dir: Path) -> None:
    (jp_root_dir / "demo.py").write_text("a = 1\n")
    status, body = await api("write", method="POST", body={"path": "big.py", "content": "x" * 4096})
    assert (status, body["error"]) == (413, "too_large")
    _, read = await api("read", params={"path": "demo.py"})
    rows_ = "".join(f"+row {n}\n" for n in range(100))
    status, body = await api(
        "patch", method="POST", body={"patch": f"{read['header']}\ninsert tail:\n{rows_}"}
    )
    assert (status, body["error"]) == (413, "too_large")
    assert not (jp_root_dir / "big.py").exists()
    assert (jp_root_dir / "demo.py").read_text() == "a = 1\n"


@pytest.mark.parametrize("hashline_config", [{"max_file_bytes": 100}], indirect=True)
async def test_file_limit(api: Api, jp_root_dir: Path) -> None:
    (jp_root_dir / "big.py").write_text("x" * 200)
    status, body = await api("read", params={"path": "big.py"})
    assert (status, body["error"]) == (413, "too_large")


async def test_unknown_methods_are_json_errors(api: Api) -> None:
    status, body = await api("read", method="POST", body={})
    assert status == 405 and body["error"] == "method_not_allowed"


async def test_symlink_out_of_root_is_refused(api: Api, jp_root_dir: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "s.py").write_text("secret = 1\n")
    os.symlink(outside, jp_root_dir / "link")
    status, body = await api("read", params={"path": "link/s.py"})
    assert (status, body["error"]) == (403, "path_outside_root")
    status, _ = await api("write", method="POST", body={"path": "link/s.py", "content": "x\n"})
    assert status == 403
    assert (outside / "s.py").read_text() == "secret = 1\n"


def test_schema_has_a_definition_per_request_and_response() -> None:
    names = set(REST_SCHEMA["$defs"])
    for route in ("Read", "Patch", "Write", "Outputs"):
        assert {f"{route}Response"} <= names
    assert {"ReadQuery", "PatchRequest", "WriteRequest", "OutputsQuery", "ActivityQuery"} <= names
    assert {"SnapshotsResponse", "ActivityResponse", "SessionsResponse", "SessionResponse"} <= names
    assert {"SessionPostRequest", "SessionPostResponse", "ErrorResponse"} <= names
    json.dumps(REST_SCHEMA)
