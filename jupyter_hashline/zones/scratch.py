"""The per-turn scratch zone: what this turn adds after the log and then forgets.

A turn stages a pending user message, a working set (paths or cell ids in focus) and notes.
The scratch renders them as the tail of the request: the pending user message, with the working
set and notes appended as one extra text block; or, with no pending message, one user message
carrying only that block. `clear()` at every turn boundary empties it.

Invariants: the scratch never reaches the log by itself (the caller pushes what should persist,
usually `take_pending_user()`); its rendered messages are frozen and serialized once per change,
not once per request.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .canonical import FrozenDict
from .errors import MessageFormatError
from .log import SerializedMessage, freeze_message, serialize_all

__all__ = ["TurnScratch"]


class TurnScratch:
    """Per-turn staging: pending user message, working set, notes."""

    __slots__ = ("_entries", "_notes", "_pending", "_working_set")

    def __init__(self) -> None:
        self._pending: FrozenDict | None = None
        self._working_set: list[str] = []
        self._notes: list[str] = []
        self._entries: tuple[SerializedMessage, ...] | None = None

    # -- staging ------------------------------------------------------------------------------

    def stage_user(self, message: str | Mapping[str, Any]) -> FrozenDict:
        """Stage this turn's user message (text or a neutral message with role 'user')."""
        if isinstance(message, str):
            message = {"role": "user", "content": message}
        frozen = freeze_message(message, "staged user message")
        if frozen["role"] != "user":
            raise MessageFormatError(
                "stage_user() takes a user message; push assistant messages to the log"
            )
        self._pending = frozen
        self._entries = None
        return frozen

    def take_pending_user(self) -> FrozenDict | None:
        """Remove and return the pending user message (to push it into the log)."""
        pending, self._pending = self._pending, None
        self._entries = None
        return pending

    def set_working_set(self, items: Iterable[str]) -> None:
        self._working_set = [str(item) for item in items]
        self._entries = None

    def add_note(self, text: str) -> None:
        self._notes.append(str(text))
        self._entries = None

    def clear(self) -> None:
        """Forget everything staged (call at each turn boundary)."""
        self._pending = None
        self._working_set = []
        self._notes = []
        self._entries = None

    # -- reading ------------------------------------------------------------------------------

    @property
    def pending_user(self) -> FrozenDict | None:
        return self._pending

    @property
    def working_set(self) -> tuple[str, ...]:
        return tuple(self._working_set)

    @property
    def notes(self) -> tuple[str, ...]:
        return tuple(self._notes)

    def __len__(self) -> int:
        return len(self.entries())

    def __bool__(self) -> bool:
        return bool(self._pending or self._working_set or self._notes)

    def messages(self) -> tuple[FrozenDict, ...]:
        """The tail messages this scratch adds to a request."""
        return tuple(entry.message for entry in self.entries())

    def entries(self) -> tuple[SerializedMessage, ...]:
        """The tail messages serialized (offsets relative to the start of the scratch zone)."""
        if self._entries is None:
            self._entries = tuple(serialize_all(self._render()))
        return self._entries

    def _render(self) -> list[FrozenDict]:
        note = self._note_text()
        if self._pending is None:
            if not note:
                return []
            return [freeze_message({"role": "user", "content": [{"type": "text", "text": note}]})]
        if not note:
            return [self._pending]
        content = self._pending["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
        blocks.append({"type": "text", "text": note})
        return [freeze_message({**self._pending, "content": blocks})]

    def _note_text(self) -> str:
        lines = []
        if self._working_set:
            lines.append("Working set: " + ", ".join(self._working_set))
        if self._notes:
            lines.append("Notes:")
            lines.extend(f"- {note}" for note in self._notes)
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        entries = self.entries()
        return {
            "messages": len(entries),
            "bytes": entries[-1].end if entries else 0,
            "pending_user": self._pending is not None,
            "working_set": list(self._working_set),
            "notes": list(self._notes),
        }
