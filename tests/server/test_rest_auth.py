"""No hashline route answers without credentials; every one works with them.

The routes are enumerated from the extension app's own handler list, never hard-coded: a route
added without an example request here fails `test_every_route_has_an_example`.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from testkit.rest import Fetch, write_notebook
from tornado.httpclient import HTTPClientError
from tornado.web import RequestHandler

from jupyter_hashline.server.handlers import HashlineHandler

METHODS = ("get", "post", "put", "patch", "delete", "head", "options")
Example = Callable[[Fetch, Path], Awaitable[dict[str, Any]]]


def own_verb(handler: type[RequestHandler], method: str) -> bool:
    """Whether a hashline handler class (not tornado or jupyter_server) defines `method`."""
    return any(method in vars(cls) for cls in handler.__mro__ if issubclass(cls, HashlineHandler))


def hashline_routes(
    serverapp: Any, *, inherited: bool = False
) -> list[tuple[str, str, type[RequestHandler]]]:
    """(pattern, METHOD, handler) for every verb of every route the extension registered:
    the verbs our handlers define, or (`inherited`) the ones jupyter_server's base adds."""
    app = serverapp.extension_manager.extension_points["jupyter_hashline"].app
    found = []
    for pattern, handler, *_ in app.handlers:
        for method in METHODS:
            overridden = getattr(handler, method) is not getattr(RequestHandler, method)
            if overridden and own_verb(handler, method) != inherited:
                found.append((pattern, method.upper(), handler))
    return found


def concrete(pattern: str) -> str:
    """A URL path for a route pattern: each named group filled with a sample value."""
    return re.sub(r"\(\?P<(\w+)>[^)]*\)", lambda m: f"sample-{m.group(1)}", pattern)


def files_in(root: Path) -> list[tuple[str, bytes]]:
    return sorted(
        (str(p.relative_to(root)), p.read_bytes()) for p in root.rglob("*") if p.is_file()
    )


async def read_header(fetch: Fetch, path: str) -> str:
    response = await fetch("hashline", "read", params={"path": path})
    return str(json.loads(response.body)["header"])


async def example_patch(fetch: Fetch, root: Path) -> dict[str, Any]:
    header = await read_header(fetch, "nb.ipynb")
    return {"body": json.dumps({"patch": f"{header}\nreplace 2:\n+x = 2\n"})}


async def example_run(fetch: Fetch, root: Path) -> dict[str, Any]:
    tag = (await read_header(fetch, "nb.ipynb"))[-5:-1]
    return {"body": json.dumps({"path": "nb.ipynb", "tag": tag, "cells": ["cell-0"]})}


async def example_session_post(fetch: Fetch, root: Path) -> dict[str, Any]:
    snapshot = {"zones": {}, "cache": {}, "audit": [], "edits": []}
    return {"body": json.dumps({"id": "sample-session_id", "snapshot": snapshot})}


async def example_session_get(fetch: Fetch, root: Path) -> dict[str, Any]:
    await fetch("hashline", "sessions", method="POST", **await example_session_post(fetch, root))
    return {}


async def example_decision(fetch: Fetch, root: Path, verb: str) -> dict[str, Any]:
    """A fresh proposal of another agent's (so a person may accept it), at its own URL."""
    agent = {"X-Hashline-Agent": "proposing-agent"}
    response = await fetch("hashline", "read", params={"path": "nb.ipynb"}, headers=dict(agent))
    header = json.loads(response.body)["header"]
    body = json.dumps({"patch": f"{header}\nreplace 2:\n+x = '{verb}'\n", "propose": True})
    response = await fetch("hashline", "patch", method="POST", body=body, headers=dict(agent))
    reply = json.loads(response.body)
    assert reply.get("proposals"), reply
    number = reply["proposals"][0]["id"]
    return {"parts": ["hashline", "proposals", str(number), verb], "body": "{}"}


def decision(verb: str) -> Example:
    async def example(fetch: Fetch, root: Path) -> dict[str, Any]:
        return await example_decision(fetch, root, verb)

    return example


def fixed(**request: Any) -> Example:
    async def example(fetch: Fetch, root: Path) -> dict[str, Any]:
        return request

    return example


