"""Errors of the three-zone prompt model.

`zones` is stdlib-only, so it does not import the engine's `HashlineError` tree; its errors are
plain `ValueError`s with a stable `kind`, and each message says what to do next. Mutating a
frozen message or the log raises `TypeError`/`AttributeError` instead (see `canonical`, `log`).
"""

from __future__ import annotations

from typing import ClassVar

__all__ = ["ByteInvariantError", "MessageFormatError", "ZonesError"]


class ZonesError(ValueError):
    """Base of the zones errors; `str(err)` is the text to show an agent or a person."""

    kind: ClassVar[str] = "zones_error"


class MessageFormatError(ZonesError):
    """A message, tool or request that does not fit the provider-neutral shape."""

    kind = "message_format"


class ByteInvariantError(ZonesError):
    """Request N's serialized messages are not a byte prefix of request N+1's, and no rebuild
    or prefix change was recorded between them. `.breach` is the `PrefixBreak`."""

    kind = "byte_invariant"

    def __init__(self, message: str, breach: object) -> None:
        super().__init__(message)
        self.breach = breach
