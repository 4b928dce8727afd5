"""Server-side errors and the ONE place where errors become HTTP responses.

Invariants:
- Every error a hashline route reports has the body `{"error": <kind>, "message": <text>}`,
  where `message` tells an agent what to do next.
- Engine errors (`HashlineError` and subclasses, including the server-side ones below) keep
  their own status hint and kind. Tornado `HTTPError`s (authentication, authorization, unknown
  methods) keep their status and get a kind named after it. Anything else is a 500 whose
  message hides internals (the traceback goes to the server log, not to the agent).
"""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

from tornado.web import HTTPError

from ..hashline import HashlineError


class BadRequestError(HashlineError):
    """A request the server cannot parse: malformed JSON, missing or mistyped fields."""

    kind = "bad_request"


class PermissionDeniedError(HashlineError):
    """Storage refuses access: the file is not writable, or the contents manager said 403."""

    status = 403
    kind = "permission_denied"


class HiddenPathError(HashlineError):
    """A hidden file or folder, on a server that does not serve hidden files."""

    status = 403
    kind = "hidden_path"


class PathNotAllowedError(HashlineError):
    """A path outside the prefixes this server (or its workspace overlay) allows."""

    status = 403
    kind = "path_not_allowed"


class ReadOnlyError(HashlineError):
    """A write to a server configured as read-only."""

    status = 403
    kind = "read_only"


class StorageError(HashlineError):
    """The contents manager failed in a way that is not the agent's doing."""

    status = 500
    kind = "storage_error"


class SessionNotFoundError(HashlineError):
    """No agent session with that id is registered."""

    status = 404
    kind = "session_not_found"


class ReviewForbiddenError(HashlineError):
    """An agent's request to turn review mode off (only people turn it off)."""

    status = 403
    kind = "review_forbidden"


_HTTP_KINDS = {
    400: "bad_request",
    401: "unauthenticated",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "too_large",
}


def _http_kind(status: int) -> str:
    if status in _HTTP_KINDS:
        return _HTTP_KINDS[status]
    try:
        return HTTPStatus(status).phrase.lower().replace(" ", "_")
    except ValueError:
        return f"http_{status}"


def error_response(exc: BaseException | None, status: int) -> tuple[int, dict[str, Any]]:
    """The HTTP status and JSON body for an exception raised while serving a request."""
    if isinstance(exc, HashlineError):
        return exc.status, {"error": exc.kind, "message": exc.message}
    if isinstance(exc, HTTPError):
        status = exc.status_code
        message = exc.log_message or exc.reason or HTTPStatus(status).phrase
        if status == 403 and not exc.log_message:
            message = (
                "Forbidden: send this server's token (Authorization: token ...) or a login; "
                "behind JupyterHub, a token of the server's own user (or one with access to "
                "its servers): another user's token is refused."
            )
        return status, {"error": _http_kind(status), "message": str(message)}
    if status < 500 and exc is None:
        return status, {"error": _http_kind(status), "message": HTTPStatus(status).phrase}
    return 500, {
        "error": "internal",
        "message": "The server failed while handling this request (its log has the details). "
        "Re-read the file to see its current state before retrying.",
    }
