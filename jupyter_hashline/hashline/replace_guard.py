"""The stale check of a whole-file write: replacing a file needs the tag of what it replaces.

`check_replace` decides whether `write(path, content, tag=..., overwrite=...)` may replace the
file as it is now (`live`: its text, or None when there is no such file).

Invariants:
- A new file needs neither a tag nor `overwrite`; a tag sent for a file that is gone is stale
  (the agent believed it existed).
- Over an existing file the write lands only when `tag` names the live text (the store issued
  that tag, and its snapshot is exactly the live text: a tag is an address, never proof), or
  when `overwrite` is true and overwriting is allowed. Anything else raises a `StaleTagError`
  (status 409) whose message carries the current header; the live text is then recorded so
  that header's tag is known. Nothing is written in any refused case.
"""

from __future__ import annotations

from .errors import OverwriteRefusedError, StaleTagError
from .messages import header
from .store import SnapshotStore


def check_replace(
    store: SnapshotStore,
    path: str,
    key: str,
    live: str | None,
    *,
    tag: str | None,
    overwrite: bool,
    allow_overwrite: bool,
) -> None:
    """Raise unless this whole-file write may land (see the module docstring)."""
    if live is None:
        if tag is not None:
            raise StaleTagError(
                f"Write refused: {path} is gone since your read (tag {tag}); nothing was "
                "written. To create it again, send the write without a tag."
            )
        return
    if tag is not None:
        snapshot = store.by_hash(key, tag)
        if snapshot is not None and snapshot.text == live:
            return
        current = header(path, store.record(key, live))
        raise StaleTagError(
            f"Write refused: {path} changed since your read (tag {tag} is not its current "
            f"text); nothing was written. Current header: {current}. Read it again and send "
            "the write with the new tag, or use notebook_edit to change only what you mean to."
        )
    if overwrite and allow_overwrite:
        return
    current = header(path, store.record(key, live))
    if overwrite:
        raise OverwriteRefusedError(
            f"Write refused: {path} exists and overwriting without a tag is turned off here "
            "(an allow_overwrite setting is false: the server's or its workspace overlay's); "
            f"nothing was written. Current header: {current}. Read it and send the write with "
            "the tag of that read."
        )
    raise OverwriteRefusedError(
        f"Write refused: {path} exists, and replacing it needs the tag of the version you "
        f"replace (send tag, from your latest read) or overwrite: true; nothing was written. "
        f"Current header: {current}. Prefer notebook_edit to change part of a file."
    )
