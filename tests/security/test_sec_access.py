"""Access: who may call the API, and which files any call can reach.

- Authentication: every route refuses requests without credentials and with forged ones
  (a made-up token, a forged login cookie); the routes come from the extension's own list.
- XSRF: a browser's login cookie reads fine, but a cookie-authenticated POST without the
  XSRF token is refused on every POST route (and lands with it).
- Confinement: for every route that takes a path (read, outputs, write, patch in text and JSON
  form), `..`, absolute paths, symlinks (to a file, to a folder), backslashes, NULs and
  URL-encoded escapes (once and twice, sent raw on the wire) are refused: nothing outside the
  root is read, written or created, and no answer carries a byte of the outside file.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from testkit.faults import TALLY, tree_bytes
from testkit.recorder import RECORDER
from testkit.rest import Api, Fetch, write_notebook
from tornado.httpclient import HTTPClientError, HTTPResponse

from jupyter_hashline.server.handlers import ROUTES

SECRET = "TOP-SECRET-7f3a"
POST_ROUTES = [route for route, handler in ROUTES if "post" in vars(handler)]


@pytest.fixture
def outside(tmp_path: Path, jp_root_dir: Path) -> Path:
    """A folder next to the server root holding a secret file and a secret notebook; the root
    holds links to them."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.py").write_text(f"key = '{SECRET}'\n")
    write_notebook(folder / "secret.ipynb", f"key = '{SECRET}'")
    os.symlink(folder, jp_root_dir / "dirlink")
    os.symlink(folder / "secret.py", jp_root_dir / "filelink.py")
    os.symlink(folder / "secret.ipynb", jp_root_dir / "nblink.ipynb")
    (jp_root_dir / "inside.py").write_text("inside = 1\n")
    write_notebook(jp_root_dir / "inside.ipynb", "inside = 1")
    return folder


def escapes(outside: Path, root: Path) -> list[str]:
    rel_out = os.path.relpath(outside, root)
    return [
        "../outside/secret.py",
        "inside/../../outside/secret.py",
        "/../outside/secret.py",
        f"{rel_out}/secret.ipynb",
        str(outside / "secret.py"),  # absolute: a leading / means the root, so not that file
        "dirlink/secret.py",
        "dirlink/secret.ipynb",
        "filelink.py",
        "nblink.ipynb",
        "..\\outside\\secret.py",
        "%2e%2e/outside/secret.py",
        "..%2foutside%2fsecret.py",
        "%252e%252e/outside/secret.py",
        "dirlink/../filelink.py",
        "inside.py\x00/../../outside/secret.py",
    ]


def refused(status: int, body: dict[str, Any]) -> None:
    TALLY["inputs tried"] += 1
    TALLY["inputs clean errors"] += status in (400, 403, 404) and SECRET not in json.dumps(body)
    assert status in (400, 403, 404), (status, body)
    assert SECRET not in json.dumps(body)


async def test_every_path_route_refuses_every_escape(
    api: Api, jp_root_dir: Path, outside: Path
) -> None:
    before_outside, before_root = tree_bytes(outside), tree_bytes(jp_root_dir)
    _, inside = await api("read", params={"path": "inside.py"})
    tag = inside["tag"]
    for path in escapes(outside, jp_root_dir):
        calls: list[tuple[str, dict[str, Any]]] = [
            ("read", {"params": {"path": path}}),
            ("outputs", {"params": {"path": path, "cell": "cell-0"}}),
            ("write", {"method": "POST", "body": {"path": path, "content": "pwned = 1\n"}}),
            ("patch", {"method": "POST", "body": {"patch": f"[{path}#{tag}]\nreplace 1:\n+x\n"}}),
            (
                "patch",
                {
                    "method": "POST",
                    "body": {
                        "edits": {
                            "path": path,
                            "tag": tag,
                            "edits": [{"op": "insert_tail", "lines": ["x"]}],
                        }
                    },
                },
            ),
        ]
        for route, kwargs in calls:
            status, body = await api(route, **kwargs)
            refused(status, body)
    assert tree_bytes(outside) == before_outside
    assert tree_bytes(jp_root_dir) == before_root


async def raw_get(client: Any, base_url: str, auth: dict[str, str], query: str) -> HTTPResponse:
    """GET with a query string sent exactly as given (no client-side encoding)."""
    response: HTTPResponse = await client.fetch(
        f"{base_url}hashline/{query}", headers=auth, raise_error=False, request_timeout=20
    )
    return response


@pytest.mark.parametrize(
    "encoded",
    [
        "%2e%2e%2foutside%2fsecret.py",
        "%2E%2E/outside/secret.py",
        "%252e%252e%252foutside%252fsecret.py",
        "dirlink%2fsecret.py",
        "..%5coutside%5csecret.py",
        "inside.py%00",
        "%2fetc%2fpasswd",
    ],
)
async def test_url_encoded_paths_on_the_wire_are_refused(
    http_server_client: Any,
    jp_base_url: str,
    jp_auth_header: dict[str, str],
    outside: Path,
    encoded: str,
) -> None:
    for query in (f"read?path={encoded}", f"outputs?path={encoded}&cell=cell-0"):
        response = await raw_get(http_server_client, jp_base_url, jp_auth_header, query)
        refused(response.code, json.loads(response.body))


