"""Thin tornado handlers for the REST API under `{base_url}hashline/`.

Tool routes (one per catalog entry: read, patch, write, outputs, run) hand the query or body
to `tools.run_tool` as the requesting agent and write the outcome's reply; the other routes
call one service method. Every verb is `@web.authenticated` and `@authorized` on the
"contents" resource (read for GET, write for POST). `POST run` is also authorized on the
"kernels" resource for "execute": it runs code in the notebook's kernel (and writes the outputs
into the notebook, hence contents write), so a user who may edit files but not execute kernels
gets 403. Every error body is `{"error", "message"}`: tool errors from the outcome, the rest
from `errors.error_response`, via `write_error`. A body of a megabyte or more is parsed in a
worker thread, and an edit's body carrying more edits than `max_edits_per_patch` is refused
before it is parsed: no one request holds up everyone else on the server.

The agent of a request: the `X-Hashline-Agent` header when sent; else, for a request
authenticated by the server's token alone (jupyter_server invents a new anonymous user for each
such request), the server's owner and the client (`ada via curl`, agent_names.py: readable,
never the token or a hash of it); else the identity provider's username (cookie logins,
JupyterHub, providers that name token users).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, ClassVar

from jupyter_server.auth.decorator import authorized
from jupyter_server.auth.identity import IdentityProvider
from jupyter_server.base.handlers import APIHandler
from tornado import web

from ..hashline import HashlineError, offloaded
from ..tools import (
    AGENT_HEADER,
    CATALOG,
    EditRequest,
    Source,
    ToolOutcome,
    ToolSpec,
    run_tool,
)
from .agent_names import token_agent
from .errors import error_response
from .requests import (
    agent_header,
    json_object,
    parse_limit_query,
    parse_session_body,
    proposal_number,
    query_arguments,
)
from .service import HashlineService

AUTH_RESOURCE = "contents"
Work = Callable[[], Awaitable[Mapping[str, Any]] | Mapping[str, Any]]


def _invents_token_users(provider: IdentityProvider) -> bool:
    """True when `provider` makes a new random user for each token request: jupyter_server's
    own way of finding users. A provider that finds users its own way (JupyterHub's asks the
    hub who owns the token) keeps their names."""
    cls = type(provider)
    default_lookup = cls.get_user is IdentityProvider.get_user
    default_invent = cls.generate_anonymous_user is IdentityProvider.generate_anonymous_user
    return default_lookup and default_invent


class HashlineHandler(APIHandler):
    """Base: holds the service; names the agent; maps every error to `{"error", "message"}`."""

    auth_resource = AUTH_RESOURCE

    def initialize(self, service: HashlineService) -> None:
        self.service = service

    @property
    def agent(self) -> str:
        """The agent this request speaks for (see the module docstring)."""
        named = agent_header(self.request.headers.get(AGENT_HEADER))
        if named is not None:
            return named
        provider = self.identity_provider
        if self.token_authenticated and _invents_token_users(provider):
            return token_agent(self.request.headers.get("User-Agent"))
        user = self.current_user
        return str(getattr(user, "username", None) or getattr(user, "name", None) or user)

    async def body(self, max_edits: int | None = None) -> dict[str, Any]:
        """The JSON body as an object; a large one is parsed in a worker thread, so a request
        of megabytes never holds up everyone else on the server. With `max_edits`, a body
        carrying more edit operations is refused before it is parsed."""
        raw, limit = self.request.body, self.service.settings.max_request_bytes
        return await offloaded(len(raw), lambda: json_object(raw, limit, max_edits))

    async def query(self) -> dict[str, str]:
        return query_arguments(self.request.arguments)

    async def respond(self, work: Work, status: int = 200) -> None:
        """Run `work` and write its result as JSON, or the mapped error."""
        try:
            outcome = work()
            payload = await outcome if isinstance(outcome, Awaitable) else outcome
        except HashlineError as err:
            self.send_error(err.status, exc_info=sys.exc_info())
            return
        self._json(status, payload)

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        exc_info = kwargs.get("exc_info")
        status, body = error_response(exc_info[1] if exc_info else None, status_code)
        if status >= 500:
            self.log.error("hashline: %s", body["message"], exc_info=exc_info)
        self._json(status, body)

    def _json(self, status: int, payload: Mapping[str, Any]) -> None:
        self.set_status(status)
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(payload))


class ToolHandler(HashlineHandler):
    """One catalog tool: its arguments in, the outcome's reply (or error) out."""

    spec: ClassVar[ToolSpec]

    async def run(
        self, arguments: Callable[[], Awaitable[Mapping[str, Any]]], source: Source
    ) -> None:
        try:
            raw, agent = await arguments(), self.agent
        except HashlineError as err:
            self.send_error(err.status, exc_info=sys.exc_info())
            return
        workspace = self.service.workspace
        outcome: ToolOutcome = await run_tool(
            workspace, self.spec.name, raw, agent=agent, source=source
        )
        self._json(outcome.status if outcome.is_error else 200, outcome.reply)


