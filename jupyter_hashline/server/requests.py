"""Parse REST request inputs: JSON bodies, query strings, the agent header, session posts.

Pure: no tornado, no I/O. Tool arguments are validated by `tools.validate` (one validator
for every surface); this module only turns the transport into raw arguments. A malformed body
is a `BadRequestError` saying what to send instead (bodies nested deeper than
`MAX_JSON_DEPTH` included, so nothing recurses near the interpreter's limit later);
`TooLargeError` for oversized bodies.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..hashline import TooLargeError, too_many_edits
from ..tools import ReviewMode, UnknownProposalError
from .errors import BadRequestError

try:  # a declared dependency; the standard library alone still parses every body
    import orjson as _orjson
except ImportError:  # pragma: no cover - where orjson cannot be installed
    _orjson = None  # type: ignore[assignment]

QueryArgs = Mapping[str, list[bytes]]
MAX_AGENT_CHARS = 64
MAX_JSON_DEPTH = 64
"""Deepest nesting of arrays/objects a request body may have: every hashline request fits
in a few levels, and a bound keeps parsing and re-serializing (session snapshots are served
back) far from the interpreter's recursion limit."""


@dataclass(frozen=True, slots=True)
class SessionPost:
    session_id: str | None
    label: str | None
    snapshot: Any


def _one(args: QueryArgs, name: str) -> str | None:
    values = args.get(name)
    if not values:
        return None
    try:
        return values[-1].decode("utf-8")
    except UnicodeDecodeError:
        raise BadRequestError(f"Query argument {name!r} is not UTF-8.") from None


def query_arguments(args: QueryArgs) -> dict[str, str]:
    """The last value of every query argument, as text (tools validate them)."""
    return {name: value for name in args if (value := _one(args, name)) is not None}


def parse_limit_query(args: QueryArgs) -> int | None:
    value = _one(args, "limit")
    if value is None or value == "":
        return None
    if not (value.isascii() and value.isdigit()) or int(value) < 1:  # not "³" or "٣"
        raise BadRequestError(f"Query argument 'limit' must be a whole number >= 1, not {value!r}.")
    return int(value)


def agent_header(value: str | None) -> str | None:
    """The agent named by an `X-Hashline-Agent` header (None when absent or blank)."""
    if value is None or not value.strip():
        return None
    name = value.strip()
    if len(name) > MAX_AGENT_CHARS or not name.isprintable():
        raise BadRequestError(
            f"The X-Hashline-Agent header must be 1 to {MAX_AGENT_CHARS} printable "
            "characters naming the agent (e.g. X-Hashline-Agent: reviewer-1)."
        )
    return name


def json_object(body: bytes, max_bytes: int, max_edits: int | None = None) -> dict[str, Any]:
    """The request body as a JSON object, refusing bodies over `max_bytes`, and before any
    parsing, bodies that carry more than `max_edits` edit operations (see `edit_count`)."""
    if len(body) > max_bytes:
        raise TooLargeError(
            f"The request body is {len(body)} bytes; this server accepts at most {max_bytes}. "
            "Split the edit into smaller patches."
        )
    if max_edits is not None and (count := edit_count(body)) > max_edits:
        raise TooLargeError(too_many_edits(count, max_edits))
    try:
        value = _loads(body or b"null")
    except RecursionError:  # nested past the interpreter's own limit
        raise _too_deep() from None
    except (ValueError, UnicodeDecodeError) as err:
        raise BadRequestError(f"The request body is not valid JSON: {err}.") from None
    if not isinstance(value, dict):
        raise BadRequestError("The request body must be a JSON object.")
    _check_depth(value, MAX_JSON_DEPTH)
    return value


_VERB_STARTS = tuple(
    start + verb + b" " for start in (b"\\n", b'"') for verb in (b"replace", b"delete", b"insert")
)
"""How an edit text's verb line begins inside a JSON string: after an escaped line break, or
at the string's opening quote."""


def edit_count(body: bytes) -> int:
    """The edit operations a JSON request body carries, counted in its bytes without parsing
    them (parsing 400,000 small objects holds the interpreter for a third of a second) and with
    `bytes.count` alone (a regular expression over 13 MB holds it for as long): its `"op"` keys
    (the JSON form) and the verb lines of edit text in its strings (the text form), as the
    engine's parser counts them, except that indented verb lines are not counted here and that
    prose around an edit wrapped in chat is (verb lines there are an agent's mistake)."""
    return body.count(b'"op"') + sum(body.count(start) for start in _VERB_STARTS)


def _loads(body: bytes) -> Any:
    """`json.loads(body)`, parsed by orjson when it can (several times faster, and this runs on
    the server's event loop); what orjson refuses (lone surrogates, NaN, integers past 64 bits,
    nesting past 1,024) goes to `json.loads`, so every body means what the standard library
    says it means."""
    if _orjson is not None:
        try:
            return _orjson.loads(body)
        except _orjson.JSONDecodeError:
            pass
    return json.loads(body)


def _too_deep() -> BadRequestError:
    return BadRequestError(
        f"The request body is nested more than {MAX_JSON_DEPTH} levels deep; no hashline "
        "request needs that. Send a flatter JSON body."
    )


def _check_depth(value: object, limit: int) -> None:
    """Refuse JSON nested deeper than `limit` arrays/objects: one level at a time, keeping
    only the containers (no recursion; a body of 10^5 small objects costs one pass of two
    comprehensions per level, not a stack push and pop per value)."""
    level: list[Any] = [value] if type(value) in _CONTAINERS else []
    depth = 0
    while level:
        if depth >= limit:
            raise _too_deep()
        level = [
            child
            for item in level
            for child in (item.values() if type(item) is dict else item)
            if type(child) in _CONTAINERS
        ]
        depth += 1


_CONTAINERS = (dict, list)  # what json.loads makes of objects and arrays


def _string_field(body: Mapping[str, Any], name: str) -> str:
    value = body.get(name)
    if not isinstance(value, str):
        raise BadRequestError(f"Field {name!r} must be a string.")
    return value


def parse_session_body(body: Mapping[str, Any]) -> SessionPost:
    if "snapshot" not in body:
        raise BadRequestError('Send {"id"?, "label"?, "snapshot": <Session.snapshot()>}.')
    session_id = _string_field(body, "id") if body.get("id") is not None else None
    label = _string_field(body, "label") if body.get("label") is not None else None
    return SessionPost(session_id, label, body["snapshot"])


def review_mode_request(body: Mapping[str, Any]) -> tuple[ReviewMode, str | None]:
    """The mode `POST review` sets, and for whom: `{"mode": "on"|"off", "agent"?: NAME}`."""
    unknown = sorted(set(body) - {"mode", "agent"})
    mode = body.get("mode")
    if unknown or mode not in ("on", "off"):
        raise BadRequestError('Send {"mode": "on" | "off", "agent"?: NAME}. Nothing was changed.')
    agent = body.get("agent")
    if agent is not None and (not isinstance(agent, str) or agent_header(agent) is None):
        raise BadRequestError("`agent` must be an agent's name. Nothing was changed.")
    return ReviewMode(mode), agent.strip() if agent is not None else None


def proposal_number(text: str) -> int:
    """The proposal id of a route (`proposals/ID/accept`); anything else names none."""
    if not text.isdigit() or len(text) > 12 or int(text) < 1:
        raise UnknownProposalError(f"No proposal {text[:40]!r} here: ids are whole numbers.")
    return int(text)
