"""API paths as the server extension accepts them: relative to the server root, confined to it.

Invariants:
- `api_path(raw)` returns a path with no leading or trailing `/`, no empty or `.` segments,
  and never a `..` segment; a leading `/` means the server root, so `/a.ipynb` is `a.ipynb`.
- Escapes are refused, never repaired: `..` segments, backslashes, NUL characters and
  URL-encoded dots, slashes, backslashes or NULs (a path is decoded exactly once, by the HTTP
  layer; a second encoding is an attempt to slip past this check).
- `is_hidden_path` is the API-level rule (a segment starting with `.`); the contents manager
  adds its own, OS-level one.
- `confined_os_path` resolves symlinks and checks the real path stays under the real root.
"""

from __future__ import annotations

import os
import re

from ..hashline import HashlineError, PathOutsideRootError

_ENCODED_ESCAPE = re.compile(r"%(2e|2f|5c|00)", re.IGNORECASE)


class InvalidPathError(HashlineError):
    """A path that is empty or contains characters a file path may not hold."""

    kind = "bad_path"


def api_path(raw: str) -> str:
    """Normalize a request path to an API path under the root, refusing any escape."""
    if "\x00" in raw:
        raise InvalidPathError(f"Path {raw!r} contains a NUL character. Send a plain file path.")
    if "\\" in raw:
        raise PathOutsideRootError(
            f"Path {raw!r} contains a backslash. Use '/' between folders, relative to the root."
        )
    if _ENCODED_ESCAPE.search(raw):
        raise PathOutsideRootError(
            f"Path {raw!r} contains a URL-encoded '.', '/', '\\' or NUL. Send the decoded path."
        )
    segments = [s for s in raw.split("/") if s not in ("", ".")]
    if ".." in segments:
        raise PathOutsideRootError(
            f"Path {raw!r} uses '..'. Paths are relative to the server root and stay inside it."
        )
    if not segments:
        raise InvalidPathError("The path is empty. Name a file relative to the server root.")
    return "/".join(segments)


def is_hidden_path(path: str) -> bool:
    """Whether any segment of the API path starts with a dot."""
    return any(segment.startswith(".") for segment in path.split("/"))


def confined_os_path(root: str, path: str) -> str:
    """The real OS path of API `path` under `root`; refuses symlinks that lead out of it."""
    real_root = os.path.realpath(root)
    real = os.path.realpath(os.path.join(real_root, *path.split("/")))
    if real != real_root and not real.startswith(real_root.rstrip(os.sep) + os.sep):
        raise PathOutsideRootError(
            f"Path {path!r} resolves (through a symlink) outside the server root. "
            "Only files inside the root can be read or edited."
        )
    return real
