"""`RestWorkspace` and the directory setup: where the default snapshot store lives, and how tool
calls map onto the REST API (requests, the agent header, replies, errors, an unreachable
server, a base folder) without a server."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from jupyter_hashline.tools import (
    RestWorkspace,
    ToolOutcome,
    default_store_path,
    resolve_store_path,
    run_tool,
)


def test_the_default_store_is_the_servers_file_for_that_root(root: Path, data_dir: Path) -> None:
    root_id = hashlib.sha256(os.path.realpath(root).encode()).hexdigest()[:12]
    expected = data_dir / "jupyter_hashline" / f"snapshots-{root_id}.sqlite3"
    assert default_store_path(root) == expected
    link = root.parent / "link"
    link.symlink_to(root)
    assert default_store_path(link) == expected  # the real path decides
    assert default_store_path(root.parent) != expected


def test_an_explicit_store_wins_over_the_environment_and_the_default(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert resolve_store_path(root, None) == str(default_store_path(root))
    monkeypatch.setenv("JUPYTER_HASHLINE_STORE", "/tmp/from-env.sqlite3")
    assert resolve_store_path(root, None) == "/tmp/from-env.sqlite3"
    assert resolve_store_path(root, ":memory:") == ":memory:"


class Backend:
    """A RestWorkspace called with raw arguments, as the surfaces call it."""

    def __init__(self, workspace: RestWorkspace) -> None:
        self.workspace = workspace

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        return await run_tool(self.workspace, name, arguments, agent="agent-7")

    async def aclose(self) -> None:
        await self.workspace.aclose()


def rest_backend(handler: httpx.MockTransport, base_path: str = "") -> Backend:
    return Backend(
        RestWorkspace("http://jupyter.test/base/", "secret", transport=handler, base_path=base_path)
    )


async def test_tool_calls_become_rest_requests_with_the_token() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        replies = {"read": {"view": "[a.ipynb#1234]\n1:x"}, "outputs": {"text": "out"}}
        return httpx.Response(
            200, json=replies.get(request.url.path.rsplit("/", 1)[1], {"text": "done"})
        )

    backend = rest_backend(httpx.MockTransport(handler))
    read = await backend.call(
        "notebook_read", {"path": "a.ipynb", "offset": 2, "limit": 5, "cells": ["a", "b"]}
    )
    edit = await backend.call(
        "notebook_edit", {"edits": '{"path": "a.ipynb", "tag": "1234", "edits": []}'}
    )
    write = await backend.call("notebook_write", {"path": "b.py", "content": "y\n"})
    outputs = await backend.call(
        "notebook_outputs", {"path": "a.ipynb", "cell": "c1", "max_chars": 9}
    )
    await backend.aclose()
    assert [read.text, edit.text, write.text, outputs.text] == [
        "[a.ipynb#1234]\n1:x",
        "done",
        "done",
        "out",
    ]
    assert [(r.method, r.url.path) for r in seen] == [
        ("GET", "/base/hashline/read"),
        ("POST", "/base/hashline/patch"),
        ("POST", "/base/hashline/write"),
        ("GET", "/base/hashline/outputs"),
    ]
    assert all(r.headers["authorization"] == "token secret" for r in seen)
    assert all(r.headers["x-hashline-agent"] == "agent-7" for r in seen)
    assert dict(seen[0].url.params) == {
        "path": "a.ipynb",
        "offset": "2",
        "limit": "5",
        "cells": "a,b",
    }
    assert json.loads(seen[1].content) == {"edits": {"path": "a.ipynb", "tag": "1234", "edits": []}}
    assert json.loads(seen[2].content) == {"path": "b.py", "content": "y\n"}
    assert dict(seen[3].url.params) == {"path": "a.ipynb", "cell": "c1", "max_chars": "9"}


async def test_rest_errors_keep_their_kind_and_agent_message() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/patch"):
            return httpx.Response(
                409, json={"error": "stale_tag", "message": "Edit rejected: re-read."}
            )
        return httpx.Response(404, text="<html>Not Found</html>")

    backend = rest_backend(httpx.MockTransport(handler))
    stale = await backend.call("notebook_edit", {"patch": "[a.ipynb#1234]\ndelete 1\n"})
    no_extension = await backend.call("notebook_read", {"path": "a.ipynb"})
    bad = await backend.call("notebook_read", {"path": "a.ipynb", "offset": 0})
    unknown = await backend.call("notebook_frobnicate", {})
    await backend.aclose()
    assert (stale.is_error, stale.kind, stale.text) == (
        True,
        "stale_tag",
        "Edit rejected: re-read.",
    )
    assert no_extension.is_error and "jupyter_hashline extension enabled" in no_extension.text
    assert (bad.is_error, bad.kind) == (True, "bad_arguments")
    assert "`offset` must be a whole number >= 1" in bad.text
    assert (unknown.is_error, unknown.kind) == (True, "unknown_tool")


async def test_an_unreachable_server_is_an_error_result_not_an_exception() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    backend = rest_backend(httpx.MockTransport(handler))
    outcome = await backend.call("notebook_read", {"path": "a.ipynb"})
    await backend.aclose()
    assert (outcome.is_error, outcome.kind) == (True, "unreachable")
    assert "Cannot reach the Jupyter server at http://jupyter.test/base/hashline/" in outcome.text
    assert "nothing was changed" in outcome.text


def test_the_cli_path_does_not_load_the_mcp_sdk() -> None:
    """`read`/`patch` import the tools; the SDK loads only for `jupyter-hashline mcp`."""
    probe = "import sys, jupyter_hashline.cli, jupyter_hashline.mcp; print('mcp' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


async def test_a_base_folder_joins_paths_out_and_names_them_back_relative() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.path.endswith("/read"):
            view = "[work/sub/a.ipynb#1234]\n1:x"
            return httpx.Response(
                200,
                json={
                    "path": "work/sub/a.ipynb",
                    "tag": "1234",
                    "header": "[work/sub/a.ipynb#1234]",
                    "view": view,
                },
            )
        text = "[work/sub/a.ipynb#5678] updated\n1:y\nwarning: work/sub/a.ipynb was saved"
        record = {
            "id": 3,
            "path": "work/sub/a.ipynb",
            "op": "update",
            "at_ms": 1,
            "who": "agent-7",
            "source": "patch",
            "header_before": "[work/sub/a.ipynb#1234]",
            "header_after": "[work/sub/a.ipynb#5678]",
            "diff": "",
            "warnings": [],
            "cells": [],
        }
        return httpx.Response(200, json={"sections": [], "text": text, "activity": [record]})

    backend = rest_backend(httpx.MockTransport(handler), base_path="/work/sub/")
    read = await backend.call("notebook_read", {"path": "a.ipynb"})
    edit = await backend.call("notebook_edit", {"patch": "[a.ipynb#1234]\nreplace 1:\n+y\n"})
    broken = await backend.call("notebook_edit", {"patch": "no header here\n"})
    await backend.aclose()
    assert dict(seen[0].url.params) == {"path": "work/sub/a.ipynb"}
    assert read.text == "[a.ipynb#1234]\n1:x" and read.reply["path"] == "a.ipynb"
    assert json.loads(seen[1].content) == {"edits": [{"path": "work/sub/a.ipynb", "tag": "1234",
        "edits": [{"op": "replace", "start": 1, "end": 1, "lines": ["y"]}]}]}  # fmt: skip
    assert edit.text == "[a.ipynb#5678] updated\n1:y\nwarning: a.ipynb was saved"
    assert [(r.path, r.who, r.id) for r in edit.activity] == [("a.ipynb", "agent-7", 3)]
    assert broken.is_error and broken.kind == "patch_syntax" and len(seen) == 2


async def test_a_base_folder_maps_paths_and_never_the_files_text() -> None:
    line = "open('sub/a.py')  # [sub/a.py#1234] sub/"

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/read"):
            view = f"[sub/n.py#1234]\n1:{line}\n2:x = 1"
            return httpx.Response(
                200, json={"path": "sub/n.py", "tag": "1234", "header": "[sub/n.py#1234]",
                           "view": view},
            )  # fmt: skip
        message = (
            "Edit rejected: your edit to sub/n.py names line(s) 1 that you were never shown "
            f"under [sub/n.py#1234]. Nothing was written. Here they are:\n1:{line}\n"
            " ...\n*2:sub/x\nCheck your edit and send it again with the same header "
            "[sub/n.py#1234]."
        )
        return httpx.Response(409, json={"error": "unseen_lines", "message": message})

    backend = rest_backend(httpx.MockTransport(handler), base_path="sub")
    read = await backend.call("notebook_read", {"path": "n.py"})
    refused = await backend.call("notebook_edit", {"patch": "[n.py#1234]\nreplace 1:\n+y\n"})
    await backend.aclose()
    assert read.text == f"[n.py#1234]\n1:{line}\n2:x = 1"
    assert (read.reply["path"], read.reply["header"]) == ("n.py", "[n.py#1234]")
    assert refused.text.splitlines() == [
        "Edit rejected: your edit to n.py names line(s) 1 that you were never shown "
        "under [n.py#1234]. Nothing was written. Here they are:",
        f"1:{line}",
        " ...",
        "*2:sub/x",
        "Check your edit and send it again with the same header [n.py#1234].",
    ]


async def test_a_base_folder_leaves_previews_outputs_and_diffs_alone() -> None:
    text = "[sub/n.py#5678] updated\n1:open('sub/a.py')\nwarning: sub/n.py was saved"
    record = {
        "id": 1, "path": "sub/n.py", "op": "update", "at_ms": 1, "who": "agent-7",
        "source": "patch", "header_before": "[sub/n.py#1234]", "header_after": "[sub/n.py#5678]",
        "diff": "-open('sub/b.py')\n+open('sub/a.py')", "warnings": ["sub/n.py was saved"],
        "cells": [],
    }  # fmt: skip
    section = {"path": "sub/n.py", "header": "[sub/n.py#5678]", "preview": "1:open('sub/a.py')"}

    def handler(request: httpx.Request) -> httpx.Response:
        reply = {"sections": [section], "text": text, "activity": [record]}
        return httpx.Response(200, json=reply)

    backend = rest_backend(httpx.MockTransport(handler), base_path="sub")
    edit = await backend.call("notebook_edit", {"patch": "[n.py#1234]\nreplace 1:\n+y\n"})
    await backend.aclose()
    assert edit.text == "[n.py#5678] updated\n1:open('sub/a.py')\nwarning: n.py was saved"
    [mapped] = edit.reply["sections"]
    assert mapped == {"path": "n.py", "header": "[n.py#5678]", "preview": "1:open('sub/a.py')"}
    [activity] = edit.activity
    assert (activity.path, activity.header_before, activity.warnings) == (
        "n.py",
        "[n.py#1234]",
        ("n.py was saved",),
    )
    assert activity.diff == record["diff"]


async def test_images_travel_as_true_and_come_back_as_figures() -> None:
    seen: list[httpx.Request] = []
    image = {"cell": "plot", "output_index": 2, "mime": "image/png", "data": "iVBOR",
             "width": 8, "height": 4}  # fmt: skip

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        reply = {"path": "n.ipynb", "cell": "plot", "text": "cell plot", "images": [image]}
        return httpx.Response(200, json=reply)

    backend = rest_backend(httpx.MockTransport(handler))
    outputs = await backend.call(
        "notebook_outputs", {"path": "n.ipynb", "cell": "plot", "images": True}
    )
    await backend.aclose()
    assert dict(seen[0].url.params) == {"path": "n.ipynb", "cell": "plot", "images": "true"}
    [figure] = outputs.images
    assert figure.to_json() == image
