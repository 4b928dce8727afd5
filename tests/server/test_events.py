"""Hashline events on jupyter_server's event bus, through a real server: every recorded edit
and every session post emits a schema-valid event, seen by a listener on the server's event
logger and by a client of `/api/events/subscribe` (the sidebar's channel)."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft7Validator
from jupyter_events.logger import EventLogger
from testkit.rest import Api, write_notebook

from jupyter_hashline.server.events import (
    ACTIVITY_EVENT,
    EVENT_NAMESPACE,
    PROPOSAL_EVENT,
    SCHEMA_FILES,
    SESSION_EVENT,
    connect_events,
    event_schema,
)
from jupyter_hashline.server.sessions import SessionRegistry
from jupyter_hashline.tools import ActivityLog

Event = tuple[str, dict[str, Any]]
SNAPSHOT = {"zones": {}, "cache": {}, "audit": [], "edits": []}


def check_event(schema_id: str, data: dict[str, Any]) -> None:
    """Raise unless `data` (the capsule's metadata left out) matches the event's schema."""
    payload = {k: v for k, v in data.items() if not k.startswith("__") and k != "schema_id"}
    errors = [e.message for e in Draft7Validator(event_schema(schema_id)).iter_errors(payload)]
    assert not errors, f"{schema_id}: {errors}"


@pytest.fixture
def heard(jp_serverapp: Any) -> Callable[[], Awaitable[list[Event]]]:
    """Listen on the server's event logger; the returned coroutine drains what arrived."""
    logger: EventLogger = jp_serverapp.event_logger
    events: list[Event] = []

    async def listener(logger: EventLogger, schema_id: str, data: dict[str, Any]) -> None:
        if schema_id.startswith(EVENT_NAMESPACE):
            events.append((schema_id, data))

    logger.add_listener(listener=listener)

    async def drain() -> list[Event]:
        await logger.gather_listeners()
        taken = list(events)
        events.clear()
        return taken

    return drain


def test_schemas_are_valid_jupyter_event_schemas_with_stable_ids() -> None:
    logger = EventLogger()
    for schema_id, path in SCHEMA_FILES.items():
        schema = json.loads(path.read_text())
        assert schema["$id"] == schema_id and schema_id.startswith(EVENT_NAMESPACE)
        assert schema_id.endswith(f"/v{schema['version']}")
        Draft7Validator.check_schema(schema)
        logger.register_event_schema(schema)  # jupyter_events' metaschema accepts it
        described = [n for n, p in schema["properties"].items() if p.get("description")]
        assert described == list(schema["properties"])
    assert set(SCHEMA_FILES) == {ACTIVITY_EVENT, SESSION_EVENT, PROPOSAL_EVENT}


async def test_an_edit_emits_a_schema_valid_activity_event(
    api: Api, jp_root_dir: Path, heard: Callable[[], Awaitable[list[Event]]]
) -> None:
    write_notebook(jp_root_dir / "nb.ipynb", "a = 1", "b = 2")
    _, read = await api("read", params={"path": "nb.ipynb"})
    assert await heard() == []  # a read is not activity
    _, reply = await api(
        "patch", method="POST", body={"patch": f"{read['header']}\nreplace 4:\n+b = 20\n"}
    )
    events = await heard()
    assert [schema_id for schema_id, _ in events] == [ACTIVITY_EVENT]
    schema_id, data = events[0]
    check_event(schema_id, data)
    _, activity = await api("activity")
    record = activity["edits"][0]
    assert {k: data[k] for k in ("id", "path", "op", "who", "source", "cells", "at_ms")} == {
        k: record[k] for k in ("id", "path", "op", "who", "source", "cells", "at_ms")
    }
    assert data["who"] == "ada" and data["cells"] == ["cell-1"]
    assert (data["header_before"], data["header_after"]) == (
        read["header"],
        reply["sections"][0]["header"],
    )
    assert "diff" not in data and "b = 20" not in json.dumps(data)


async def test_writes_multi_file_patches_and_sessions_emit_noops_and_rejections_do_not(
    api: Api, jp_root_dir: Path, heard: Callable[[], Awaitable[list[Event]]]
) -> None:
    status, _ = await api("write", method="POST", body={"path": "new.py", "content": "x = 1\n"})
    assert status == 200
    (jp_root_dir / "other.py").write_text("y = 1\n")
    _, one = await api("read", params={"path": "new.py"})
    _, two = await api("read", params={"path": "other.py"})
    patch = f"{one['header']}\nreplace 1:\n+x = 2\n{two['header']}\nreplace 1:\n+y = 2\n"
    await api("patch", method="POST", body={"patch": patch})
    _, again = await api("read", params={"path": "new.py"})
    await api("patch", method="POST", body={"patch": f"{again['header']}\nreplace 1:\n+x = 2\n"})
    status, _ = await api("patch", method="POST", body={"patch": f"{one['header']}\ndelete 1\n"})
    assert status == 409  # stale tag whose line changed: rejected, nothing written
    events = await heard()
    assert [(d["path"], d["op"], d["source"]) for _, d in events] == [
        ("new.py", "create", "write"),
        ("new.py", "update", "patch"),
        ("other.py", "update", "patch"),
    ]
    for schema_id, data in events:
        check_event(schema_id, data)
    posted = {"label": "agent A", "snapshot": SNAPSHOT}
    _, first = await api("sessions", method="POST", body=posted)
    await api("sessions", method="POST", body={"id": first["id"], "snapshot": SNAPSHOT})
    sessions = await heard()
    assert [(s, d["id"], d["created"], d["updates"]) for s, d in sessions] == [
        (SESSION_EVENT, first["id"], True, 1),
        (SESSION_EVENT, first["id"], False, 2),
    ]
    for schema_id, data in sessions:
        check_event(schema_id, data)
    assert sessions[1][1]["label"] == "agent A"


async def next_hashline_message(socket: Any) -> dict[str, Any]:
    """The next hashline event on the socket (the server's own events are skipped)."""
    while True:
        raw = await asyncio.wait_for(socket.read_message(), timeout=10)
        assert raw is not None, "the event socket closed"
        message: dict[str, Any] = json.loads(raw)
        if message["schema_id"].startswith(EVENT_NAMESPACE):
            return message


async def test_the_event_websocket_delivers_hashline_events(
    api: Api, jp_root_dir: Path, jp_ws_fetch: Callable[..., Awaitable[Any]]
) -> None:
    """What the sidebar receives through `/api/events/subscribe`."""
    socket = await jp_ws_fetch("api", "events", "subscribe")
    try:
        (jp_root_dir / "a.py").write_text("a = 1\n")
        _, read = await api("read", params={"path": "a.py"})
        await api("patch", method="POST", body={"patch": f"{read['header']}\nreplace 1:\n+a = 2\n"})
        message = await next_hashline_message(socket)
    finally:
        socket.close()
    assert message["schema_id"] == ACTIVITY_EVENT
    assert message["path"] == "a.py" and message["op"] == "update"
    check_event(ACTIVITY_EVENT, message)


async def test_a_failing_emission_never_fails_the_edit(
    api: Api,
    jp_serverapp: Any,
    jp_root_dir: Path,
    heard: Callable[[], Awaitable[list[Event]]],
    caplog: pytest.LogCaptureFixture,
) -> None:
    def broken(schema_id: str, data: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("event sink is down")

    jp_serverapp.event_logger.add_modifier(schema_id=ACTIVITY_EVENT, modifier=broken)
    (jp_root_dir / "a.py").write_text("a = 1\n")
    _, read = await api("read", params={"path": "a.py"})
    status, reply = await api(
        "patch", method="POST", body={"patch": f"{read['header']}\nreplace 1:\n+a = 2\n"}
    )
    assert status == 200 and reply["sections"][0]["op"] == "update"
    assert (jp_root_dir / "a.py").read_text() == "a = 2\n"
    assert "could not emit" in caplog.text and "event sink is down" in caplog.text
    assert await heard() == []


def test_listeners_disconnect_and_a_server_without_a_bus_says_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    logger = EventLogger()
    heard: list[str] = []

    async def listener(logger: EventLogger, schema_id: str, data: dict[str, Any]) -> None:
        heard.append(data["path"])

    activity, sessions = ActivityLog(), SessionRegistry()
    log = logging.getLogger("test")
    disconnect = connect_events(logger, activity=activity, sessions=sessions, log=log)
    connect_events(logger, activity=ActivityLog(), sessions=SessionRegistry(), log=log)  # again

    async def record(path: str) -> None:
        activity.record(path=path, op="update", who="u", source="patch", before="a\n", after="b\n")
        await logger.gather_listeners()

    logger.add_listener(schema_id=ACTIVITY_EVENT, listener=listener)
    asyncio.run(record("one.py"))
    disconnect()
    asyncio.run(record("two.py"))
    assert heard == ["one.py"]
    with caplog.at_level(logging.WARNING):
        connect_events(None, activity=activity, sessions=sessions, log=log)
    assert "no event logger" in caplog.text
    asyncio.run(record("three.py"))
    assert heard == ["one.py"]
