"""Validate a section's edits against a text, all at once, then apply them bottom-up.

Invariants:
- Every line number refers to the text as given and never shifts while the edits apply.
- All edits are validated before any is applied, and every problem is reported at once in one
  `AnchorError`: line 0, reversed ranges, lines past the end, two edits consuming one line, an
  insert anchored strictly inside a replaced or deleted range.
- Placement (the result of applying bottom-up): at one line come the inserts before it, then
  its replacement rows (or the line itself), then the inserts after it; `insert head` rows open
  the text and `insert tail` rows close it; several inserts at one point keep patch order.
- The final-newline state is kept: a text without a final newline keeps having none (rows
  added at its tail join with a newline between, none after); an empty text counts as having
  one, so rows added to it end with a newline.
- Repairs are never silent: boundary echoes dropped and pasted read prefixes stripped each add
  a warning naming the edit and the lines; so does every repair of forgive.py (indentation,
  tabs, trailing spaces in Python code), which also refuses the edits that have two readings.
- With a `SpanFinder`, `parse_problems` lists the Python spans the edit changed that parsed
  before and no longer do (syntax.py); what to do about them is the caller's choice.
- Pure: text and edits in, `AppliedEdits` out.
"""

from __future__ import annotations

import itertools
import re
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from .edits import Edit, EditOp
from .errors import AnchorError
from .forgive import forgive_edits
from .syntax import ParseProblem, SpanFinder, broken_spans
from .text import split_lines

_READ_PREFIX = re.compile(r"(\d+):")
_MAX_ECHO_ROWS = 20
_QUOTE_COLUMNS = 60


@dataclass(frozen=True, slots=True)
class AppliedEdits:
    """The outcome of applying one section's edits to a text.

    `regions` are the changed spans in NEW numbering, 1-based and inclusive; a pure deletion is
    an empty span `(k, k - 1)` at the line that now follows it. `kept` lists the unchanged runs
    `(old_first, old_last, new_first)`, so an old line number can be mapped to the new text.
    `lines` are the new text's lines (`split_lines(text)`, built anyway), so no caller splits
    the text again.
    """

    text: str
    changed: bool
    warnings: tuple[str, ...]
    regions: tuple[tuple[int, int], ...]
    kept: tuple[tuple[int, int, int], ...]
    line_count: int
    lines: Sequence[str] = field(default=(), repr=False, compare=False)
    parse_problems: tuple[ParseProblem, ...] = ()

    @property
    def first_changed_line(self) -> int | None:
        if not self.changed or not self.regions:
            return None
        first = min(start for start, _ in self.regions)
        return max(1, min(first, self.line_count))

    def map_line(self, old_line: int) -> int | None:
        """Where an unchanged old line now is, or None if an edit consumed it."""
        index = bisect_right(self.kept, old_line, key=_run_start) - 1
        if index < 0:
            return None
        old_first, old_last, new_first = self.kept[index]
        return new_first + old_line - old_first if old_line <= old_last else None

    def map_lines(self, old_lines: frozenset[int] | set[int]) -> frozenset[int]:
        """`map_line` of every line given, for the unchanged ones: one pass per unchanged run
        (set operations in C), never a Python step per line."""
        mapped: set[int] = set()
        for old_first, old_last, new_first in self.kept:
            run = range(old_first, old_last + 1)
            inside: Iterable[int] = (
                filter(run.__contains__, old_lines)
                if len(old_lines) < len(run)
                else old_lines.intersection(run)
            )
            shift = new_first - old_first
            mapped.update(inside if shift == 0 else map(shift.__add__, inside))
        return frozenset(mapped)


