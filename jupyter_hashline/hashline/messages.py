"""The texts an agent reads when the engine refuses an edit, and the read view's rows.

Invariants:
- Every rejection says that nothing was written, shows the current `[path#TAG]` header when
  there is one, and ends with what to do next.
- Numbered rows look exactly like read-view rows (`N:text`); rows marked changed start with
  `*`, the others with a space, so the numbers line up.
- Revealed lines are cut at `REVEAL_COLUMNS` columns; at most `REVEAL_MAX_LINES` are shown.
- Pure string building; no I/O.
"""

from __future__ import annotations

import operator
import threading
from collections.abc import Iterable, Mapping, Sequence

REVEAL_MAX_LINES = 40
REVEAL_COLUMNS = 512
_PREFIX_CACHE_MAX = 1_000_000
_row_prefixes: list[str] = []
_prefix_lock = threading.Lock()


def _prefixes(first: int, last: int) -> list[str]:
    """`N:` for N in first..last, from a shared cache (building rows is the read's hot path)."""
    if last > _PREFIX_CACHE_MAX:
        return [f"{n}:" for n in range(first, last + 1)]
    if last > len(_row_prefixes):
        with _prefix_lock:
            start = len(_row_prefixes) + 1
            _row_prefixes.extend([f"{n}:" for n in range(start, last + 1)])
    return _row_prefixes[first - 1 : last]


def header(path: str, tag: str) -> str:
    return f"[{path}#{tag}]"


def spans(numbers: Iterable[int]) -> str:
    """`3, 7..9, 12` for {3, 7, 8, 9, 12}."""
    ordered = sorted(set(numbers))
    parts: list[str] = []
    start = prev = None
    for n in ordered:
        if prev is not None and n == prev + 1:
            prev = n
            continue
        if start is not None:
            parts.append(_span(start, prev))
        start = prev = n
    if start is not None:
        parts.append(_span(start, prev))
    return ", ".join(parts)


def _span(start: int, end: int | None) -> str:
    return str(start) if end is None or end == start else f"{start}..{end}"


def view_rows(
    lines: Sequence[str], shown: Iterable[int], annotations: Mapping[int, Sequence[str]]
) -> list[str]:
    """`N:text` rows for the shown lines, each followed by its annotation rows."""
    if isinstance(shown, range) and shown.step == 1:
        if not shown:
            return []
        first, last = shown.start, shown.stop - 1
        rows = list(map(operator.add, _prefixes(first, last), lines[first - 1 : last]))
        return _annotated(rows, first, last, annotations) if annotations else rows
    if not annotations:
        return [f"{n}:{lines[n - 1]}" for n in shown]
    rows = []
    for n in shown:
        rows.append(f"{n}:{lines[n - 1]}")
        rows.extend(annotations.get(n, ()))
    return rows


def _annotated(
    rows: list[str], first: int, last: int, annotations: Mapping[int, Sequence[str]]
) -> list[str]:
    """The rows of lines `first..last` with each line's annotation rows after it (one slice
    per annotated line, not a step per line)."""
    out: list[str] = []
    done = first
    for number in sorted(n for n in annotations if first <= n <= last):
        out.extend(rows[done - first : number - first + 1])
        out.extend(annotations[number])
        done = number + 1
    out.extend(rows[done - first :])
    return out


def marked_rows(lines: Sequence[str], shown: Sequence[int], changed: Iterable[int]) -> list[str]:
    """Context rows with `*` before the changed ones; `...` between gaps."""
    marked = set(changed)
    rows: list[str] = []
    previous = None
    for n in shown:
        if previous is not None and n > previous + 1:
            rows.append(" ...")
        rows.append(f"{'*' if n in marked else ' '}{n}:{lines[n - 1]}")
        previous = n
    return rows


def stale_message(
    path: str, reason: str, current: str, rows: Sequence[str], any_marked: bool
) -> str:
    lines = [
        f"Edit rejected: {path} changed since your read, and {reason}. Nothing was written. "
        f"Current header: {current}"
    ]
    lines.extend(rows or ["(no lines to show here: read the file again to see it as it is now)"])
    legend = "(* = changed since your read) " if any_marked else ""
    lines.append(
        f"{legend}Re-read those lines (or the file) and send the edit again with the new header."
    )
    return "\n".join(lines)


TAGS_KEPT = "Tags here are kept in"
CHOOSE_STORE = "whichever setting names its file"
"""How a store's file is chosen, as advice names it when the surface that opened the store did
not say (a store's `choose_file`: the server names its setting, the command line its flag)."""


def another_store(choose: str = CHOOSE_STORE) -> str:
    return (
        "a read through another process or server with a store of its own (a lab and an "
        "agent's --root process, two named servers) is not known here, nor a tag older than "
        f"the store keeps. To share tags, give both one store ({choose})."
    )


def unknown_tag_message(
    path: str, tag: str, current: str, rows: Sequence[str], where: str = "", choose: str = ""
) -> str:
    lines = [
        f"Edit rejected: hash #{tag} is not from this session for {path} (no read here issued "
        f"it, or it is too old). Nothing was written. Current header: {current}"
    ]
    if where:
        lines.append(f"{TAGS_KEPT} {where}: {another_store(choose or CHOOSE_STORE)}")
    if rows:
        lines.append("The current text at the lines your edit names:")
        lines.extend(rows)
    lines.append(
        "Read the file (or the lines you need) and send the edit again with the current header."
    )
    return "\n".join(lines)


def reveal_rows(lines: Sequence[str], numbers: Sequence[int]) -> tuple[list[str], bool]:
    """Rows for up to `REVEAL_MAX_LINES` lines, cut at `REVEAL_COLUMNS`; and whether any cut."""
    truncated = len(numbers) > REVEAL_MAX_LINES
    rows = []
    for n in numbers[:REVEAL_MAX_LINES]:
        text = lines[n - 1]
        if len(text) > REVEAL_COLUMNS:
            text = text[:REVEAL_COLUMNS] + f"… (cut at {REVEAL_COLUMNS} columns)"
            truncated = True
        rows.append(f"{n}:{text}")
    return rows, truncated


def unseen_message(
    path: str, current: str, unseen: Sequence[int], rows: Sequence[str], truncated: bool
) -> str:
    lines = [
        f"Edit rejected: your edit to {path} names line(s) {spans(unseen)} that you were never "
        f"shown under {current}. Nothing was written. Here they are:"
    ]
    lines.extend(rows)
    if truncated:
        lines.append(
            f"(Only part of those lines is shown above: at most {REVEAL_MAX_LINES} lines, "
            f"{REVEAL_COLUMNS} columns each.) Read the lines you need with offset/limit, then "
            "send the edit again under the header that read returns, numbering lines as it "
            "shows them."
        )
    else:
        lines.append(
            f"Check your edit against these lines and send it again with the same header {current}."
        )
    return "\n".join(lines)


def too_many_edits(count: int, limit: int) -> str:
    return (
        f"The edit has {count:,} edit operations, over the limit of {limit:,} per patch "
        "(max_edits_per_patch); nothing was written. Send it as several smaller patches, or "
        "replace the whole file with the write tool."
    )


def view_too_large(path: str, count: int, limit: int) -> str:
    return (
        f"Reading {path} would show {count:,} lines, over the limit of {limit:,} lines per read "
        "(max_view_lines); nothing was shown. Read a part: offset and limit (e.g. offset=1, "
        f"limit={limit}), or cells for a notebook."
    )
