"""Undoing an agent's edit: what is kept when the edit is recorded, and the inverse edit.

An edit turned text `before` into text `after` (for a notebook, its projection). Its undo is
an ordinary edit of `after` (`UndoPlan.section()`: tagged with `after`'s tag, rows from
`before`), sent through the engine like any other: where the file is still `after` it simply
applies; where a person changed the file since, the engine's three-way recovery lands it only
if every line the agent wrote is unchanged (the person's other changes, even in the same cell,
are kept), else it is rejected and nothing is written.

Invariants:
- A plan holds only the changed middle of the two texts (the rows to put back), their digests
  and the cells the edit deleted (whole, outputs and metadata included): never a whole file.
- `inverse_edits(before, after)` applied exactly (no row repairs) to `after` gives `before`;
  a plan whose inverse does not (a changed final newline) is refused before anything is
  written (`check_inverse`), never applied approximately.
- The engine may only use the snapshot of `after` that the plan's digest names: a tag is an
  address, not an identity, so the text is compared by digest.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

import xxhash

from ..hashline.apply import apply_edits
from ..hashline.edits import Edit, PatchSection
from ..hashline.errors import HashlineError, StaleTagError
from ..hashline.line_diff import line_opcodes
from ..hashline.store import Snapshot, SnapshotStore
from ..hashline.text import section_tag, split_lines
from .activity import ActivityRecord
from .errors import BadArgumentsError, RevertRefusedError, UnknownActivityError
from .requests import RevertRequest

_CELL_MARKER = re.compile(r"^# %% \[[^\]]*\](?:.* )?id=(\S+)", re.MULTILINE)
_NOTHING: Mapping[str, Mapping[str, Any]] = MappingProxyType({})

__all__ = [
    "NOTHING_TO_UNDO",
    "UndoPlan",
    "check_inverse",
    "inverse_edits",
    "refused_error",
    "revert_request",
    "revert_targets",
    "snapshot_after",
    "text_digest",
    "undo_plan",
]


@dataclass(frozen=True, slots=True)
class UndoPlan:
    """How to undo one recorded edit of `path` (see the module docstring)."""

    path: str
    after_tag: str
    after_digest: str
    before_digest: str
    edits: tuple[Edit, ...]
    restore: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    refusal: str = ""  # why this edit may not be undone (empty: it may)
    structural: bool = False  # it added, removed, moved or retyped cells

    def section(self) -> PatchSection:
        """The undo as an edit of the text the recorded edit produced."""
        return PatchSection(path=self.path, tag=self.after_tag, edits=self.edits)


POSITIONAL = (
    "it added, removed or moved cells of a notebook whose cell ids are derived from their "
    "positions (nbformat < 4.5) or shared by copies of one id, so which cell is which cannot "
    "be told once the notebook changed"
)


def text_digest(text: str) -> str:
    """A 64-bit digest of a whole text: tells two texts with one 16-bit tag apart."""
    return xxhash.xxh3_64_hexdigest(text.encode("utf-8", "surrogatepass"))


def undo_plan(
    path: str,
    before: str,
    after: str,
    removed: Mapping[str, Mapping[str, Any]] = _NOTHING,
    *,
    positional: bool = False,
    after_tag: str | None = None,
) -> UndoPlan:
    """The plan that undoes `before` -> `after`; `removed` are the cells that edit deleted;
    `positional`: the notebook's shown ids name cells by position (or copies of one id);
    `after_tag`: the tag of `after` when the caller has it already."""
    gone = _cell_ids(before) - _cell_ids(after) if removed else set()
    edits, structural = _inverse(before, after)
    return UndoPlan(
        refusal=POSITIONAL if positional and structural else "",
        structural=structural,
        path=path,
        after_tag=after_tag or section_tag(after),
        after_digest=text_digest(after),
        before_digest=text_digest(before),
        edits=edits,
        restore={cid: removed[cid] for cid in sorted(gone) if cid in removed},
    )


def inverse_edits(before: str, after: str) -> tuple[Edit, ...]:
    """Edits of `after` (its line numbers) that turn it back into `before`."""
    return _inverse(before, after)[0]


def _inverse(before: str, after: str) -> tuple[tuple[Edit, ...], bool]:
    """The inverse edits, and whether they write or remove a cell marker line (the edit added,
    removed, moved, split, merged or retyped cells).

    Only the changed middle is split into lines and diffed: the common head and tail are found
    by comparing blocks of text, so an edit of a huge notebook costs what it changed."""
    head_chars, tail_chars = _common_ends(before, after)
    head = before.count("\n", 0, head_chars)  # whole lines the two texts share at the top
    old = split_lines(before[head_chars : len(before) - tail_chars])
    new = split_lines(after[head_chars : len(after) - tail_chars])
    edits: list[Edit] = []
    structural = False
    for op, a1, a2, j1, j2 in line_opcodes(old, new):
        if op == "equal":
            continue
        b1, b2 = j1 + head, j2 + head
        structural = structural or any(
            _CELL_MARKER.match(row) for row in (*old[a1:a2], *new[j1:j2])
        )
        if op == "replace":
            edits.append(Edit.replace(b1 + 1, b2, old[a1:a2]))
        elif op == "insert":
            edits.append(Edit.delete(b1 + 1, b2))
        else:
            rows = old[a1:a2]
            edits.append(Edit.insert_after(b1, rows) if b1 else Edit.insert_head(rows))
    return tuple(edits), structural


def _common_ends(a: str, b: str) -> tuple[int, int]:
    """Lengths of the common head and tail of `a` and `b`, cut back to whole lines (the head
    ends after a line break, the tail starts after one) and never overlapping."""
    limit = min(len(a), len(b))
    head = _common_run(a, b, limit, reverse=False)
    head = a.rfind("\n", 0, head) + 1
    tail = _common_run(a, b, limit - head, reverse=True)
    start_a, start_b = len(a) - tail, len(b) - tail
    at_line_start = all(
        start == 0 or t[start - 1] == "\n" for t, start in ((a, start_a), (b, start_b))
    )
    if tail and not at_line_start:  # mid-line in either text: start at the next line
        cut = a.find("\n", start_a)
        tail = 0 if cut < 0 else len(a) - cut - 1
    return head, tail


def _common_run(a: str, b: str, limit: int, *, reverse: bool) -> int:
    """How many characters `a` and `b` share at their start (or end), at most `limit`:
    equal blocks are skipped whole (a C comparison), the last one is searched by halves."""

    def same(lo: int, hi: int) -> bool:
        if reverse:
            return a[len(a) - hi : len(a) - lo] == b[len(b) - hi : len(b) - lo]
        return a[lo:hi] == b[lo:hi]

    done, block = 0, 1 << 16
    while done + block <= limit and same(done, done + block):
        done += block
    low, high = done, min(done + block, limit)
    while low < high:
        middle = (low + high + 1) // 2
        if same(done, middle):
            low = middle
        else:
            high = middle - 1
    return low


def clear_of_live_ids(plan: UndoPlan, live: str) -> UndoPlan:
    """`plan` with every cell it brings back renamed where another cell holds its id now (a
    pasted copy): the marker it writes would otherwise name, and overwrite, that cell."""
    taken = _cell_ids(live) & set(plan.restore)
    if not taken:
        return plan
    used = _cell_ids(live) | set(plan.restore)
    names: dict[str, str] = {}
    for cid in sorted(taken):
        n = 2
        while f"{cid}-{n}" in used:
            n += 1
        names[cid] = f"{cid}-{n}"
        used.add(names[cid])

    def rename(row: str) -> str:
        found = _CELL_MARKER.match(row)
        if found is None or found.group(1) not in names:
            return row
        return row[: found.start(1)] + names[found.group(1)] + row[found.end(1) :]

    edits = tuple(
        e.with_lines(e.start, e.end, tuple(rename(r) for r in e.lines)) for e in plan.edits
    )
    restore = {
        names.get(cid, cid): {**cell, "id": names.get(cid, cid)}
        for cid, cell in plan.restore.items()
    }
    return replace(plan, edits=edits, restore=restore)


def check_inverse(plan: UndoPlan, after: str, activity_id: int) -> None:
    """Refuse a plan whose inverse does not give back the text before the edit exactly."""
    undone = apply_edits(after, plan.edits, exact=True).text
    if text_digest(undone) != plan.before_digest:
        raise RevertRefusedError(
            f"Activity {activity_id} cannot be undone exactly (it changed how {plan.path} "
            "ends, e.g. its final newline), so nothing was written. Edit the file by hand."
        )


def snapshot_after(store: SnapshotStore, key: str, plan: UndoPlan) -> Snapshot | None:
    """The stored text the edit produced (matched by digest, not by tag alone)."""
    for snapshot in store.history(key):
        if snapshot.tag == plan.after_tag and text_digest(snapshot.text) == plan.after_digest:
            return snapshot
    return None


def _cell_ids(text: str) -> set[str]:
    """The cell ids a hashline projection's marker lines name."""
    return {match.group(1) for match in _CELL_MARKER.finditer(text)}