def apply_edits(
    text: str,
    edits: Sequence[Edit],
    *,
    repair_echo: bool = True,
    label: str = "the file",
    exact: bool = False,
    finder: SpanFinder | None = None,
) -> AppliedEdits:
    """Validate `edits` against `text` (all problems at once), then apply them.

    `label` names the file in messages (usually its `[path#TAG]` header). `exact` edits were
    computed, not written by a model (an undo): their rows are taken as they are, with no
    prefix stripping, no echo check, no forgiveness and no syntax check. `finder` says where
    a text holds Python code (forgive.py and syntax.py use it); without one, no claim.
    """
    lines = split_lines(text)
    validate_edits(edits, len(lines), label)
    warnings: list[str] = []
    if not exact:
        edits, warnings = strip_read_prefixes(edits)
        edits, echo_warnings = find_echoes(edits, lines, repair=repair_echo)
        edits, forgiven = forgive_edits(edits, lines, finder)
        warnings += echo_warnings + forgiven
    out, regions, kept = _assemble(lines, edits)
    has_final_newline = not text or text.endswith("\n")
    new_text = _joined(out, final_newline=has_final_newline)
    changed = new_text != text
    if changed:
        warnings += _unchanged_edit_notes(edits, lines)
    new_lines = out if _rows_are_lines(out, edits, has_final_newline) else split_lines(new_text)
    problems = (
        broken_spans(lines, new_lines, regions, finder)
        if finder is not None and changed and not exact
        else ()
    )
    return AppliedEdits(
        new_text, changed, tuple(warnings), regions, kept, len(out), new_lines, problems
    )


def _joined(out: list[str], *, final_newline: bool) -> str:
    """`out` joined by newlines, with one after the last row if `final_newline`: joined with
    an empty row appended for a while, so the whole text is not copied again to add it."""
    if not (out and final_newline):
        return "\n".join(out)
    out.append("")
    try:
        return "\n".join(out)
    finally:
        out.pop()


def _rows_are_lines(out: Sequence[str], edits: Sequence[Edit], final_newline: bool) -> bool:
    """Whether `out` is `split_lines` of its joined text, checked on the edits' rows alone
    (copied lines came from `split_lines`): no row holds a newline, and an empty last row
    cannot vanish because the text has no final newline to end it."""
    if any("\n" in row for edit in edits for row in edit.lines):
        return False
    return final_newline or not out or out[-1] != ""


def _run_start(run: tuple[int, int, int]) -> int:
    return run[0]


# -- validation --------------------------------------------------------------------------------


def validate_edits(edits: Sequence[Edit], line_count: int, label: str = "the file") -> None:
    """Raise one `AnchorError` listing every problem of `edits` against a text of that size."""
    problems = [p for edit in edits if (p := _range_problem(edit, line_count))]
    if not problems:
        problems = _overlap_problems(edits)
    if problems:
        listed = "\n".join(f"- {p}" for p in problems)
        raise AnchorError(
            f"Edit rejected: {len(problems)} problem(s) with the line numbers for {label} "
            f"(it has {line_count} lines). Nothing was written.\n{listed}\n"
            "Line numbers refer to the text exactly as you read it; fix them and send the edit "
            "again with the same header."
        )


def _range_problem(edit: Edit, line_count: int) -> str | None:
    name = f"`{edit.describe()}`"
    if edit.op.at_edge:
        return None
    if edit.start < 1 or edit.end < 1:
        return (
            f"{name}: line numbers start at 1 (there is no line {min(edit.start, edit.end)}); "
            "to add lines at the top use `insert head:`"
        )
    if edit.start > edit.end:
        return f"{name}: the range is reversed; write `{edit.op.value} {edit.end}..{edit.start}`"
    if edit.end > line_count:
        if line_count == 0:
            return f"{name}: the file is empty; add lines with `insert head:` or `insert tail:`"
        return (
            f"{name}: line {edit.end} is past the end (the file has {line_count} lines); "
            "to add lines at the end use `insert tail:`"
        )
    return None


def _overlap_problems(edits: Sequence[Edit]) -> list[str]:
    problems: list[str] = []
    consumers = sorted((e for e in edits if e.op.consumes), key=lambda e: (e.start, e.end))
    for first, second in itertools.pairwise(consumers):
        if second.start <= first.end:
            shared = (
                second.start
                if second.start == min(first.end, second.end)
                else (f"{second.start}..{min(first.end, second.end)}")
            )
            problems.append(
                f"`{first.describe()}` and `{second.describe()}` both consume line {shared}; "
                "combine them into one edit"
            )
    for edit in edits:
        if edit.op in (EditOp.INSERT_BEFORE, EditOp.INSERT_AFTER):
            problems.extend(_insert_inside(edit, consumers))
    return problems


