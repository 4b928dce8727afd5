"""Mistakes models make in edit bodies: repaired when only one reading is possible, refused
when two are, and said either way.

Runs after the read-prefix and echo repairs of apply.py, on edits already checked against the
text. `forgive_edits` returns the edits as they are meant and a note per repair, or raises
`AmbiguousEditError` with what to resend.

Invariants:
- Every repair has a note naming the edit; nothing is changed silently. Nothing here ever
  moves an edit to other lines: a line number that looks miscounted is refused, not fixed.
- Refused, in any file: a replacement of two or more lines whose body holds an elision marker
  (`# ... existing code ...`) that is not among the lines replaced (written literally it would
  delete the code it stands for); a replacement that, by its rows, may be counted after the
  call's earlier edits above it (its rows, with some words in them, resemble the line that
  many lines up, without equalling it, at least as much as the line it names). An insert or
  delete has no rows that could tell its two countings apart: it is taken as numbered from
  the read, as the edit language promises (line numbers never shift while one edit applies).
- In Python code (a span the `SpanFinder` calls Python, that parsed before the edit), leading
  whitespace is taken as meant unless the result does not parse: then tabs in a space-indented
  span (or spaces in a tab-indented one) are converted to the span's unit, and a body indented
  unlike its reference line (the first line it replaces, or the lines an insert sits between)
  is shifted to that indentation if that, and only that, parses. A replacement whose
  indentation differs from the lines it replaces while both readings parse is refused (which
  did the model mean?). Trailing spaces in Python rows are removed when that leaves the code's
  syntax tree as it is. Only rows that, as written, all land in one span are repaired: rows
  that open a new span (a notebook cell marker among them) change where the spans are, and
  shifting them could turn the marker into a comment and the new cell into code of the last.
- Pure: lines and edits in; no file is read.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher

from .edits import Edit, EditOp
from .errors import AmbiguousEditError
from .syntax import CodeSpan, SpanFinder, parse_problem

_ELISION = re.compile(
    r"^\s*(?:#|//|--|/\*|<!--)\s*(?:\.\.\.|…)?\s*"
    r"(?:\(?(?:the\s+)?(?:existing|rest|remaining|unchanged|same|previous|other|original|"
    r"omitted|more)\b.*|\.\.\.|…)\s*(?:\*/|-->)?\s*$",
    re.IGNORECASE,
)
_SHIFT_MIN_SIMILARITY = 0.7
_SHIFT_MIN_WORD = 6
_SHIFT_MAX_ROWS = 20
_QUOTE = 50


def forgive_edits(
    edits: Sequence[Edit], lines: Sequence[str], finder: SpanFinder | None
) -> tuple[list[Edit], list[str]]:
    """The edits as meant, and a note per repair (see the module docstring)."""
    _refuse_elisions(edits, lines)
    _refuse_shifted_numbers(edits, lines)
    if finder is None:
        return list(edits), []
    code = _Code(lines, finder)
    result, notes = list(edits), []
    for index, edit in enumerate(result):
        if edit.op is EditOp.DELETE or not edit.lines:
            continue
        span = code.old_span(edit)
        if span is None or code.result_span(result, index, edit.lines) is None:
            continue  # as written, the rows leave the span (a new cell's marker among them)
        for repair in (_tabs, _indentation, _trailing):
            repaired, note = repair(code, result, index, span)
            if repaired is not None:
                result[index] = repaired
                notes.append(f"`{edit.describe()}`: {note}")
    return result, notes


def _unneeded(code: _Code, span: CodeSpan) -> bool:
    """True when no claim can be made: the span did not parse before the edit."""
    return not code.parsed_before(span)


# -- refusals in any file ----------------------------------------------------------------------


def _refuse_elisions(edits: Sequence[Edit], lines: Sequence[str]) -> None:
    for edit in edits:
        if edit.op is not EditOp.REPLACE or edit.end - edit.start < 1:
            continue
        old = {line.strip() for line in lines[edit.start - 1 : edit.end]}
        for offset, row in enumerate(edit.lines, start=1):
            if _ELISION.match(row) and row.strip() not in old:
                raise AmbiguousEditError(
                    f"Edit rejected: body row {offset} of `{edit.describe()}` is an elision "
                    f"marker ({_quote(row)}). Rows are written literally, so the lines it "
                    "stands for would be deleted. Nothing was written. Send the lines "
                    "themselves, or replace only the lines that change (several small "
                    "`replace N..M:` edits) and leave the rest out."
                )


def _refuse_shifted_numbers(edits: Sequence[Edit], lines: Sequence[str]) -> None:
    if len(edits) < 2:
        return
    growth_above = _GrowthAbove(len(lines) + 2)
    for edit in edits:
        shift = growth_above.before(edit.start) if edit.op is EditOp.REPLACE else 0
        growth_above.add(edit)
        start, end = edit.start - shift, edit.end - shift
        if shift == 0 or start < 1 or end > len(lines) or not edit.lines:
            continue
        if len(edit.lines) > _SHIFT_MAX_ROWS or edit.end - edit.start >= _SHIFT_MAX_ROWS:
            continue  # a slip of counting is a small edit's; big ones are not guessed at
        if max(sum(ch.isalnum() for ch in row) for row in edit.lines) < _SHIFT_MIN_WORD:
            continue  # too little text to say what it resembles
        body = "\n".join(edit.lines)
        stated = _similarity(body, lines[edit.start - 1 : edit.end])
        meant = _similarity(body, lines[start - 1 : end])
        # Rows equal to the lines up there would replace them with themselves: not meant.
        # Rows at least as like the lines up there as the lines named have two readings.
        if _SHIFT_MIN_SIMILARITY <= meant < 1.0 and meant >= stated:
            where = f"{start}" if start == end else f"{start}..{end}"
            raise AmbiguousEditError(
                f"Edit rejected: `{edit.describe()}` looks counted after this call's earlier "
                f"edits, which add {shift:+d} line(s) above it: its rows resemble line {where} "
                f"({_quote(lines[start - 1])}) at least as much as line {edit.start} "
                f"({_quote(lines[edit.start - 1])}). Line numbers refer to your read and do "
                f"not shift while one edit applies. Nothing was written. Resend with "
                f"`replace {where}:` if that is the line you meant; if you did mean line "
                f"{edit.start}, send that edit in a call of its own."
            )


class _GrowthAbove:
    """Lines added (or removed) so far above a line, by the edits seen in patch order: a
    Fenwick tree over line positions, so a patch of many edits costs n log n."""

    def __init__(self, size: int) -> None:
        self.tree = [0] * (size + 1)
        self.head = 0

    def add(self, edit: Edit) -> None:
        growth = _growth(edit)
        if growth == 0 or edit.op is EditOp.INSERT_TAIL:
            return
        if edit.op is EditOp.INSERT_HEAD:
            self.head += growth
            return
        # An insert before N sits above N; one after N, and a replaced range, above N + 1.
        position = edit.start if edit.op is EditOp.INSERT_BEFORE else edit.end + 1
        index = min(position, len(self.tree) - 1)
        while index < len(self.tree):
            self.tree[index] += growth
            index += index & -index

    def before(self, line: int) -> int:
        """The growth of the edits seen so far that sit above `line` (at positions <= line)."""
        total, index = self.head, min(line, len(self.tree) - 1)
        while index > 0:
            total += self.tree[index]
            index -= index & -index
        return total


def _growth(edit: Edit) -> int:
    consumed = edit.end - edit.start + 1 if edit.op.consumes else 0
    return len(edit.lines) - consumed


def _similarity(body: str, old: Sequence[str]) -> float:
    return SequenceMatcher(None, body, "\n".join(old), autojunk=False).ratio()


def _quote(row: str) -> str:
    text = row.strip()
    return f"`{text if len(text) <= _QUOTE else text[: _QUOTE - 1] + '…'}`"


# -- Python code -------------------------------------------------------------------------------


@dataclass(slots=True)
class _Code:
    """The text being edited, seen through its finder."""

    lines: Sequence[str]
    finder: SpanFinder

    before: dict[tuple[int, int], bool] = field(default_factory=dict)

    def old_span(self, edit: Edit) -> CodeSpan | None:
        """The Python span the edit lands in (whether it parsed is asked lazily)."""
        line = _anchor(edit, len(self.lines))
        span = self.finder.span_at(self.lines, line)
        if span is None or not span.checked:
            return None
        if edit.op.consumes and edit.end > span.last:
            return None
        return span

    def parsed_before(self, span: CodeSpan) -> bool:
        key = (span.first, span.last)
        if key not in self.before:
            self.before[key] = parse_problem(span) is None
        return self.before[key]

    def result_span(
        self, edits: Sequence[Edit], index: int, rows: tuple[str, ...]
    ) -> CodeSpan | None:
        """The span holding edit `index`'s rows when it carries `rows`, applied alone, if
        all of them land in one span."""
        out, first = _spliced(self.lines, edits, index, rows)
        span = self.finder.span_at(out, first)
        if span is None or span.last < first + len(rows) - 1 or span.first > first:
            return None
        return span

    def parses(self, edits: Sequence[Edit], index: int, rows: tuple[str, ...]) -> bool:
        span = self.result_span(edits, index, rows)
        return span is not None and parse_problem(span) is None

    def tree(self, edits: Sequence[Edit], index: int, rows: tuple[str, ...]) -> str | None:
        span = self.result_span(edits, index, rows)
        if span is None or parse_problem(span) is not None:
            return None
        try:
            return ast.dump(ast.parse(span.source))
        except SyntaxError:
            return None  # parses only with its magics blanked: no claim


def _anchor(edit: Edit, line_count: int) -> int:
    """A line of the span the edit's rows land in (rows inserted before a line join the
    span of the line above it: before a cell's marker, that is the cell above)."""
    if edit.op is EditOp.INSERT_BEFORE:
        return max(edit.start - 1, 1)
    if edit.op is EditOp.INSERT_HEAD:
        return 1
    if edit.op is EditOp.INSERT_TAIL:
        return max(line_count, 1)
    return edit.start