def describe_targets(records: Sequence[Any]) -> str:
    """`activity 12`, or `activities 14, 13, 12` (newest first)."""
    ids = ", ".join(str(record.id) for record in records)
    return f"activit{'ies' if len(records) > 1 else 'y'} {ids}"


def revert_request(data: Mapping[str, Any], *, agent: str) -> RevertRequest:
    """The revert a JSON body asks for: `{"activity": ID}` or `{"agent": NAME, "since_ms": T}`."""
    unknown = sorted(set(data) - {"activity", "agent", "since_ms"})
    if unknown:
        raise BadArgumentsError(f"revert: unknown field(s) {', '.join(unknown)}. {_REVERT_FORM}")
    if "activity" in data:
        if "agent" in data or "since_ms" in data:
            raise BadArgumentsError(f"revert: give `activity` alone. {_REVERT_FORM}")
        return RevertRequest(agent=agent, activity=_count(data["activity"], "activity", 1))
    name = data.get("agent")
    if not isinstance(name, str) or not name.strip() or "since_ms" not in data:
        raise BadArgumentsError(
            f"revert: `agent` (a name) and `since_ms` are needed. {_REVERT_FORM}"
        )
    since = _count(data["since_ms"], "since_ms", 0)
    return RevertRequest(agent=agent, target_agent=name, since_ms=since)