EXAMPLES: dict[tuple[str, str], Example] = {
    ("/hashline/read", "GET"): fixed(params={"path": "nb.ipynb"}),
    ("/hashline/patch", "POST"): example_patch,
    ("/hashline/write", "POST"): fixed(body=json.dumps({"path": "w.txt", "content": "w\n"})),
    ("/hashline/outputs", "GET"): fixed(params={"path": "nb.ipynb", "cell": "cell-0"}),
    ("/hashline/run", "POST"): example_run,
    ("/hashline/eval", "POST"): fixed(body=json.dumps({"path": "nb.ipynb", "code": "1 + 1"})),
    ("/hashline/kernel", "POST"): fixed(body=json.dumps({"path": "nb.ipynb", "action": "status"})),
    ("/hashline/revert", "POST"): fixed(body=json.dumps({"agent": "nobody", "since_ms": 0})),
    ("/hashline/snapshots", "GET"): fixed(),
    ("/hashline/activity", "GET"): fixed(),
    ("/hashline/sessions", "GET"): fixed(),
    ("/hashline/sessions", "POST"): example_session_post,
    ("/hashline/sessions/(?P<session_id>[^/]+)", "GET"): example_session_get,
    ("/hashline/proposals", "GET"): fixed(params={"path": "nb.ipynb"}),
    ("/hashline/proposals/(?P<proposal_id>[^/]+)/accept", "POST"): decision("accept"),
    ("/hashline/proposals/(?P<proposal_id>[^/]+)/reject", "POST"): decision("reject"),
    ("/hashline/proposals/accept-all", "POST"): fixed(body=json.dumps({"path": "nb.ipynb"})),
    ("/hashline/proposals/reject-all", "POST"): fixed(body=json.dumps({"path": "nb.ipynb"})),
    ("/hashline/review", "GET"): fixed(),
    ("/hashline/review", "POST"): fixed(body=json.dumps({"mode": "off"})),
}


def test_every_route_has_an_example(jp_serverapp: Any) -> None:
    routes = hashline_routes(jp_serverapp)
    assert {(pattern, method) for pattern, method, _ in routes} == set(EXAMPLES)
    assert all(issubclass(handler, HashlineHandler) for _, _, handler in routes)


def test_every_verb_is_decorated(jp_serverapp: Any) -> None:
    for _, method, handler in hashline_routes(jp_serverapp):
        source = inspect.getsource(getattr(handler, method.lower()))
        assert "@web.authenticated" in source and "@authorized" in source, (handler, method)


async def test_every_route_refuses_without_credentials_and_works_with_them(
    jp_serverapp: Any, jp_fetch: Fetch, jp_root_dir: Path
) -> None:
    assert jp_serverapp.allow_unauthenticated_access is False
    write_notebook(jp_root_dir / "nb.ipynb", "print(1)", outputs=True)
    routes = hashline_routes(jp_serverapp)
    assert len(routes) >= 10
    for pattern, method, _ in routes:
        request = await EXAMPLES[(pattern, method)](jp_fetch, jp_root_dir)
        parts = request.pop("parts", None) or concrete(pattern).strip("/").split("/")
        before = files_in(jp_root_dir)
        with pytest.raises(HTTPClientError) as refused:
            await jp_fetch(*parts, method=method, headers={"Authorization": ""}, **request)
        assert refused.value.code == 403, (pattern, method)
        assert files_in(jp_root_dir) == before
        response = await jp_fetch(*parts, method=method, **request)
        assert response.code == 200, (pattern, method)
        json.loads(response.body)
    assert (jp_root_dir / "w.txt").read_text() == "w\n"


async def test_a_wrong_token_is_refused(jp_fetch: Fetch, jp_root_dir: Path) -> None:
    (jp_root_dir / "a.py").write_text("a = 1\n")
    with pytest.raises(HTTPClientError) as refused:
        await jp_fetch(
            "hashline", "read", params={"path": "a.py"}, headers={"Authorization": "token nope"}
        )
    assert refused.value.code == 403
    body = json.loads(refused.value.response.body)
    assert body["error"] == "forbidden" and "token" in body["message"]


async def test_inherited_verbs_reveal_nothing(jp_serverapp: Any, jp_fetch: Fetch) -> None:
    """jupyter_server's APIHandler answers CORS preflight (OPTIONS) without auth: no body."""
    inherited = hashline_routes(jp_serverapp, inherited=True)
    assert {method for _, method, _ in inherited} == {"OPTIONS"}
    for pattern, method, _ in inherited:
        parts = concrete(pattern).strip("/").split("/")
        response = await jp_fetch(*parts, method=method, headers={"Authorization": ""})
        assert response.code in (200, 204) and response.body == b"", pattern
