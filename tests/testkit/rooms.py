"""Plugin: a Jupyter server with jupyter-collaboration, and a person in a notebook's room.

`collaboration_server_config` is the server configuration of the tests that need rooms
(jupyter_hashline with jupyter_server_ydoc and fileid, authentication required, the
`hashline_config` overrides); a module uses it by returning it from its own
`jp_server_config`. `open_in_lab(path)` connects a real Yjs client to the notebook's room, as
JupyterLab does; `until` waits (bounded) for what crosses the websocket.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from httpx_ws import AsyncWebSocketSession, aconnect_ws
from jupyter_ydoc import YNotebook
from pycrdt import Provider
from pycrdt.websocket.websocket import HttpxWebsocket
from traitlets.config import Config

from testkit.rest import Fetch, NamedUserProvider

OpenInLab = Callable[[str], AbstractAsyncContextManager[YNotebook]]


async def until(check: Callable[[], bool], what: str, limit_s: float = 10.0) -> None:
    """Wait (bounded) for a condition that depends on messages crossing the websocket."""
    for _ in range(int(limit_s / 0.02)):
        if check():
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def collaboration_server_config(
    tmp_path: Path, jp_root_dir: Path, hashline_config: dict[str, Any]
) -> Config:
    """jupyter_hashline with jupyter-collaboration; saves after 1 s, files polled often."""
    return Config(
        {
            "ServerApp": {
                "jpserver_extensions": {
                    "jupyter_hashline": True,
                    "jupyter_server_ydoc": True,
                    "jupyter_server_fileid": True,
                    "jupyter_server_terminals": False,
                },
                "allow_unauthenticated_access": False,
                "identity_provider_class": NamedUserProvider,
            },
            "HashlineExtension": hashline_config,
            "BaseFileIdManager": {
                "root_dir": str(jp_root_dir),
                "db_path": str(tmp_path / "file_id.db"),
                "db_journal_mode": "OFF",
            },
            "SQLiteYStore": {"db_path": str(tmp_path / "ystore.db")},
            "YDocExtension": {
                "document_save_delay": 1,
                "document_cleanup_delay": 60,
                "file_poll_interval": 0.1,
            },
        }
    )


@pytest.fixture
def open_in_lab(
    jp_fetch: Fetch, jp_http_port: int, jp_base_url: str, jp_auth_header: dict[str, str]
) -> OpenInLab:
    """`async with open_in_lab(path) as person:` a Yjs client in the notebook's room."""

    @asynccontextmanager
    async def connect(path: str) -> AsyncIterator[YNotebook]:
        body = json.dumps({"format": "json", "type": "notebook"})
        reply = await jp_fetch("api/collaboration/session", path, method="PUT", body=body)
        session = json.loads(reply.body)
        room = f"json:notebook:{session['fileId']}"
        url = (
            f"http://127.0.0.1:{jp_http_port}{jp_base_url}api/collaboration/room/{room}"
            f"?sessionId={session['sessionId']}"
        )
        person = YNotebook()
        connecting = aconnect_ws(url, session_class=AsyncWebSocketSession, headers=jp_auth_header)
        async with connecting as ws, Provider(person.ydoc, HttpxWebsocket(ws, room)):
            await until(lambda: person.cell_number > 0, "the room to sync")
            yield person

    return connect