_REVERT_FORM = 'Send {"activity": ID} or {"agent": NAME, "since_ms": T}.'


def _count(value: object, name: str, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise BadArgumentsError(f"revert: `{name}` must be an integer >= {least}. {_REVERT_FORM}")
    return value


_STALE_HEAD = re.compile(
    r"^Edit rejected: (?P<path>.+?) changed since your read, and (?P<why>.+)\. Nothing was "
    r"written\. Current header: \[.*\]$"
)
_STALE_TAIL = re.compile(r"^(?:\(\* = changed since your read\) )?Re-read .*$")


def refused_message(record: Any, reason: str, put_back: int) -> str:
    """Why the undo of `record` was refused, for the person who asked: the engine's rejection
    told from the person's side (the lines, starred where they changed since the edit)."""
    nothing = "Nothing was written" + (
        f" (the {put_back} newer undo(s) of this request were put back)." if put_back else "."
    )
    first = f"Undo of activity {record.id} ({record.who}, {record.path}) refused"
    lines = reason.split("\n")
    head = _STALE_HEAD.match(lines[0])
    if head is None:
        return f"{first}. {nothing}\n{reason}"
    rows = [row for row in lines[1:] if not _STALE_TAIL.match(row)]
    starred = any(row.startswith("*") for row in rows)
    why = head["why"].replace("where you edit it", "where that edit wrote")
    legend = ["(* = changed since the edit)"] if starred else []
    return "\n".join(
        [f"{first}: {head['path']} changed since that edit, and {why}. {nothing}", *rows, *legend]
    )


# -- which records an undo names ---------------------------------------------------------------

NOTHING_TO_UNDO = "Nothing to undo: no matching edit, or the files already read as before it."


def revert_targets(
    recent: Sequence[ActivityRecord], request: RevertRequest
) -> list[ActivityRecord]:
    """The records `request` undoes, newest first (`recent` is the feed, newest first);
    refuses unknown, already undone and un-undoable ones before anything is written."""
    undone_by = {rid: r.id for r in recent for rid in r.reverts}
    if request.activity is not None:
        targets = [r for r in recent if r.id == request.activity]
        if not targets:
            raise UnknownActivityError(
                f"No activity {request.activity} here (the feed keeps the newest "
                f"{len(recent)} records). Nothing was written."
            )
    else:
        since = request.since_ms or 0
        targets = [
            r
            for r in recent
            if r.who == request.target_agent
            and r.at_ms >= since
            and r.source != "revert"
            and not r.runs
            and r.id not in undone_by
        ]
    for record in targets:
        _check_undoable(record, undone_by)
    return targets


def _check_undoable(record: ActivityRecord, undone_by: Mapping[int, int]) -> None:
    if record.id in undone_by:
        raise RevertRefusedError(
            f"Activity {record.id} was already undone (by activity {undone_by[record.id]}). "
            "Nothing was written."
        )
    if record.undo is not None and record.undo.refusal:
        raise RevertRefusedError(
            f"Activity {record.id} cannot be undone: {record.undo.refusal}. Nothing was written."
        )
    if record.undo is None:
        what = (
            "a run changes outputs, not text"
            if record.runs
            else "this server did not keep what undoing it needs (a file it created, or an "
            "edit recorded elsewhere)"
        )
        raise RevertRefusedError(
            f"Activity {record.id} cannot be undone: {what}. Nothing was written."
        )


def refused_error(err: HashlineError, record: ActivityRecord, put_back: int) -> HashlineError:
    """The error of an undo refused at `record` (after `put_back` others were put back): a
    conflict is told from the person's side; any other error (forbidden, missing) as it is."""
    if not isinstance(err, (StaleTagError, RevertRefusedError)):
        return err
    return RevertRefusedError(refused_message(record, err.message, put_back))
