"""Which cells an agent may run: the stale-safe gate in front of every kernel.

`plan_run` takes the projection text the agent holds (the snapshot at its `tag`), the live
projection, and the cells asked for (or the cells its last edit touched), and returns the
cells to run with their sources, or raises a refusal. Nothing runs unless it passes.

Invariants:
- No code the agent has not seen ever runs: a cell runs only when its type and source in the
  live notebook are exactly those at `tag`, and the source returned is that text. A cell that
  changed, appeared or went since `tag` refuses the whole call (`StaleCellsError`), showing
  the cell's live lines with the changed ones starred, as an edit rejection does.
- With `seen_lines` (the line numbers the agent was shown under `tag`), every source line of a
  cell to run must be among them, or the call is refused revealing those lines
  (`UnseenCellsError`).
- A tag with no snapshot (never issued, or evicted) is refused, asking for a new read.
- Explicitly named cells must be code cells that exist; a markdown or raw cell is an error,
  an unknown or ambiguous id is an error naming the known ids. Omitted cells default to the
  cells the agent's last edit touched: markdown and raw ones are skipped with a note.
- All problems of one kind are reported at once. Pure: texts in, a plan or an error out.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from ..hashline import messages
from ..hashline.errors import AnchorError, UnknownTagError
from ..hashline.recovery import changed_live_lines, equal_blocks
from ..hashline.text import common_prefix, common_suffix, section_tag, split_lines
from ..notebook.projection import MARKER_PREFIX, ProjectedCell, parse_projection
from .errors import NotRunnableError, StaleCellsError, UnseenCellsError

CONTEXT_AROUND_CHANGES = 3


@dataclass(frozen=True, slots=True)
class CellToRun:
    """A cell cleared to run: its id and the exact source the agent saw."""

    cell_id: str
    source: str


@dataclass(frozen=True, slots=True)
class RunPlan:
    """The cells to run, in order, and notes for the reply (e.g. skipped markdown cells).

    `live_tag` is the tag of the live text the plan was judged against.
    """

    path: str
    cells: tuple[CellToRun, ...]
    notes: tuple[str, ...]
    live_tag: str


def added_or_changed_cells(before: str, after: str) -> tuple[str, ...]:
    """Ids of the cells an edit added or changed (type or source), in the order of `after`.

    `before` and `after` are the projection texts around the edit. Cells the edit deleted are
    not included; cells without an id in `after` cannot be named and are left out. Only the
    cells between the texts' common start and end are parsed (the rest is the same cells,
    unchanged), so an edit of one cell of a large notebook parses a cell or two.
    """
    head, tail = _changed_stretch(before, after)
    old_cells = parse_projection(before[head : len(before) - tail])
    new_cells = parse_projection(after[head : len(after) - tail])
    # a projection shows every cell under a distinct id, so an id in the changed stretch of
    # `after` is nowhere in the shared start and end: its old version, if any, is in `before`'s
    old = {c.cell_id: c for c in old_cells if c.cell_id is not None}
    touched: dict[str, None] = {}  # in order, each once (a set's speed: 10,000 cells change)
    for cell in new_cells:
        if cell.cell_id is None or cell.cell_id in touched:
            continue
        was = old.get(cell.cell_id)
        if was is None or (was.cell_type, was.source) != (cell.cell_type, cell.source):
            touched[cell.cell_id] = None
    return tuple(touched)


def _changed_stretch(before: str, after: str) -> tuple[int, int]:
    """How many characters at the start and at the end of both texts are whole cells they
    share (each boundary at a marker line, or the texts' ends)."""
    prefix = common_prefix(before, after)
    suffix = common_suffix(before, after, min(len(before), len(after)) - prefix)
    if prefix == len(before) == len(after):
        return prefix, 0
    head = after.rfind("\n" + MARKER_PREFIX, 0, prefix) + 1  # the marker at or before it
    start = len(after) - suffix
    at = after.find("\n" + MARKER_PREFIX, start - 1) if suffix else -1
    tail = len(after) - (at + 1) if at != -1 else 0
    return head, tail


def plan_run(
    path: str,
    *,
    tag: str,
    snapshot_text: str | None,
    live_text: str,
    cells: Sequence[str] | None = None,
    touched: Sequence[str] | None = None,
    seen_lines: Collection[int] | None = None,
) -> RunPlan:
    """The cells to run, or a refusal (see the module docstring)."""
    current = messages.header(path, section_tag(live_text))
    if snapshot_text is None:
        raise UnknownTagError(_unknown_tag_message(path, tag, current))
    snap = _by_id(parse_projection(snapshot_text))
    live = _by_id(parse_projection(live_text))
    names, explicit = _requested(path, cells, touched)
    _check_known(path, names, snap, live)
    runnable, notes = _runnable(path, names, snap, live, explicit=explicit)
    _check_unchanged(path, tag, runnable, snap, live, live_text, current)
    if seen_lines is not None:
        _check_seen(path, tag, runnable, snap, snapshot_text, seen_lines)
    plan = tuple(CellToRun(cid, live[cid][0].source) for cid in runnable)
    return RunPlan(path, plan, notes, section_tag(live_text))


# -- what was asked ----------------------------------------------------------------------------


def _by_id(cells: Sequence[ProjectedCell]) -> dict[str, list[ProjectedCell]]:
    found: dict[str, list[ProjectedCell]] = {}
    for cell in cells:
        if cell.cell_id is not None:
            found.setdefault(cell.cell_id, []).append(cell)
    return found


def _requested(
    path: str, cells: Sequence[str] | None, touched: Sequence[str] | None
) -> tuple[list[str], bool]:
    if cells is not None:
        names = list(dict.fromkeys(cells))
        if not names:
            raise NotRunnableError(
                f"`cells` is empty: name the ids of the code cells of {path} to run, or leave "
                "`cells` out to run the code cells your last edit of it touched."
            )
        return names, True
    if not touched:
        raise NotRunnableError(
            f"Nothing to run: you have not edited any cell of {path} in this session, so there "
            "is no default. Name the cells to run by id (`cells`)."
        )
    return list(dict.fromkeys(touched)), False


def _check_known(
    path: str,
    names: Sequence[str],
    snap: Mapping[str, list[ProjectedCell]],
    live: Mapping[str, list[ProjectedCell]],
) -> None:
    unknown = [cid for cid in names if cid not in snap and cid not in live]
    twice = [cid for cid in names if len(snap.get(cid, ())) > 1 or len(live.get(cid, ())) > 1]
    problems = []
    if unknown:
        known = ", ".join(list(live)[:50]) + (" ..." if len(live) > 50 else "")
        problems.append(
            f"{path} has no cell with id {', '.join(unknown)}. Its cell ids are: "
            f"{known or '(none)'}."
        )
    if twice:
        problems.append(
            f"cell id {', '.join(twice)} occurs more than once in {path}, so it does not say "
            "which cell to run. Read the notebook again for its current ids."
        )
    if problems:
        raise AnchorError("Run refused, nothing ran: " + " ".join(problems))


def _runnable(
    path: str,
    names: Sequence[str],
    snap: Mapping[str, list[ProjectedCell]],
    live: Mapping[str, list[ProjectedCell]],
    *,
    explicit: bool,
) -> tuple[list[str], tuple[str, ...]]:
    """The names that are code cells; the others are errors (named) or notes (defaults)."""
    runnable: list[str] = []
    other: list[tuple[str, str]] = []
    for cid in names:
        seen_as = (snap.get(cid) or live[cid])[0]
        if seen_as.cell_type == "code":
            runnable.append(cid)
        else:
            other.append((cid, seen_as.cell_type))
    described = ", ".join(f"{cid} ({kind})" for cid, kind in other)
    if other and explicit:
        raise NotRunnableError(
            f"Run refused, nothing ran: only code cells run, and cell {described} of {path} "
            "is not code. Leave it out of `cells`."
        )
    notes = (f"skipped cell {described}: only code cells run",) if other else ()
    if not runnable:
        raise NotRunnableError(
            f"Nothing to run: the cells your last edit of {path} touched ({described}) are not "
            "code cells. Name the code cells to run by id (`cells`)."
        )
    return runnable, notes


# -- stale and unseen cells --------------------------------------------------------------------


def _check_unchanged(
    path: str,
    tag: str,
    names: Sequence[str],
    snap: Mapping[str, list[ProjectedCell]],
    live: Mapping[str, list[ProjectedCell]],
    live_text: str,
    current: str,
) -> None:
    reasons: list[str] = []
    shown: list[int] = []
    changed: set[int] = set()
    for cid in names:
        was, now = snap.get(cid, [None])[0], live.get(cid, [None])[0]
        if was is not None and now is not None and _same(was, now):
            continue
        reasons.append(_what_changed(cid, was, now))
        if now is not None:
            lines, marked = _changed_rows(was, now)
            shown.extend(lines)
            changed.update(marked)
    if reasons:
        rows = messages.marked_rows(split_lines(live_text), shown, changed)
        raise StaleCellsError(
            _stale_message(path, tag, reasons, current, rows, bool(changed)),
            live_text=live_text,
            shown_lines=tuple(shown),
        )


def _same(was: ProjectedCell, now: ProjectedCell) -> bool:
    return was.cell_type == now.cell_type and was.source == now.source


def _what_changed(cid: str, was: ProjectedCell | None, now: ProjectedCell | None) -> str:
    if was is None:
        return f"cell {cid} was added after that read"
    if now is None:
        return f"cell {cid} was deleted"
    if was.cell_type != now.cell_type:
        return f"cell {cid} changed from {was.cell_type} to {now.cell_type}"
    return f"cell {cid} was edited"


def _changed_rows(was: ProjectedCell | None, now: ProjectedCell) -> tuple[list[int], list[int]]:
    """The live lines to show for a changed cell (marker included) and those to star."""
    old = _source_lines(was.source) if was is not None else []
    new = _source_lines(now.source)
    starred = [now.line + n for n in changed_live_lines(equal_blocks(old, new), len(new))]
    if was is None or was.cell_type != now.cell_type:
        starred = [now.line, *range(now.line + 1, now.last_line + 1)]
    lines = list(range(now.line, now.last_line + 1))
    if len(lines) > messages.REVEAL_MAX_LINES:
        around = range(-CONTEXT_AROUND_CHANGES, CONTEXT_AROUND_CHANGES + 1)
        near = {n + d for n in starred for d in around}
        lines = [now.line, *(n for n in lines[1:] if n in near)][: messages.REVEAL_MAX_LINES]
    return lines, [n for n in starred if n in lines]


def _source_lines(source: str) -> list[str]:
    """A source's lines as the projection shows them (a trailing LF shows an empty line)."""
    return source.split("\n") if source else []


def _stale_message(
    path: str,
    tag: str,
    reasons: Sequence[str],
    current: str,
    rows: Sequence[str],
    any_marked: bool,
) -> str:
    lines = [
        f"Run refused: {path} changed since {messages.header(path, tag)} where you want to "
        f"run it ({'; '.join(reasons)}). Nothing ran. Current header: {current}",
        *rows,
    ]
    legend = "(* = changed since your read) " if any_marked else ""
    lines.append(
        f"{legend}Read those cells again (notebook_read with `cells`); if they hold what you "
        "mean to run, run them with the new header."
    )
    return "\n".join(lines)


def _unknown_tag_message(path: str, tag: str, current: str) -> str:
    return (
        f"Run refused: hash #{tag} is not from this session for {path} (no read here issued "
        f"it, or it is too old), so what you saw there cannot be checked. Nothing ran. Current "
        f"header: {current}. Read the cells you want to run and run them with the new header."
    )


def _check_seen(
    path: str,
    tag: str,
    names: Sequence[str],
    snap: Mapping[str, list[ProjectedCell]],
    snapshot_text: str,
    seen_lines: Collection[int],
) -> None:
    seen = set(seen_lines)
    unseen = [
        n
        for cid in names
        for n in range(snap[cid][0].line + 1, snap[cid][0].last_line + 1)
        if n not in seen
    ]
    if not unseen:
        return
    rows, truncated = messages.reveal_rows(split_lines(snapshot_text), unseen)
    header = messages.header(path, tag)
    end = (
        f"Check them and run again with the same header {header}."
        if not truncated
        else "Only part of them is shown: read those cells (notebook_read with `cells`), then "
        "run them under the header that read returns."
    )
    raise UnseenCellsError(
        f"Run refused: the cells to run hold line(s) {messages.spans(unseen)} of {path} that "
        f"you were never shown under {header}. Nothing ran. Here they are:\n"
        + "\n".join(rows)
        + "\n"
        + end,
        revealed_lines=tuple(int(row.split(":", 1)[0]) for row in rows),
        complete=not truncated,
    )