def _spliced(
    lines: Sequence[str], edits: Sequence[Edit], index: int, rows: tuple[str, ...]
) -> tuple[list[str], int]:
    """The text with edit `index` alone applied (with `rows`), and the line its rows start
    at. The section's other edits are left out: each edit's code is judged where it lands."""
    edit = edits[index]
    if edit.op is EditOp.REPLACE:
        cut, resume = edit.start - 1, edit.end
    elif edit.op is EditOp.INSERT_BEFORE:
        cut = resume = edit.start - 1
    elif edit.op is EditOp.INSERT_AFTER:
        cut = resume = edit.start
    elif edit.op is EditOp.INSERT_HEAD:
        cut = resume = 0
    else:
        cut = resume = len(lines)
    return [*lines[:cut], *rows, *lines[resume:]], cut + 1


def _tabs(code: _Code, edits: list[Edit], index: int, span: CodeSpan) -> tuple[Edit | None, str]:
    edit = edits[index]
    rows = edit.lines
    leads = [_lead(row) for row in rows]
    if not any(leads):
        return None, ""
    span_lines = code.lines[span.first - 1 : span.last]
    span_leads = [_lead(line) for line in span_lines if line.strip()]
    uses_tabs = any("\t" in lead for lead in span_leads)
    uses_spaces = any(" " in lead for lead in span_leads)
    if uses_spaces and not uses_tabs and any("\t" in lead for lead in leads):
        unit = _space_unit(span_lines)
        new_rows = tuple(_lead(r).replace("\t", " " * unit) + r.lstrip(" \t") for r in rows)
        said = f"tabs in the body's indentation; the code indents with {unit} spaces"
    elif uses_tabs and not uses_spaces and any(" " in lead for lead in leads):
        unit = _space_unit(rows)
        new_rows = tuple(_spaces_to_tabs(r, unit) for r in rows)
        said = f"spaces in the body's indentation ({unit} per level); the code indents with tabs"
    else:
        return None, ""
    if _unneeded(code, span) or not code.parses(edits, index, new_rows):
        return None, ""
    if code.parses(edits, index, rows) and code.tree(edits, index, rows) != code.tree(
        edits, index, new_rows
    ):
        return None, ""  # the whitespace is inside a string: it is content
    return edit.with_lines(edit.start, edit.end, new_rows), f"{said}: converted them."