# -- authentication and XSRF ---------------------------------------------------------------


def concrete(route: str) -> list[str]:
    route = route.replace("(?P<session_id>[^/]+)", "s1")
    return ["hashline", *route.replace("(?P<proposal_id>[^/]+)", "1").split("/")]


async def login_cookie(fetch: Fetch, token: str) -> str:
    """The login cookie a browser gets after opening a URL with `?token=`."""
    response = await fetch(
        "hashline", "snapshots", params={"token": token}, headers={"Authorization": ""}
    )
    cookies = [c.split(";", 1)[0] for c in response.headers.get_list("Set-Cookie")]
    [cookie] = [c for c in cookies if c.startswith("username-")]
    return cookie


POST_BODIES = {
    "patch": {"patch": "[inside.py#0000]\ninsert tail:\n+x\n"},
    "write": {"path": "xsrf.py", "content": "written = 1\n"},
    "run": {"path": "inside.ipynb", "tag": "0000", "cells": ["c"]},
    "eval": {"path": "inside.ipynb", "code": "open('/etc/passwd').read()"},
    "kernel": {"path": "inside.ipynb", "action": "restart"},
    "revert": {"agent": "someone", "since_ms": 0},
    "sessions": {"id": "s1", "snapshot": {"zones": {}, "cache": {}, "audit": [], "edits": []}},
    "proposals/(?P<proposal_id>[^/]+)/accept": {},
    "proposals/(?P<proposal_id>[^/]+)/reject": {},
    "proposals/accept-all": {"path": "inside.py"},
    "proposals/reject-all": {"path": "inside.py"},
    "review": {"mode": "off"},
}


async def test_cookie_posts_without_xsrf_are_refused_on_every_post_route(
    jp_fetch: Fetch, jp_serverapp: Any, jp_root_dir: Path, outside: Path
) -> None:
    assert set(POST_ROUTES) == set(POST_BODIES)
    cookie = await login_cookie(jp_fetch, jp_serverapp.identity_provider.token)
    as_browser = {"Authorization": "", "Cookie": cookie}
    reading = await jp_fetch("hashline", "read", params={"path": "inside.py"}, headers=as_browser)
    assert reading.code == 200  # the cookie alone authenticates reads
    before = tree_bytes(jp_root_dir)
    for route in POST_ROUTES:
        with pytest.raises(HTTPClientError) as caught:
            await jp_fetch(*concrete(route), method="POST",
                           body=json.dumps(POST_BODIES[route]), headers=as_browser)  # fmt: skip
        RECORDER.answer(route, caught.value.code, expect=403)
        assert caught.value.code == 403, route
    assert tree_bytes(jp_root_dir) == before
    with_xsrf = {**as_browser, "Cookie": f"{cookie}; _xsrf=f00dfeed", "X-XSRFToken": "f00dfeed"}
    response = await jp_fetch("hashline", "write", method="POST",
                              body=json.dumps(POST_BODIES["write"]), headers=with_xsrf)  # fmt: skip
    assert response.code == 200
    assert (jp_root_dir / "xsrf.py").read_text() == "written = 1\n"


@pytest.mark.parametrize(
    "headers",
    [
        {"Authorization": "token not-the-token"},
        {"Authorization": "Bearer not-the-token"},
        {"Authorization": "", "Cookie": 'username-127-0-0-1-1="2|1:0|10:1|24:forged|4:e30=|00"'},
        {"Authorization": "", "Cookie": "_xsrf=x"},
    ],
    ids=["wrong-token", "wrong-bearer", "forged-cookie", "xsrf-cookie-only"],
)
async def test_forged_credentials_are_refused_on_every_route(
    jp_fetch: Fetch, jp_root_dir: Path, outside: Path, headers: dict[str, str]
) -> None:
    before = tree_bytes(jp_root_dir)
    for route, handler in ROUTES:
        for method in ("get", "post"):
            if method not in vars(handler):
                continue
            kwargs: dict[str, Any] = {"method": method.upper(), "headers": headers}
            if method == "post":
                kwargs["body"] = json.dumps(POST_BODIES[route])
            else:
                kwargs["params"] = {"path": "inside.py", "cell": "cell-0"}
            with pytest.raises(HTTPClientError) as caught:
                await jp_fetch(*concrete(route), **kwargs)
            RECORDER.answer(route, caught.value.code, expect=403)
            assert caught.value.code == 403, (route, method)
            assert caught.value.response is not None
            assert b"inside = 1" not in caught.value.response.body
    assert tree_bytes(jp_root_dir) == before
