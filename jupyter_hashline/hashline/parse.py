"""Parse an edit, in its text form or its JSON form, into `PatchSection`s.

The text form (the edit language agents write) is a sequence of sections, each a `[path#TAG]`
header followed by verb lines (`replace N:`, `replace N..M:`, `delete N`, `delete N..M`,
`insert before N:`, `insert after N:`, `insert head:`, `insert tail:`) and their `+` body rows,
optionally wrapped in `*** Begin Patch` / `*** End Patch`. The JSON form is a dict
`{"path", "tag", "edits"}`, a list of such dicts, or a JSON string of either (see
patch_schema.json).

Invariants:
- Parsing is pure and checks syntax only; line numbers are checked against the text later,
  so that every anchor problem can be reported at once.
- A body row is everything after its `+`, verbatim (leading whitespace included); a bare `+`
  is an empty line. CRLF in the patch text is read as LF (transport noise); a lone CR is content.
- Anything the parser does not understand is a `PatchSyntaxError` naming the line (text form)
  or the edit (JSON form) and saying what was expected. Nothing is guessed.
- Forgiven, always with a note on the first section (chat models wrap what they send): one
  markdown fence around the edit (what is outside it is chat, dropped), prose lines before the
  first header that are not edit rows, and in the JSON form `lines` sent as one string (split
  at its line breaks), rows ending in a carriage return, and line numbers sent as digit
  strings. Each has only one reading; two fenced blocks that both hold headers are refused.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from importlib import resources

from .edits import Edit, EditOp, PatchSection
from .errors import PatchSyntaxError

BEGIN_PATCH = "*** Begin Patch"
END_PATCH = "*** End Patch"

_TAG = re.compile(r"[0-9A-Fa-f]{4}")
_SPAN = r"(\d+)(?:\s*(?:\.\.|-)\s*(\d+))?"
_VERBS: tuple[tuple[re.Pattern[str], EditOp], ...] = (
    (re.compile(rf"replace\s+{_SPAN}\s*:?"), EditOp.REPLACE),
    (re.compile(rf"delete\s+{_SPAN}\s*:?"), EditOp.DELETE),
    (re.compile(r"insert\s+before\s+(\d+)\s*:?"), EditOp.INSERT_BEFORE),
    (re.compile(r"insert\s+after\s+(\d+)\s*:?"), EditOp.INSERT_AFTER),
    (re.compile(r"insert\s+head\s*:?"), EditOp.INSERT_HEAD),
    (re.compile(r"insert\s+tail\s*:?"), EditOp.INSERT_TAIL),
)
VERB_FORMS = (
    "`replace N:`, `replace N..M:`, `delete N`, `delete N..M`, `insert before N:`, "
    "`insert after N:`, `insert head:`, `insert tail:`"
)
_VERB_EXAMPLE = {
    "replace": "`replace N:` or `replace N..M:`",
    "delete": "`delete N` or `delete N..M`",
    "insert": "`insert before N:`, `insert after N:`, `insert head:` or `insert tail:`",
}
JSON_OPS = tuple(op.value for op in EditOp)

PatchInput = str | Mapping[str, object] | Sequence[Mapping[str, object]] | Sequence[PatchSection]


_COMMAND_LINE = re.compile(r"^[ \t]*(?:replace|delete|insert)\s", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class PatchBulk:
    """How big an edit is, measured without parsing it: `edits`, the edit operations it holds
    (its lines starting with a verb; the `"op"` keys of JSON text; the entries of JSON `edits`
    lists), which is what parsing counts for any edit but one wrapped in chat whose prose has
    lines starting with a verb; `rows`, what parsing it costs (lines of the text, edits and
    body rows of the JSON form). One pass of C code or one loop over the edits: an edit of
    400,000 operations is refused in milliseconds, not after seconds of parsing."""

    edits: int
    rows: int


def patch_bulk(patch: object) -> PatchBulk:
    """The `PatchBulk` of an edit in any form `parse_patch` takes (0, 0 for parsed sections)."""
    if isinstance(patch, str):
        rows = patch.count("\n") + 1
        stripped = patch.lstrip()
        if stripped.startswith("{") or _JSON_LIST_START.match(stripped):
            ops = patch.count('"op"')
            return PatchBulk(ops, rows + ops)  # JSON text may put every edit on one line
        return PatchBulk(len(_COMMAND_LINE.findall(patch)), rows)
    sections = [patch] if isinstance(patch, Mapping) else patch
    if not isinstance(sections, list):
        return PatchBulk(0, 0)
    edits = [
        found
        for section in sections
        if isinstance(section, Mapping) and isinstance(found := section.get("edits"), list)
    ]
    count = sum(len(found) for found in edits)
    if count > _ROWS_COUNTED:  # refused on its count alone: no need to weigh its rows
        return PatchBulk(count, count)
    body = sum(
        len(lines) if isinstance(lines := edit.get("lines"), (list, str)) else 0
        for found in edits
        for edit in found
        if isinstance(edit, Mapping)
    )
    return PatchBulk(count, count + body)


_ROWS_COUNTED = 100_000


def parse_patch(patch: PatchInput | PatchSection) -> list[PatchSection]:
    """Parse edit text, a JSON dict/list, a JSON string, or pass parsed sections through."""
    if isinstance(patch, PatchSection):
        return [patch]
    if isinstance(patch, str):
        stripped = patch.lstrip()
        if stripped.startswith("{") or _JSON_LIST_START.match(stripped):
            return parse_json_patch(_load_json(stripped))
        fenced = _fenced_json(patch)
        if fenced is not None:
            return _with_notes(parse_json_patch(_load_json(fenced)), [_FENCE_NOTE])
        return parse_text_patch(patch)
    if isinstance(patch, Mapping):
        return parse_json_patch(patch)
    if not isinstance(patch, Sequence):
        raise PatchSyntaxError(
            f"The edit is a {type(patch).__name__}; send the edit text, or the JSON form: "
            "an object {'path', 'tag', 'edits'} or a list of those."
        )
    items = list(patch)
    if items and all(isinstance(item, PatchSection) for item in items):
        return [item for item in items if isinstance(item, PatchSection)]
    return parse_json_patch(items)


_JSON_LIST_START = re.compile(r"\[\s*[{\]]")


def _load_json(text: str) -> object:
    try:
        return json.loads(text)
    except RecursionError:
        raise PatchSyntaxError(
            "The edit looks like JSON but is nested too deeply to parse. Send the JSON form "
            "({'path', 'tag', 'edits'} or a list of those) or the text form."
        ) from None
    except json.JSONDecodeError as err:
        raise PatchSyntaxError(
            f"The edit looks like JSON but does not parse: {err.msg} at line {err.lineno} "
            f"column {err.colno}. Send valid JSON ({{'path', 'tag', 'edits'}} or a list of "
            "those), or the text form starting with a `[path#TAG]` header."
        ) from None


def patch_schema() -> dict[str, object]:
    """The JSON Schema of the JSON form (patch_schema.json, shipped in the package)."""
    source = resources.files(__package__ or "jupyter_hashline.hashline") / "patch_schema.json"
    schema: dict[str, object] = json.loads(source.read_text(encoding="utf-8"))
    return schema


# -- the text form -----------------------------------------------------------------------------


@dataclass(slots=True)
class _OpenEdit:
    op: EditOp
    start: int
    end: int
    line_no: int
    rows: list[str] = field(default_factory=list)

    def close(self) -> Edit:
        name = Edit(self.op, self.start, self.end).describe()
        if self.op is not EditOp.DELETE and not self.rows:
            hint = (
                f"; to remove lines use `delete {self.start}`" if self.op is EditOp.REPLACE else ""
            )
            raise _syntax(
                self.line_no,
                f"`{name}` has no body rows: add the new lines as `+` rows under it{hint}",
            )
        return Edit(self.op, self.start, self.end, tuple(self.rows))


@dataclass(slots=True)
class _OpenSection:
    path: str
    tag: str
    line_no: int
    edits: list[Edit] = field(default_factory=list)

    def close(self) -> PatchSection:
        if not self.edits:
            raise _syntax(
                self.line_no,
                f"section [{self.path}#{self.tag}] has no edits: put verb lines such as "
                "`replace N:` with `+` rows under the header",
            )
        return PatchSection(self.path, self.tag, tuple(self.edits))


def _syntax(line_no: int, what: str) -> PatchSyntaxError:
    return PatchSyntaxError(f"Edit not understood (line {line_no} of the edit): {what}.")


def parse_text_patch(text: str) -> list[PatchSection]:
    """Parse the text form; see the module docstring for the grammar."""
    numbered = list(enumerate(text.replace("\r\n", "\n").split("\n"), start=1))
    numbered, notes = _unwrap_chat(numbered)
    rows = _unwrap_envelope(numbered)
    parser = _TextParser()
    for line_no, row in rows:
        parser.feed(line_no, row)
    return _with_notes(parser.finish(), notes)


def _with_notes(sections: list[PatchSection], notes: Sequence[str]) -> list[PatchSection]:
    if not notes or not sections:
        return sections
    first = sections[0]
    return [replace(first, notes=(*first.notes, *notes)), *sections[1:]]


_FENCE = re.compile(r"\s*(```|~~~)")
_FENCE_NOTE = (
    "the edit came inside a markdown fence (```); read it from inside the fence and "
    "ignored the text around it. Send the edit text alone."
)


def _fenced_json(text: str) -> str | None:
    """The JSON inside the one fenced block of `text`, if that is what it holds."""
    rows = text.replace("\r\n", "\n").split("\n")
    fences = [i for i, row in enumerate(rows) if _FENCE.match(row)]
    if len(fences) != 2:
        return None
    inner = "\n".join(rows[fences[0] + 1 : fences[1]]).strip()
    return inner if inner.startswith("{") or _JSON_LIST_START.match(inner) else None


def _unwrap_chat(numbered: list[tuple[int, str]]) -> tuple[list[tuple[int, str]], list[str]]:
    """The edit inside a markdown fence, and without prose before its first header."""
    notes: list[str] = []
    fences = [i for i, (_, row) in enumerate(numbered) if _FENCE.match(row)]
    blocks = [numbered[a + 1 : b] for a, b in zip(fences[::2], fences[1::2], strict=False)]
    holding = [block for block in blocks if any(_is_header(row) for _, row in block)]
    if len(holding) > 1:
        raise _syntax(
            holding[1][0][0],
            f"the edit holds {len(holding)} fenced blocks with `[path#TAG]` headers; send "
            "one edit (several files may share it, one header each), without markdown fences",
        )
    if holding:
        numbered = holding[0]
        notes.append(_FENCE_NOTE)
    first = next((i for i, (_, row) in enumerate(numbered) if _is_header(row)), None)
    prose = [row for _, row in numbered[:first] if row.strip()] if first else []
    if prose and not any(_looks_like_edit(row) for row in prose):
        numbered = numbered[first:]
        notes.append(
            f"ignored {len(prose)} line(s) of text before the first `[path#TAG]` header "
            f"(starting `{prose[0].strip()[:40]}`). Send the edit text alone."
        )
    return numbered, notes


def _is_header(row: str) -> bool:
    stripped = row.strip()
    return stripped.startswith("[") and stripped.endswith("]") and "#" in stripped


def _looks_like_edit(row: str) -> bool:
    stripped = row.strip()
    return (
        row.startswith("+")
        or stripped in (BEGIN_PATCH, END_PATCH)
        or _match_verb(stripped) is not None
        or stripped.split(" ", 1)[0] in _VERB_EXAMPLE
    )


def _unwrap_envelope(numbered: list[tuple[int, str]]) -> list[tuple[int, str]]:
    content = [(n, r) for n, r in numbered if r.strip()]
    if not content:
        raise PatchSyntaxError(
            "The edit is empty. Send a `[path#TAG]` header (from your read) followed by verb "
            f"lines ({VERB_FORMS}) and `+` body rows."
        )
    first_no, first = content[0]
    last_no, last = content[-1]
    begins, ends = first.strip() == BEGIN_PATCH, last.strip() == END_PATCH
    if begins and not ends:
        raise _syntax(
            last_no,
            f"`{BEGIN_PATCH}` opened the edit but it does not end with "
            f"`{END_PATCH}`; add that line at the end",
        )
    if ends and not begins:
        raise _syntax(
            first_no,
            f"the edit ends with `{END_PATCH}` but does not start with "
            f"`{BEGIN_PATCH}`; add that line at the start, or drop both",
        )
    if begins:
        numbered = [(n, r) for n, r in numbered if first_no < n < last_no]
    for n, r in numbered:
        if r.strip() in (BEGIN_PATCH, END_PATCH):
            raise _syntax(n, f"`{r.strip()}` may only open or close the whole edit")
    return numbered


class _TextParser:
    """A line-at-a-time state machine over the text form."""

    def __init__(self) -> None:
        self.sections: list[PatchSection] = []
        self.section: _OpenSection | None = None
        self.edit: _OpenEdit | None = None
        self.after_blank = False

    def feed(self, line_no: int, row: str) -> None:
        if row.startswith("+"):
            self._body_row(line_no, row[1:])
        elif not row.strip():
            self.after_blank = True
            return
        else:
            self._command(line_no, row.strip())
        self.after_blank = False

    def finish(self) -> list[PatchSection]:
        self._close_section()
        return self.sections

    def _body_row(self, line_no: int, row: str) -> None:
        if self.edit is None:
            raise _syntax(
                line_no,
                "a `+` body row outside any edit: put a verb line such as "
                "`replace N:` or `insert after N:` above it",
            )
        if self.edit.op is EditOp.DELETE:
            raise _syntax(
                line_no,
                f"`delete` takes no body rows: to change line "
                f"{self.edit.start} use `replace {self.edit.start}:` instead",
            )
        if self.after_blank:
            raise _syntax(
                line_no - 1,
                "a blank line inside the body rows of "
                f"`{Edit(self.edit.op, self.edit.start, self.edit.end).describe()}`: "
                "write a bare `+` for an empty line, "
                "or remove the blank line",
            )
        self.edit.rows.append(row)

    def _command(self, line_no: int, row: str) -> None:
        if row.startswith("["):
            self._header(line_no, row)
            return
        op_match = _match_verb(row)
        if op_match is None:
            raise _syntax(line_no, _explain_unknown_row(row))
        if self.section is None:
            raise _syntax(
                line_no,
                "an edit before any `[path#TAG]` header: start the edit with "
                "the header line of your read, e.g. `[src/app.py#5BF9]`",
            )
        self._close_edit()
        self.edit = _open_edit(line_no, row, *op_match)

    def _header(self, line_no: int, row: str) -> None:
        if not row.endswith("]"):
            raise _syntax(line_no, f"the header `{row}` is not closed: write it as `[path#TAG]`")
        inner = row[1:-1].strip()
        path, sep, tag = inner.rpartition("#")
        if not sep or not path.strip():
            raise _syntax(
                line_no,
                f"the header `{row}` has no tag: copy the whole header "
                "from your read, e.g. `[src/app.py#5BF9]` (read the file if you have "
                "no header)",
            )
        if not _TAG.fullmatch(tag.strip()):
            raise _syntax(
                line_no,
                f"`{tag}` in `{row}` is not a tag: a tag is 4 hex digits, "
                "exactly as the read header shows it",
            )
        self._close_section()
        self.section = _OpenSection(path.strip(), tag.strip().upper(), line_no)

    def _close_edit(self) -> None:
        if self.edit is not None and self.section is not None:
            self.section.edits.append(self.edit.close())
        self.edit = None

    def _close_section(self) -> None:
        self._close_edit()
        if self.section is not None:
            self.sections.append(self.section.close())
        self.section = None


def _match_verb(row: str) -> tuple[EditOp, re.Match[str]] | None:
    for pattern, op in _VERBS:
        match = pattern.fullmatch(row)
        if match is not None:
            return op, match
    return None


def _open_edit(line_no: int, row: str, op: EditOp, match: re.Match[str]) -> _OpenEdit:
    groups = [g for g in match.groups() if g is not None]
    start = int(groups[0]) if groups else 0
    end = int(groups[1]) if len(groups) > 1 else start
    return _OpenEdit(op, start, end, line_no)


def _explain_unknown_row(row: str) -> str:
    word = row.split()[0] if row.split() else row
    if word in _VERB_EXAMPLE:
        return f"could not read `{row}`: expected {_VERB_EXAMPLE[word]} (N, M are line numbers)"
    if row.startswith("-"):
        return (
            f"`{row}` looks like a diff row; this language has no `-` rows: remove lines "
            "with `delete N..M` and change them with `replace N..M:` plus `+` rows"
        )
    if re.match(r"\d+:", row):
        return (
            f"`{row}` looks like a row of the read view; new lines are written as `+` rows "
            "(`+text`) under a verb line"
        )
    return (
        f"unknown verb or row `{row}`: expected a `[path#TAG]` header, one of {VERB_FORMS}, "
        "or a `+` body row"
    )


# -- the JSON form -----------------------------------------------------------------------------


def parse_json_patch(value: object) -> list[PatchSection]:
    """Parse the JSON form: one section dict or a non-empty list of them."""
    notes: list[str] = []
    if isinstance(value, Mapping):
        return _with_notes([_json_section(value, "the edit", notes)], notes)
    if isinstance(value, list) and value:
        sections = [
            _json_section(item, f"section {i}", notes) for i, item in enumerate(value, start=1)
        ]
        return _with_notes(sections, notes)
    raise PatchSyntaxError(
        'The JSON edit must be an object {"path", "tag", "edits": [...]} or a non-empty '
        "list of such objects."
    )


_SECTION_KEYS = frozenset({"path", "tag", "edits"})
_EDIT_KEYS: dict[EditOp, frozenset[str]] = {
    EditOp.REPLACE: frozenset({"op", "start", "end", "lines"}),
    EditOp.DELETE: frozenset({"op", "start", "end"}),
    EditOp.INSERT_BEFORE: frozenset({"op", "line", "lines"}),
    EditOp.INSERT_AFTER: frozenset({"op", "line", "lines"}),
    EditOp.INSERT_HEAD: frozenset({"op", "lines"}),
    EditOp.INSERT_TAIL: frozenset({"op", "lines"}),
}


def _json_section(value: object, where: str, notes: list[str]) -> PatchSection:
    if not isinstance(value, Mapping):
        raise PatchSyntaxError(f"JSON edit, {where}: expected an object with path, tag, edits.")
    _check_keys(value, _SECTION_KEYS, where, required=_SECTION_KEYS)
    path, tag, edits = value["path"], value["tag"], value["edits"]
    if not isinstance(path, str) or not path.strip():
        raise PatchSyntaxError(f"JSON edit, {where}: `path` must be a non-empty string.")
    if not isinstance(tag, str) or not _TAG.fullmatch(tag.strip().lstrip("#")):
        raise PatchSyntaxError(
            f"JSON edit, {where}: `tag` must be the 4 hex digits of your read header "
            f"[{path}#TAG], got {tag!r}. Read the file first if you have no header."
        )
    if not isinstance(edits, list) or not edits:
        raise PatchSyntaxError(f"JSON edit, {where}: `edits` must be a non-empty list.")
    parsed = tuple(_json_edit(e, f"{where}, edit {i}", notes) for i, e in enumerate(edits, start=1))
    return PatchSection(path.strip(), tag.strip().lstrip("#").upper(), parsed)


def _check_keys(
    value: Mapping[str, object], allowed: Iterable[str], where: str, required: Iterable[str]
) -> None:
    allowed_set = frozenset(allowed)
    unknown = sorted(str(k) for k in value if k not in allowed_set)
    if unknown:
        raise PatchSyntaxError(
            f"JSON edit, {where}: unknown key(s) {', '.join(unknown)}; allowed: "
            f"{', '.join(sorted(allowed_set))}."
        )
    missing = sorted(k for k in required if k not in value)
    if missing:
        raise PatchSyntaxError(f"JSON edit, {where}: missing key(s) {', '.join(missing)}.")


def _json_edit(value: object, where: str, notes: list[str]) -> Edit:
    if not isinstance(value, Mapping):
        raise PatchSyntaxError(f"JSON edit, {where}: expected an object with an `op`.")
    op_name = value.get("op")
    if op_name not in JSON_OPS:
        raise PatchSyntaxError(
            f"JSON edit, {where}: unknown op {op_name!r}; expected one of {', '.join(JSON_OPS)}."
        )
    op = EditOp(op_name)
    keys = _EDIT_KEYS[op]
    _check_keys(value, keys, where, required=keys - {"end"})
    lines = _json_lines(value.get("lines"), where, notes) if "lines" in keys else ()
    if op.at_edge:
        return Edit(op, 0, 0, lines)
    if "line" in keys:
        line = _json_int(value["line"], "line", where, notes)
        return Edit(op, line, line, lines)
    start = _json_int(value["start"], "start", where, notes)
    end = _json_int(value.get("end", start), "end", where, notes)
    return Edit(op, start, end, lines)


def _json_int(value: object, key: str, where: str, notes: list[str]) -> int:
    if isinstance(value, str) and value.strip().isdigit():
        notes.append(f"JSON edit, {where}: `{key}` was the string {value!r}; read it as a number.")
        return int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise PatchSyntaxError(f"JSON edit, {where}: `{key}` must be a line number (an integer).")
    return value


def _json_lines(value: object, where: str, notes: list[str]) -> tuple[str, ...]:
    if isinstance(value, str) and value:
        text = value.replace("\r\n", "\n")
        value = (text[:-1] if text.endswith("\n") else text).split("\n")
        notes.append(
            f"JSON edit, {where}: `lines` was one string; split it at its line breaks into "
            f"{len(value)} line(s). Send a list of strings, one per line."
        )
    if not isinstance(value, list) or not all(isinstance(row, str) for row in value):
        raise PatchSyntaxError(
            f"JSON edit, {where}: `lines` must be a list of strings, one per line."
        )
    if not value:
        raise PatchSyntaxError(
            f"JSON edit, {where}: `lines` is empty; give at least one line (to remove lines "
            "use op `delete`)."
        )
    if any(row.endswith("\r") for row in value):
        value = [row[:-1] if row.endswith("\r") else row for row in value]
        notes.append(
            f"JSON edit, {where}: rows ended in a carriage return (\\r); removed it (the "
            "file keeps its own line endings)."
        )
    for i, row in enumerate(value):
        if "\n" in row:
            raise PatchSyntaxError(
                f"JSON edit, {where}: lines[{i}] contains a line break; give one string per "
                "line, without newline characters."
            )
    return tuple(value)