def _lead(row: str) -> str:
    return row[: len(row) - len(row.lstrip(" \t"))]


def _space_unit(rows: Sequence[str]) -> int:
    """The indentation step of space-indented rows (the gcd of their widths; 4 if none)."""
    widths = {len(_lead(r)) for r in rows if r.strip() and "\t" not in _lead(r)} - {0}
    return math.gcd(*widths) if widths else 4


def _spaces_to_tabs(row: str, unit: int) -> str:
    lead = _lead(row).replace("\t", " " * unit)
    tabs, rest = divmod(len(lead), unit)
    return "\t" * tabs + " " * rest + row.lstrip(" \t")


def _indentation(
    code: _Code, edits: list[Edit], index: int, span: CodeSpan
) -> tuple[Edit | None, str]:
    edit = edits[index]
    rows = edit.lines
    body = _first_code(rows)
    if body is None:
        return None, ""
    have = _lead(body)
    references = _references(code.lines, edit, span)
    if not references or have in references or _unneeded(code, span):
        return None, ""
    as_written = code.parses(edits, index, rows)
    for want in references:
        shifted = _shifted(rows, have, want)
        if shifted is None or not code.parses(edits, index, shifted):
            continue
        if not as_written:
            return edit.with_lines(edit.start, edit.end, shifted), (
                f"re-indented the body to start at column {len(want)} as the code around "
                f"it does (written at column {len(have)}, it does not parse). Check the "
                "preview."
            )
        if edit.op is EditOp.REPLACE:
            raise AmbiguousEditError(
                f"Edit rejected: the body of `{edit.describe()}` starts at column {len(have)} "
                f"but the line it replaces is indented to column {len(want)}, and the code "
                "parses either way, so which you meant is unclear. Nothing was written. "
                "Resend the rows with the indentation you mean; to move code into or out of "
                "a block on purpose, include the unchanged line above it in the range, so "
                "the first row keeps that line's indentation."
            )
        return None, ""
    return None, ""