class QueryToolHandler(ToolHandler):
    """A tool whose arguments travel in the query string (GET)."""

    @web.authenticated
    @authorized
    async def get(self) -> None:
        await self.run(self.query, Source.QUERY)


class BodyToolHandler(ToolHandler):
    """A tool whose arguments travel in a JSON body (POST)."""

    @web.authenticated
    @authorized
    async def post(self) -> None:
        await self.run(self.arguments, Source.JSON)

    async def arguments(self) -> dict[str, Any]:
        edits = self.spec.request is EditRequest  # only an edit's text is counted as edits
        return await self.body(self.service.settings.max_edits_per_patch if edits else None)


class RunToolHandler(ToolHandler):
    """`POST run` and `POST eval`: authorized on contents write (a run writes the outputs into
    the notebook) and on kernels execute (code runs in the notebook's kernel)."""

    @web.authenticated
    @authorized
    @authorized("execute", resource="kernels")
    async def post(self) -> None:
        await self.run(self.body, Source.JSON)


# Tools whose routes need more than the contents permission of their HTTP method.
_SPECIAL_HANDLERS: dict[str, type[ToolHandler]] = {
    "notebook_run": RunToolHandler,
    "notebook_eval": RunToolHandler,
    "notebook_kernel": RunToolHandler,
}


def tool_handler(spec: ToolSpec) -> type[ToolHandler]:
    """The handler class of one catalog tool (only its own HTTP method is routed)."""
    base = _SPECIAL_HANDLERS.get(spec.name) or (
        QueryToolHandler if spec.rest.http_method == "GET" else BodyToolHandler
    )
    verb = spec.rest.http_method.lower()
    # The verb is the class's own (as in a hand-written handler), so route tables list it.
    namespace = {"spec": spec, verb: vars(base)[verb]}
    return type(f"{spec.rest.route.title()}Handler", (base,), namespace)


class RevertHandler(HashlineHandler):
    """`POST revert`: undo recorded edits; the reply (or refusal) is the workspace's."""

    @web.authenticated
    @authorized
    async def post(self) -> None:
        try:
            body, agent = await self.body(), self.agent
            outcome = await self.service.revert(body, agent)
        except HashlineError as err:
            self.send_error(err.status, exc_info=sys.exc_info())
            return
        self._json(outcome.status if outcome.is_error else 200, outcome.reply)


class ProposalsHandler(HashlineHandler):
    """`GET proposals?path=`: the proposals kept for review (of one file), newest first."""

    @web.authenticated
    @authorized
    async def get(self) -> None:
        path = (await self.query()).get("path") or None
        await self.respond(lambda: self.service.proposals(path))


class DecisionHandler(HashlineHandler):
    """`POST proposals/ID/accept|reject`: a person's decision on one proposal (`accept`)."""

    accept: ClassVar[bool] = True

    @web.authenticated
    @authorized
    async def post(self, proposal_id: str | None = None) -> None:
        try:
            body, agent = await self.body(), self.agent
            number = proposal_number(proposal_id) if proposal_id is not None else None
            outcome = await self.service.decide(body, agent, accept=self.accept, proposal=number)
        except HashlineError as err:
            self.send_error(err.status, exc_info=sys.exc_info())
            return
        self._json(outcome.status if outcome.is_error else 200, outcome.reply)


class RejectHandler(DecisionHandler):
    accept = False
    post = DecisionHandler.post  # the verb is the class's own, so route tables list it


class ReviewHandler(HashlineHandler):
    """`GET review` / `POST review`: review mode, for everyone and per agent."""

    @web.authenticated
    @authorized
    async def get(self) -> None:
        await self.respond(self.service.review_mode)

    @web.authenticated
    @authorized
    async def post(self) -> None:
        async def post_review() -> Mapping[str, Any]:
            named = agent_header(self.request.headers.get(AGENT_HEADER)) is not None
            return self.service.set_review_mode(await self.body(), named_agent=named)

        await self.respond(post_review)


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
        async def post_session() -> Mapping[str, Any]:
            return self.service.post_session(parse_session_body(await self.body()))

        await self.respond(post_session)


class SessionHandler(HashlineHandler):
    @web.authenticated
    @authorized
    async def get(self, session_id: str) -> None:
        await self.respond(lambda: self.service.get_session(session_id))


ROUTES: tuple[tuple[str, type[HashlineHandler]], ...] = (
    *((spec.rest.route, tool_handler(spec)) for spec in CATALOG),
    ("revert", RevertHandler),
    ("proposals", ProposalsHandler),
    (r"proposals/(?P<proposal_id>[^/]+)/accept", DecisionHandler),
    (r"proposals/(?P<proposal_id>[^/]+)/reject", RejectHandler),
    ("proposals/accept-all", DecisionHandler),
    ("proposals/reject-all", RejectHandler),
    ("review", ReviewHandler),
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
