"""Thin tornado handlers for the REST API under `{base_url}hashline/`.

Each handler parses its input, calls one service method and writes JSON. Every verb is
`@web.authenticated` and `@authorized` on the "contents" resource (read for GET, write for
POST). Every error body is produced by `errors.error_response`, via `write_error`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from tornado import web

from ..hashline.errors import HashlineError
from .errors import error_response
from .requests import (
    json_object,
    parse_limit_query,
    parse_outputs_query,
    parse_patch_body,
    parse_read_query,
    parse_session_body,
    parse_write_body,
)
from .service import HashlineService

AUTH_RESOURCE = "contents"
Work = Callable[[], Awaitable[Mapping[str, Any]] | Mapping[str, Any]]


class HashlineHandler(APIHandler):
    """Base: holds the service; maps every error to `{"error", "message"}`."""

    auth_resource = AUTH_RESOURCE

    def initialize(self, service: HashlineService) -> None:
        self.service = service

    @property
    def who(self) -> str:
        """The identity provider's name for the requesting user (its username if unnamed)."""
        user = self.current_user
        return str(getattr(user, "name", None) or getattr(user, "username", None) or user)

    def body(self) -> dict[str, Any]:
        return json_object(self.request.body, self.service.settings.max_request_bytes)

    async def respond(self, work: Work, status: int = 200) -> None:
        """Run `work` and write its result as JSON, or the mapped error."""
        try:
            outcome = work()
            payload = await outcome if isinstance(outcome, Awaitable) else outcome
        except HashlineError as err:
            self.send_error(err.status, exc_info=sys.exc_info())
            return
        self.set_status(status)
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(payload))

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        exc_info = kwargs.get("exc_info")
        status, body = error_response(exc_info[1] if exc_info else None, status_code)
        if status >= 500:
            self.log.error("hashline: %s", body["message"], exc_info=exc_info)
        self.set_status(status)
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(body))


class ReadHandler(HashlineHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        await self.respond(lambda: self.service.read(parse_read_query(self.request.arguments)))


class PatchHandler(HashlineHandler):
    @web.authenticated
    @authorized
    async def post(self) -> None:
        await self.respond(lambda: self.service.patch(parse_patch_body(self.body()), who=self.who))


class WriteHandler(HashlineHandler):
    @web.authenticated
    @authorized
    async def post(self) -> None:
        await self.respond(lambda: self.service.write(parse_write_body(self.body()), who=self.who))


class OutputsHandler(HashlineHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        await self.respond(
            lambda: self.service.outputs(parse_outputs_query(self.request.arguments))
        )


class SnapshotsHandler(HashlineHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        await self.respond(self.service.snapshots)


class ActivityHandler(HashlineHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        await self.respond(lambda: self.service.activity(parse_limit_query(self.request.arguments)))


class SessionsHandler(HashlineHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        await self.respond(self.service.list_sessions)

    @web.authenticated
    @authorized
    async def post(self) -> None:
        await self.respond(lambda: self.service.post_session(parse_session_body(self.body())))


class SessionHandler(HashlineHandler):
    @web.authenticated
    @authorized
    async def get(self, session_id: str) -> None:
        await self.respond(lambda: self.service.get_session(session_id))


ROUTES: tuple[tuple[str, type[HashlineHandler]], ...] = (
    ("read", ReadHandler),
    ("patch", PatchHandler),
    ("write", WriteHandler),
    ("outputs", OutputsHandler),
    ("snapshots", SnapshotsHandler),
    ("activity", ActivityHandler),
    ("sessions", SessionsHandler),
    (r"sessions/(?P<session_id>[^/]+)", SessionHandler),
)


def make_handlers(
    service: HashlineService, prefix: str = "hashline"
) -> list[tuple[str, type[HashlineHandler], dict[str, Any]]]:
    """Route table for `ExtensionApp.handlers` (the app prepends the server's base_url)."""
    return [(f"/{prefix}/{route}", handler, {"service": service}) for route, handler in ROUTES]