def _references(lines: Sequence[str], edit: Edit, span: CodeSpan) -> list[str]:
    """The indentations the body may be meant to have, most likely first."""
    first, last = span.first, span.last
    if edit.op is EditOp.REPLACE:
        line = _first_code(lines[edit.start - 1 : edit.end])
        return [] if line is None else [_lead(line)]
    if edit.op is EditOp.INSERT_BEFORE:
        below = _first_code(lines[edit.start - 1 : last])
        above = _last_code(lines[first - 1 : edit.start - 1])
    elif edit.op is EditOp.INSERT_AFTER:
        above = _last_code(lines[first - 1 : edit.start])
        below = _first_code(lines[edit.start : last])
    else:
        return []
    found: list[str] = []
    for line in (above, below):
        if line is not None and _lead(line) not in found:
            found.append(_lead(line))
    return found


def _first_code(rows: Sequence[str]) -> str | None:
    return next((r for r in rows if r.strip() and not r.lstrip().startswith("#")), None)


def _last_code(rows: Sequence[str]) -> str | None:
    return _first_code(list(reversed(rows)))


def _shifted(rows: tuple[str, ...], have: str, want: str) -> tuple[str, ...] | None:
    """`rows` with leading `have` replaced by `want` on every non-blank row, or None when a
    row does not start with `have`."""
    out = []
    for row in rows:
        if not row.strip():
            out.append(row)
        elif row.startswith(have):
            out.append(want + row[len(have) :])
        else:
            return None
    return tuple(out)


def _trailing(
    code: _Code, edits: list[Edit], index: int, span: CodeSpan
) -> tuple[Edit | None, str]:
    edit = edits[index]
    rows = edit.lines
    stripped = tuple(row.rstrip(" \t") for row in rows)
    if stripped == rows:
        return None, ""
    if edit.op.consumes and any(
        line != line.rstrip(" \t") for line in code.lines[edit.start - 1 : edit.end]
    ):
        return None, ""  # the lines it replaces have them too: the file's own style
    if _unneeded(code, span):
        return None, ""
    tree = code.tree(edits, index, rows)
    if tree is None or code.tree(edits, index, stripped) != tree:
        return None, ""
    count = sum(a != b for a, b in zip(rows, stripped, strict=True))
    return edit.with_lines(edit.start, edit.end, stripped), (
        f"removed trailing spaces from {count} row(s) (the code means the same without them)."
    )
