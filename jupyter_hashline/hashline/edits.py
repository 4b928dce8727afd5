"""The value types of an edit: `EditOp`, `Edit` and `PatchSection`.

Invariants:
- Values are frozen; building one never touches a file.
- Line numbers are 1-based and refer to the text as tagged; they never shift while a section
  applies. `Edit` does not check them against any text (that is `apply.validate_edits`), so a
  parsed edit may carry line 0 or a reversed range and be reported with every other problem.
- `insert_before`/`insert_after` keep their line in both `start` and `end`; `insert_head` and
  `insert_tail` carry no line (0, 0).
- Body rows (`lines`) are single lines without a line break.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from .filesystem import Footprint


class EditOp(str, Enum):
    """The six verbs of the edit language (the value is the JSON form's `op`)."""

    REPLACE = "replace"
    DELETE = "delete"
    INSERT_BEFORE = "insert_before"
    INSERT_AFTER = "insert_after"
    INSERT_HEAD = "insert_head"
    INSERT_TAIL = "insert_tail"

    @property
    def consumes(self) -> bool:
        """True for verbs that remove the lines they name (replace, delete)."""
        return self in (EditOp.REPLACE, EditOp.DELETE)

    @property
    def at_edge(self) -> bool:
        """True for `insert head` and `insert tail`, which name no line."""
        return self in (EditOp.INSERT_HEAD, EditOp.INSERT_TAIL)


@dataclass(frozen=True, slots=True)
class Edit:
    """One edit of a section: a verb, the lines it names and its body rows."""

    op: EditOp
    start: int = 0
    end: int = 0
    lines: tuple[str, ...] = ()

    @classmethod
    def replace(cls, start: int, end: int, lines: tuple[str, ...] | list[str]) -> Edit:
        return cls(EditOp.REPLACE, start, end, tuple(lines))

    @classmethod
    def delete(cls, start: int, end: int | None = None) -> Edit:
        return cls(EditOp.DELETE, start, start if end is None else end)

    @classmethod
    def insert_before(cls, line: int, lines: tuple[str, ...] | list[str]) -> Edit:
        return cls(EditOp.INSERT_BEFORE, line, line, tuple(lines))

    @classmethod
    def insert_after(cls, line: int, lines: tuple[str, ...] | list[str]) -> Edit:
        return cls(EditOp.INSERT_AFTER, line, line, tuple(lines))

    @classmethod
    def insert_head(cls, lines: tuple[str, ...] | list[str]) -> Edit:
        return cls(EditOp.INSERT_HEAD, 0, 0, tuple(lines))

    @classmethod
    def insert_tail(cls, lines: tuple[str, ...] | list[str]) -> Edit:
        return cls(EditOp.INSERT_TAIL, 0, 0, tuple(lines))

    @property
    def anchors(self) -> range:
        """The lines this edit names (empty for head/tail)."""
        return range(0) if self.op.at_edge else range(self.start, self.end + 1)

    def describe(self) -> str:
        """The edit's verb line as an agent wrote it, e.g. `replace 3..5` or `insert tail`."""
        if self.op.at_edge:
            return "insert head" if self.op is EditOp.INSERT_HEAD else "insert tail"
        if self.op in (EditOp.INSERT_BEFORE, EditOp.INSERT_AFTER):
            where = "before" if self.op is EditOp.INSERT_BEFORE else "after"
            return f"insert {where} {self.start}"
        span = str(self.start) if self.start == self.end else f"{self.start}..{self.end}"
        return f"{self.op.value} {span}"

    def with_lines(self, start: int, end: int, lines: tuple[str, ...] | None = None) -> Edit:
        """The same verb moved to `start..end` (and optionally with other body rows)."""
        return Edit(self.op, start, end, self.lines if lines is None else lines)

    def to_json(self) -> dict[str, object]:
        """The JSON form of this edit (see patch_schema.json)."""
        out: dict[str, object] = {"op": self.op.value}
        if self.op.consumes:
            out["start"], out["end"] = self.start, self.end
        elif not self.op.at_edge:
            out["line"] = self.start
        if self.op is not EditOp.DELETE:
            out["lines"] = list(self.lines)
        return out


@dataclass(frozen=True, slots=True)
class PatchSection:
    """Every edit for one file, addressed by the `[path#TAG]` header of a read."""

    path: str
    tag: str
    edits: tuple[Edit, ...]
    notes: tuple[str, ...] = field(default=(), compare=False)
    """What reading the edit forgave (a fence around it, rows given as one string): said to
    the agent with the result, never part of what the edit means."""

    @property
    def header(self) -> str:
        return f"[{self.path}#{self.tag}]"

    @property
    def edge_only(self) -> bool:
        """True when every edit is `insert head` / `insert tail` (position-free)."""
        return all(edit.op.at_edge for edit in self.edits)

    @property
    def row_chars(self) -> int:
        """The characters of every row the edits carry."""
        return sum(sum(map(len, edit.lines)) for edit in self.edits)

    def anchor_lines(self) -> frozenset[int]:
        """Every line some edit names."""
        return frozenset(n for edit in self.edits for n in edit.anchors)

    def footprint(self) -> Footprint:
        """The lines the edits name, the rows they insert after or before a line, and the
        lines they delete outright."""
        after: dict[int, tuple[str, ...]] = {}
        before: dict[int, tuple[str, ...]] = {}
        for edit in self.edits:
            if edit.op is EditOp.INSERT_AFTER:
                after[edit.start] = after.get(edit.start, ()) + edit.lines
            elif edit.op is EditOp.INSERT_BEFORE:
                before[edit.start] = before.get(edit.start, ()) + edit.lines
        deleted = frozenset(n for e in self.edits if e.op is EditOp.DELETE for n in e.anchors)
        rows = tuple(row for e in self.edits for row in e.lines)
        replaced = frozenset(n for e in self.edits if e.op is EditOp.REPLACE for n in e.anchors)
        return Footprint(self.anchor_lines(), after, before, deleted, rows, replaced)

    def to_json(self) -> dict[str, object]:
        return {"path": self.path, "tag": self.tag, "edits": [e.to_json() for e in self.edits]}