def _insert_inside(insert: Edit, consumers: Sequence[Edit]) -> list[str]:
    line = insert.start
    found = []
    for edit in consumers:
        inside_before = insert.op is EditOp.INSERT_BEFORE and edit.start < line <= edit.end
        inside_after = insert.op is EditOp.INSERT_AFTER and edit.start <= line < edit.end
        if inside_before or inside_after:
            found.append(
                f"`{insert.describe()}` falls inside `{edit.describe()}`, whose lines are "
                "removed; put those rows into that edit instead"
            )
    return found


# -- repairs -----------------------------------------------------------------------------------


def strip_read_prefixes(edits: Sequence[Edit]) -> tuple[list[Edit], list[str]]:
    """Strip `N:` read-view prefixes from an edit's rows when EVERY row has one."""
    result, warnings = [], []
    for edit in edits:
        matches = [_READ_PREFIX.match(row) for row in edit.lines]
        if edit.lines and all(matches):
            rows = tuple(row[m.end() :] for row, m in zip(edit.lines, matches, strict=True) if m)
            result.append(edit.with_lines(edit.start, edit.end, rows))
            warnings.append(
                f"`{edit.describe()}`: every body row began with a read-view prefix like "
                f"`{matches[0].group(0) if matches[0] else ''}`; stripped them. Write body rows "
                "as `+text`, without line numbers."
            )
        else:
            result.append(edit)
    return result, warnings


def find_echoes(
    edits: Sequence[Edit], lines: Sequence[str], *, repair: bool
) -> tuple[list[Edit], list[str]]:
    """Detect body rows that repeat the lines just outside an edit (boundary echo).

    An echo is dropped only when `repair` is on and it is unambiguous: it leaves at least one
    row, its rows carry some letter or digit, and (for a replacement) they are not also the
    first/last lines being replaced. Blank-line echoes are ignored; every other echo warns.
    """
    consumed = {n for e in edits if e.op.consumes for n in e.anchors}
    result, warnings = [], []
    for edit in edits:
        if edit.op is EditOp.DELETE or not edit.lines:
            result.append(edit)
            continue
        repaired, notes = _echo_one(edit, lines, consumed, repair)
        result.append(repaired)
        warnings.extend(notes)
    return result, warnings


def _neighbours(edit: Edit, line_count: int) -> tuple[int, int]:
    """(last line before, first line after) the edit's insertion point, 1-based."""
    if edit.op is EditOp.INSERT_HEAD:
        return 0, 1
    if edit.op is EditOp.INSERT_TAIL:
        return line_count, line_count + 1
    if edit.op is EditOp.INSERT_BEFORE:
        return edit.start - 1, edit.start
    if edit.op is EditOp.INSERT_AFTER:
        return edit.start, edit.start + 1
    return edit.start - 1, edit.end + 1


def _echo_one(
    edit: Edit, lines: Sequence[str], consumed: set[int], repair: bool
) -> tuple[Edit, list[str]]:
    rows = edit.lines
    before_end, after_start = _neighbours(edit, len(lines))
    lead = _echo_length(rows, lines, consumed, before_end, leading=True)
    trail = _echo_length(rows[lead:], lines, consumed, after_start, leading=False)
    notes: list[str] = []
    keep_from, keep_to = 0, len(rows)
    old = lines[edit.start - 1 : edit.end] if edit.op.consumes else []
    if lead:
        span = (before_end - lead + 1, before_end)
        ambiguous = lead == len(rows) or list(rows[:lead]) == old[:lead]
        drop, note = _echo_verdict(edit, rows[:lead], span, "above", ambiguous, repair)
        keep_from = lead if drop else 0
        notes += note
    if trail and lead + trail <= len(rows):
        span = (after_start, after_start + trail - 1)
        ambiguous = keep_from + trail >= len(rows) or list(rows[-trail:]) == old[-trail:]
        drop, note = _echo_verdict(edit, rows[-trail:], span, "below", ambiguous, repair)
        keep_to = len(rows) - trail if drop else len(rows)
        notes += note
    if (keep_from, keep_to) == (0, len(rows)):
        return edit, notes
    return edit.with_lines(edit.start, edit.end, rows[keep_from:keep_to]), notes


def _echo_length(
    rows: Sequence[str], lines: Sequence[str], consumed: set[int], edge: int, *, leading: bool
) -> int:
    """The longest run of rows at one end equal to the unconsumed lines next to `edge`."""
    for k in range(min(len(rows), _MAX_ECHO_ROWS), 0, -1):
        first = edge - k + 1 if leading else edge
        numbers = range(first, first + k)
        if first < 1 or numbers[-1] > len(lines) or any(n in consumed for n in numbers):
            continue
        chunk = rows[:k] if leading else rows[-k:]
        if list(chunk) == list(lines[first - 1 : first - 1 + k]):
            return k
    return 0


