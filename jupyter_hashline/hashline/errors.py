"""The one error tree of the engine.

Every failure the engine reports is a `HashlineError`: a `ValueError` carrying the text an agent
should read (`message`), a stable machine name (`kind`) and an HTTP status hint (`status`). The
engine never returns error dicts and never raises HTTP errors; adapters (the server, the CLI,
MCP) map this tree in exactly one place each.
"""

from __future__ import annotations

from typing import ClassVar


class HashlineError(ValueError):
    """Base of every engine error; `str(err)` is the agent-readable message."""

    status: ClassVar[int] = 400
    kind: ClassVar[str] = "hashline_error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class PatchSyntaxError(HashlineError):
    """The edit text or JSON form could not be parsed (unknown verb, missing header, ...)."""

    kind = "patch_syntax"


class AnchorError(HashlineError):
    """Line numbers that do not fit the tagged text: 0, reversed, out of range, overlapping."""

    kind = "bad_anchor"


class AmbiguousEditError(HashlineError):
    """An edit with two readings (indentation that parses either way, line numbers that look
    counted after the call's own edits, an elision marker): nothing written, the message says
    what to resend."""

    kind = "ambiguous_edit"


class CodeDoesNotParseError(HashlineError):
    """Under the strict syntax check: an edit that would turn parsing code into code that
    does not parse."""

    status = 422
    kind = "does_not_parse"


class NotFoundError(HashlineError):
    """A file that does not exist. `.path` names it."""

    status = 404
    kind = "not_found"

    def __init__(self, path: str, message: str | None = None) -> None:
        super().__init__(message or f"File not found: {path}")
        self.path = path


class PathOutsideRootError(HashlineError):
    """A path that escapes the filesystem's root (`..`, absolute, symlink, encoded)."""

    status = 403
    kind = "path_outside_root"


class StaleTagError(HashlineError):
    """The file changed since the agent's read and the edit could not be rebased safely."""

    status = 409
    kind = "stale_tag"


class UnknownTagError(StaleTagError):
    """A tag this session's store never issued for that path."""

    kind = "unknown_tag"


class OverwriteRefusedError(StaleTagError):
    """A whole-file write over an existing file without the tag of the version it replaces
    (and without an allowed `overwrite`)."""

    kind = "tag_required"


class UnseenLinesError(HashlineError):
    """An edit anchored on lines the agent was never shown."""

    status = 409
    kind = "unseen_lines"


class RepeatedNoOpError(HashlineError):
    """The same patch changed nothing several times in a row: the agent must re-read."""

    status = 409
    kind = "repeated_noop"


class TooLargeError(HashlineError):
    """A patch or file over a configured size limit."""

    status = 413
    kind = "too_large"


class NotTextError(HashlineError):
    """A file that is not UTF-8 text (binary, undecodable) or text that cannot be written."""

    status = 415
    kind = "not_text"


class WriteFailedError(HashlineError):
    """The storage refused or failed a write; the previous content is intact."""

    status = 500
    kind = "write_failed"


class StoreBusyError(HashlineError):
    """The snapshot store stayed locked by another process past its timeout; nothing changed."""

    status = 503
    kind = "store_busy"


def is_not_found(err: BaseException | None) -> bool:
    """True when `err` or anything in its `__cause__`/`__context__` chain means "no such file"."""
    seen: set[int] = set()
    while err is not None and id(err) not in seen:
        if isinstance(err, (NotFoundError, FileNotFoundError)):
            return True
        seen.add(id(err))
        err = err.__cause__ or err.__context__
    return False