def _echo_verdict(
    edit: Edit,
    echoed: Sequence[str],
    span: tuple[int, int],
    side: str,
    ambiguous: bool,
    repair: bool,
) -> tuple[bool, list[str]]:
    """(drop the echoed rows?, warnings) for one echo at one end of an edit."""
    if all(not row.strip() for row in echoed):
        return False, []
    where = f"line {span[0]}" if span[0] == span[1] else f"lines {span[0]}..{span[1]}"
    quoted = _quote(echoed[0])
    rows = "row" if len(echoed) == 1 else f"{len(echoed)} rows"
    said = f"`{edit.describe()}`: {rows} of its body repeat {where} just {side} it ({quoted})"
    informative = any(any(ch.isalnum() for ch in row) for row in echoed)
    if repair and informative and not ambiguous:
        return True, [
            f"{said}; dropped them as an echo. Check the preview; if you meant to "
            "duplicate those lines, send them again as a separate insert."
        ]
    return False, [f"{said}; kept as written. If that duplicates them, delete the extra lines."]


def _quote(row: str) -> str:
    text = row if len(row) <= _QUOTE_COLUMNS else row[: _QUOTE_COLUMNS - 1] + "…"
    return f"`{text}`"


def _unchanged_edit_notes(edits: Sequence[Edit], lines: Sequence[str]) -> list[str]:
    notes = []
    for edit in edits:
        if edit.op is EditOp.REPLACE and list(edit.lines) == list(lines[edit.start - 1 : edit.end]):
            notes.append(f"`{edit.describe()}` changed nothing: its rows equal the current lines.")
    return notes


# -- assembly ----------------------------------------------------------------------------------


@dataclass(slots=True)
class _Points:
    """Edits grouped by the old line they attach to (patch order kept within each group)."""

    head: list[str]
    tail: list[str]
    before: dict[int, list[str]]
    after: dict[int, list[str]]
    consume: dict[int, Edit]


def _group(edits: Sequence[Edit]) -> _Points:
    points = _Points([], [], {}, {}, {})
    end_to_start = {e.end: e.start for e in edits if e.op.consumes}
    for edit in edits:
        if edit.op is EditOp.INSERT_HEAD:
            points.head.extend(edit.lines)
        elif edit.op is EditOp.INSERT_TAIL:
            points.tail.extend(edit.lines)
        elif edit.op is EditOp.INSERT_BEFORE:
            points.before.setdefault(edit.start, []).extend(edit.lines)
        elif edit.op is EditOp.INSERT_AFTER:
            key = end_to_start.get(edit.start, edit.start)
            points.after.setdefault(key, []).extend(edit.lines)
        else:
            points.consume[edit.start] = edit
    return points


def _assemble(
    lines: Sequence[str], edits: Sequence[Edit]
) -> tuple[list[str], tuple[tuple[int, int], ...], tuple[tuple[int, int, int], ...]]:
    """Build the new line list in one forward pass (same result as bottom-up application)."""
    points = _group(edits)
    out: list[str] = []
    regions: list[tuple[int, int]] = []
    kept: list[tuple[int, int, int]] = []

    def emit(rows: Sequence[str]) -> None:
        if rows:
            regions.append((len(out) + 1, len(out) + len(rows)))
            out.extend(rows)

    def copy(first: int, last: int) -> None:
        if first <= last:
            kept.append((first, last, len(out) + 1))
            out.extend(lines[first - 1 : last])

    emit(points.head)
    cursor = 1
    for line in sorted(points.before.keys() | points.after.keys() | points.consume.keys()):
        copy(cursor, line - 1)
        emit(points.before.get(line, ()))
        consumer = points.consume.get(line)
        if consumer is None:
            copy(line, line)
            cursor = line + 1
        else:
            if consumer.lines:
                emit(consumer.lines)
            else:
                regions.append((len(out) + 1, len(out)))
            cursor = consumer.end + 1
        emit(points.after.get(line, ()))
    copy(cursor, len(lines))
    emit(points.tail)
    return out, tuple(regions), tuple(kept)
