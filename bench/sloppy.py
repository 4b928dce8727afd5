"""The sloppy-agent table: what each edit format does with the mistakes models make when they
write an edit, on real notebooks.

Inputs: the code cells of the shared corpus's notebooks (../shared/corpus, read at run time,
never copied here; Python notebooks only) whose source parses as Python once IPython magic
lines are blanked, and that hold an indented block. For each such cell, deterministically
(seeded by the notebook's name and the cell's index), up to two intended one-cell changes:

- replace: one single-line statement inside an indented block becomes a modified version of
  itself (an integer in it counts one up, or it gets `  # changed`), indentation kept;
- insert: `print("checkpoint")` goes in mid-block, after a single-line statement whose next
  line is a statement at the same indentation (so the meant indentation has one reading).

The oracle knows the cell's intended source. Each change is then delivered through every
mistake of `MISTAKES` (each a function turning the correct edit into the sloppy one), by
hashline (the real tools layer over a temporary copy of the notebook: `notebook_read`, then
`notebook_edit` under the read's tag, as an agent calls them) and by models of three peers,
simulated in process against nbformat (they are other projects: modelled, never installed):
jupyter-mcp-server's `overwrite_cell_source` (the whole new source, by index, written as sent)
and `edit_cell_source` (`old_string` -> `new_string`, which must occur exactly once), and
Claude Code's NotebookEdit (the whole new source, by cell id, written as sent). A mistake hits
the rows the model composes in that format; where a format cannot make it, the table says
n/a and why.

Each attempt is judged from the file on disk (read back with nbformat; sources compared, not
outputs or metadata):

- as meant: written, the cell's source is the intended one, every other cell unchanged;
- warned (only where nothing is meant, `unclosed_paren`): written, the cell does not parse,
  and the reply says it does not parse;
- refused with hint: nothing written (the file byte-identical) and the reply names a line or
  what to resend; refused bare: nothing written, and the reply says neither;
- applied wrongly: written, and the result is not the intended one (or another cell changed);
- unparseable silent: written, the cell no longer parses, and the reply does not say so;
- lookalike: written as another change a correct agent could mean, when the sloppy call is,
  argument for argument, that agent's correct call (compared, never assumed): a shifted
  insert is the correct insert one statement lower. No edit format that names lines can
  refuse it without refusing that correct edit, and hashline's line numbers refer to the read
  whatever the order of a call's edits, so it is reported beside the targets, not in them.

Hashline's targets (`python -m bench --check`): 0 applied wrongly and 0 unparseable silent over
every mistake, and every control (`clean`) applied as meant. The peers are reported, not
checked. An absent corpus is a MISSING part (the check fails on it), never a silent pass.

Run `python -m bench.sloppy [--smoke | --quick] [--json PATH]`: `--smoke` 3 cells, `--quick`
12 cells (the smallest notebooks first, one cell per notebook per round), else every eligible
cell.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import csv
import hashlib
import io
import json
import random
import re
import tempfile
import tokenize
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from enum import Enum
from pathlib import Path
from typing import Any, Protocol

import nbformat

from bench.harness import RESULTS_DIR

CORPUS_DIR = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"
NOTEBOOK = "notebook.ipynb"
SEED = "hashline-sloppy-1"
CHECKPOINT = 'print("checkpoint")'
ELIDED = "# ... existing code ..."
NOTE_ROW = "# note: reviewed"
CHAT_BEFORE = "Here is the edit:"
CHAT_AFTER = "Let me know if you want anything else."
CELLS = {"smoke": 3, "quick": 12}
CORPUS_ABSENT = "corpus NOT MEASURED"


# -- Python source: does it parse ---------------------------------------------------------------

_MAGIC = re.compile(r"^(\s*)(?:[%!]|[\w.]+\s*=\s*[%!]|[\w.]+\?{1,2}\s*$)")
_FLAGS = ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT


def blank_magics(source: str) -> str:
    """`source` with each IPython magic or shell line (`%x`, `!x`, `y = !x`, `x?`) made a
    `pass` at its own indentation, so the lines stay where they are and blocks stay whole."""
    rows = source.split("\n")
    return "\n".join(_blank(row) for row in rows)


def _blank(row: str) -> str:
    found = _MAGIC.match(row)
    return row if found is None else f"{found.group(1)}pass"


def parse_tree(source: str) -> ast.Module | None:
    """The source's syntax tree once magics are blanked, or None when it does not parse."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            tree = compile(blank_magics(source), "<cell>", "exec", _FLAGS)
        except (SyntaxError, ValueError):
            return None
    return tree if isinstance(tree, ast.Module) else None


def parses(source: str) -> bool:
    return parse_tree(source) is not None


def indent_of(row: str) -> str:
    return row[: len(row) - len(row.lstrip(" \t"))]


# -- the corpus and the intended changes --------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Change:
    """One intended one-cell change: the oracle's side of a case."""

    notebook: str  # the corpus file
    raw: bytes  # the notebook file's bytes, as the corpus holds them
    cell: int  # the cell's index in the notebook
    kind: str  # "replace" or "insert"
    line: int  # 0-based row of the cell: the replaced row, or the row inserted after
    rows: tuple[str, ...]  # the cell's source, split at LF
    new_row: str  # the replacement row, or the inserted row
    unit: int  # the cell's indentation step, in spaces
    base: int  # the read view's line number of the cell's first source row
    sources: tuple[tuple[str, str], ...]  # every cell's (type, source) before the change

    @property
    def name(self) -> str:
        return f"{self.notebook}#{self.cell}:{self.kind}@{self.line + 1}"

    def result(self, extra: Sequence[tuple[int, str]] = ()) -> str:
        """The intended cell source; `extra` adds (row, text) inserts after those rows."""
        return "\n".join(apply_rows(self.rows, [*self.edits(), *extra]))

    def edits(self) -> list[tuple[int, str]]:
        """This change as row edits: (row, text) inserts after a row, (-row - 1, text) a
        replaced row (see `apply_rows`)."""
        if self.kind == "replace":
            return [(-self.line - 1, self.new_row)]
        return [(self.line, self.new_row)]

    @property
    def intended(self) -> str:
        return self.result()


def apply_rows(rows: Sequence[str], edits: Iterable[tuple[int, str]]) -> list[str]:
    """`rows` with each edit applied, every row number counted in `rows`: (n, text) with
    n >= 0 inserts text after row n; (-n - 1, text) replaces row n with text."""
    replaced = {-n - 1: text for n, text in edits if n < 0}
    inserted: dict[int, list[str]] = {}
    for n, text in edits:
        if n >= 0:
            inserted.setdefault(n, []).append(text)
    out: list[str] = []
    for i, row in enumerate(rows):
        out.append(replaced.get(i, row))
        out += inserted.get(i, [])
    return out


def corpus_notebooks(corpus: Path) -> tuple[list[tuple[str, bytes]], list[str]]:
    """The top-level notebooks of the corpus's MANIFEST that nbformat reads and whose kernel
    is Python (or unnamed), smallest first; and a note for each one left out."""
    found: list[tuple[str, bytes]] = []
    notes: list[str] = []
    with (corpus / "MANIFEST.tsv").open(encoding="utf-8", newline="") as manifest:
        for row in csv.DictReader(manifest, delimiter="\t"):
            name = row.get("file") or ""
            if "/" in name or not name.endswith(".ipynb"):
                continue  # invalid/ and text/ hold notebooks no edit format is meant for
            path = corpus / name
            if not path.is_file():
                notes.append(f"{name}: listed but absent")
                continue
            raw = path.read_bytes()
            nb = read_notebook(raw)
            if nb is None:
                notes.append(f"{name}: nbformat cannot read it")
                continue
            language = _language(nb)
            if language not in (None, "python", "ipython", "python3"):
                continue
            found.append((name, raw))
    found.sort(key=lambda item: (len(item[1]), item[0]))
    return found, notes


def read_notebook(raw: bytes | str) -> Any | None:
    text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return nbformat.reads(text, as_version=4)
        except Exception:  # any reason nbformat has: the notebook is unreadable
            return None


def _language(nb: Any) -> str | None:
    meta = nb.get("metadata", {})
    name = (meta.get("kernelspec") or {}).get("language") or (meta.get("language_info") or {}).get(
        "name"
    )
    return str(name).lower() if name else None


def cell_sources(nb: Any) -> tuple[tuple[str, str], ...]:
    return tuple((str(c.get("cell_type")), str(c.get("source", ""))) for c in nb.cells)


def _seeded(*parts: object) -> random.Random:
    digest = hashlib.sha256("|".join(map(str, (SEED, *parts))).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def _blocks(tree: ast.Module) -> Iterable[list[ast.stmt]]:
    """Every statement list that is an indented block (not the module's own)."""
    for node in ast.walk(tree):
        if node is tree:
            continue
        for name in ("body", "orelse", "finalbody"):
            body = getattr(node, name, None)
            if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                yield body


def _plain_row(rows: Sequence[str], stmt: ast.stmt) -> bool:
    """The statement is alone on its one line, not compound, indented with spaces exactly to
    its column, carries no trailing whitespace and is no magic line."""
    if hasattr(stmt, "body") or stmt.lineno != stmt.end_lineno or stmt.col_offset == 0:
        return False
    row = rows[stmt.lineno - 1]
    return (
        indent_of(row) == " " * stmt.col_offset
        and row == row.rstrip()
        and _blank(row) == row
        and "\r" not in row
    )


def candidates(rows: Sequence[str], tree: ast.Module) -> tuple[list[int], list[tuple[int, int]]]:
    """The rows a replace may target (a next row exists and is not blank), and the
    (row, column) an insert may follow (the next row starts a statement at that column)."""
    targets: set[int] = set()
    anchors: set[tuple[int, int]] = set()
    for body in _blocks(tree):
        for i, stmt in enumerate(body):
            if not _plain_row(rows, stmt):
                continue
            line = stmt.lineno - 1
            if line + 1 < len(rows) and rows[line + 1].strip():
                targets.add(line)
            nxt = body[i + 1] if i + 1 < len(body) else None
            if (
                nxt is not None
                and nxt.lineno == stmt.lineno + 1
                and nxt.col_offset == stmt.col_offset
                and indent_of(rows[nxt.lineno - 1]) == " " * stmt.col_offset
                and _blank(rows[nxt.lineno - 1]) == rows[nxt.lineno - 1]
            ):
                anchors.add((line, stmt.col_offset))
    return sorted(targets), sorted(anchors)


def modified(row: str, rng: random.Random) -> str:
    """`row` changed as a model asked to change it would: an integer in it one up, or
    `  # changed` appended."""
    numbers: list[tuple[int, int]] = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(row.strip() + "\n").readline):
            digits = token.type == tokenize.NUMBER and token.string.isdigit()
            if digits and (token.string == "0" or not token.string.startswith("0")):
                numbers.append(token.start[1])
    except (tokenize.TokenError, IndentationError, SyntaxError):
        numbers = []
    if numbers and rng.random() < 0.5:
        at = len(indent_of(row)) + rng.choice(numbers)
        digits = re.match(r"\d+", row[at:])
        assert digits is not None
        return row[:at] + str(int(digits.group()) + 1) + row[at + len(digits.group()) :]
    return row + "  # changed"


def changes_for(name: str, raw: bytes, view_bases: Mapping[int, int]) -> list[list[Change]]:
    """Per eligible cell (in a seeded order), its intended changes: a replace and an insert
    where the cell has a place for each. `view_bases` maps a cell's index to the read view's
    line number of its first source row (cells the view does not show verbatim are absent)."""
    nb = read_notebook(raw)
    if nb is None:
        return []
    sources = cell_sources(nb)
    picked: list[list[Change]] = []
    for index, cell in enumerate(nb.cells):
        source = str(cell.get("source", ""))
        if cell.get("cell_type") != "code" or index not in view_bases:
            continue
        if source.lstrip().startswith("%%") or "\r" in source or "\t" in source:
            continue
        tree = parse_tree(source)
        if tree is None:
            continue
        rows = tuple(source.split("\n"))
        targets, anchors = candidates(rows, tree)
        offsets = [s.col_offset for b in _blocks(tree) for s in b if s.col_offset > 0]
        if not targets and not anchors:
            continue
        rng = _seeded(name, index)
        unit = min(offsets)
        common = {
            "notebook": name, "raw": raw, "cell": index, "rows": rows, "unit": unit,
            "base": view_bases[index], "sources": sources,
        }  # fmt: skip
        mine: list[Change] = []
        if targets:
            line = rng.choice(targets)
            new_row = modified(rows[line], rng)
            mine.append(Change(kind="replace", line=line, new_row=new_row, **common))
        if anchors:
            line, column = rng.choice(anchors)
            new_row = " " * column + CHECKPOINT
            mine.append(Change(kind="insert", line=line, new_row=new_row, **common))
        mine = [c for c in mine if parses(c.intended)]
        if mine:
            picked.append(mine)
    _seeded(name).shuffle(picked)
    return picked


def pick_changes(per_notebook: Sequence[list[list[Change]]], limit: int | None) -> list[Change]:
    """Cells taken one per notebook per round (smallest notebooks first) up to `limit` cells
    (every cell when there is no limit); their changes, flattened."""
    cells: list[list[Change]] = []
    for depth in range(max((len(found) for found in per_notebook), default=0)):
        for found in per_notebook:
            if depth < len(found) and (limit is None or len(cells) < limit):
                cells.append(found[depth])
    return [change for cell in cells for change in cell]


# -- the hashline side: the edit a model means, and its mistakes --------------------------------


@dataclass(frozen=True, slots=True)
class Op:
    """One edit of a hashline section: `replace start..end` or `insert after start`."""

    verb: str  # "replace" or "insert_after"
    start: int
    end: int
    rows: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Draft:
    """A hashline edit as a model would send it, and the cell source it means (None: the
    edit has no meant result)."""

    change: Change
    tag: str
    ops: tuple[Op, ...]  # the change's own edit is the last
    meant: str | None
    json: bool = False
    lines_as_string: bool = False
    fenced: bool = False

    @property
    def main(self) -> Op:
        return self.ops[-1]

    def with_rows(self, rows: Sequence[str]) -> Draft:
        return replace(self, ops=(*self.ops[:-1], replace(self.main, rows=tuple(rows))))

    def arguments(self) -> dict[str, Any]:
        """The `notebook_edit` tool arguments."""
        if self.json:
            edits = [self._json_op(op) for op in self.ops]
            return {"edits": {"path": NOTEBOOK, "tag": self.tag, "edits": edits}}
        lines = [f"[{NOTEBOOK}#{self.tag}]"]
        for op in self.ops:
            if op.verb == "insert_after":
                lines.append(f"insert after {op.start}:")
            else:
                span = str(op.start) if op.start == op.end else f"{op.start}..{op.end}"
                lines.append(f"replace {span}:")
            lines += [f"+{row}" for row in op.rows]
        text = "\n".join(lines) + "\n"
        if self.fenced:
            text = f"{CHAT_BEFORE}\n```\n{text}```\n{CHAT_AFTER}\n"
        return {"patch": text}

    def _json_op(self, op: Op) -> dict[str, Any]:
        rows: Any = "\n".join(op.rows) + "\n" if self.lines_as_string else list(op.rows)
        if op.verb == "insert_after":
            return {"op": "insert_after", "line": op.start, "lines": rows}
        return {"op": "replace", "start": op.start, "end": op.end, "lines": rows}


def correct_draft(change: Change, tag: str) -> Draft:
    at = change.base + change.line
    verb = "replace" if change.kind == "replace" else "insert_after"
    return Draft(change, tag, (Op(verb, at, at, (change.new_row,)),), change.intended)


# Row-level mistakes, shared by every format: each maps the rows the model composed.


def dedent_rows(rows: Sequence[str]) -> list[str]:
    """The rows without their common leading indentation."""
    widths = [len(indent_of(r)) for r in rows if r.strip()]
    cut = min(widths, default=0)
    return [r[cut:] if r.strip() else r for r in rows]


def indent_rows(rows: Sequence[str], extra: int = 4) -> list[str]:
    return [" " * extra + r if r.strip() else r for r in rows]


def tab_rows(rows: Sequence[str], unit: int) -> list[str]:
    """Leading spaces written as tabs, one per indentation step."""
    out = []
    for row in rows:
        width = len(row) - len(row.lstrip(" "))
        out.append("\t" * (width // unit) + " " * (width % unit) + row[width:])
    return out


def trailing_rows(rows: Sequence[str]) -> list[str]:
    return [r + "   " for r in rows]


def cr_rows(rows: Sequence[str]) -> list[str]:
    return [r + "\r" for r in rows]


def unclosed_row(row: str) -> str:
    """`row` with a `(` left open: its last `)` dropped, or a `(` opened before its code."""
    closing = [m.start() for m in re.finditer(r"\)", row.split("#", 1)[0])]
    if closing:
        return row[: closing[-1]] + row[closing[-1] + 1 :]
    lead = indent_of(row)
    return f"{lead}({row[len(lead) :]}"


def elided_body(rows: Sequence[str], composed: Sequence[int]) -> list[str]:
    """`rows` with each run of rows the model did not compose (before the first composed row,
    after the last) written as one `# ... existing code ...` marker at its indentation."""
    first, last = min(composed), max(composed)
    out: list[str] = []
    if first > 0:
        out.append(indent_of(rows[0]) + ELIDED)
    out += rows[first : last + 1]
    if last + 1 < len(rows):
        out.append(indent_of(rows[last + 1]) + ELIDED)
    return out


def elision_range(change: Change) -> tuple[int, int]:
    """The rows (first, last; 3 of them) a model rewriting around the change would name."""
    return change.line - 1, change.line + 1


def _range_rows(change: Change) -> tuple[list[str], list[int]]:
    """The elision range's rows after the change, and which of them the model composed."""
    first, last = elision_range(change)
    rows = list(change.rows[first : last + 1])
    at = change.line - first
    if change.kind == "replace":
        rows[at] = change.new_row
        return rows, [at]
    rows.insert(at + 1, change.new_row)
    return rows, [at + 1]


def _hl_dropped(d: Draft) -> Draft:
    return d.with_rows(dedent_rows(d.main.rows))


def _hl_extra(d: Draft) -> Draft:
    return d.with_rows(indent_rows(d.main.rows))


def _hl_tabs(d: Draft) -> Draft:
    return d.with_rows(tab_rows(d.main.rows, d.change.unit))


def _hl_prefixes(d: Draft) -> Draft:
    first = d.main.start + (1 if d.main.verb == "insert_after" else 0)
    return d.with_rows([f"{first + i}:{row}" for i, row in enumerate(d.main.rows)])


def _hl_fenced(d: Draft) -> Draft:
    return replace(d, fenced=True)


def _hl_echo(d: Draft) -> Draft | None:
    if d.change.kind != "replace":
        return None
    return d.with_rows([*d.main.rows, d.change.rows[d.change.line + 1]])


def _hl_anchor(d: Draft) -> Draft | None:
    if d.change.kind != "insert":
        return None
    return d.with_rows([d.change.rows[d.change.line], *d.main.rows])


def _hl_shifted(d: Draft) -> Draft | None:
    """An insert on the cell's first row comes first; the change's number is counted after
    it (one too high) instead of from the read."""
    change = d.change
    if change.line < 1:
        return None
    note, above = _note_above(change)
    main = replace(d.main, start=d.main.start + 1, end=d.main.end + 1)
    return replace(d, ops=(above, main), meant=change.result([(0, note)]))


def _note_above(change: Change) -> tuple[str, Op]:
    note = indent_of(change.rows[1]) + NOTE_ROW
    return note, Op("insert_after", change.base, change.base, (note,))


def _shifted_lookalike(d: Draft) -> Draft | None:
    """The correct edit of another change the same call also means: the same note, and the
    same inserted row one statement lower, counted from the read. An insert's rows do not
    depend on its anchor, so a shifted insert is character for character that edit; a
    replace's rows are a version of the row they replace, so no such other change exists."""
    change = d.change
    if change.kind != "insert" or change.line + 1 >= len(change.rows):
        return None
    other = replace(change, line=change.line + 1)
    if not parses(other.intended):
        return None
    note, above = _note_above(other)
    main = correct_draft(other, d.tag).main
    return Draft(other, d.tag, (above, main), other.result([(0, note)]))


def _hl_trailing(d: Draft) -> Draft:
    return d.with_rows(trailing_rows(d.main.rows))


def _hl_crlf(d: Draft) -> Draft:
    return replace(d.with_rows(cr_rows(d.main.rows)), json=True)


def _hl_string_lines(d: Draft) -> Draft:
    return replace(d, json=True, lines_as_string=True)


def _hl_unclosed(d: Draft) -> Draft | None:
    if not _still_unclosed(d.change):
        return None
    return replace(d.with_rows([unclosed_row(r) for r in d.main.rows]), meant=None)


def _still_unclosed(change: Change) -> bool:
    """Whether the cell with the change's row left unclosed no longer parses (else the
    mistake is not for this change)."""
    sloppy = [(n, unclosed_row(text)) for n, text in change.edits()]
    return not parses("\n".join(apply_rows(change.rows, sloppy)))


def _hl_elision(d: Draft) -> Draft:
    first, last = elision_range(d.change)
    rows, composed = _range_rows(d.change)
    op = Op(
        "replace", d.change.base + first, d.change.base + last, tuple(elided_body(rows, composed))
    )
    return replace(d, ops=(op,))


def _hl_clean(d: Draft) -> Draft:
    return d


# -- the peers' side: what their tools are sent ---------------------------------------------------


@dataclass(frozen=True, slots=True)
class Sent:
    """What a peer's tool is sent: the new source (whole-source tools), or old_string and
    new_string (string replace), as rows; `composed` are the rows of `new` the model wrote
    (the others it copied from its read)."""

    new: tuple[str, ...]
    composed: tuple[int, ...]
    old: tuple[str, ...] = ()
    after: str | None = None  # the cell's row just after `old` (string replace)
    meant: str | None = None

    def map_composed(self, fn: Callable[[Sequence[str]], list[str]]) -> Sent:
        rows = list(self.new)
        mapped = fn([rows[i] for i in self.composed])
        for i, row in zip(self.composed, mapped, strict=True):
            rows[i] = row
        return replace(self, new=tuple(rows))


def whole_source(change: Change) -> Sent:
    rows = apply_rows(change.rows, change.edits())
    at = change.line + (1 if change.kind == "insert" else 0)
    return Sent(tuple(rows), (at,), meant=change.intended)


def unique_run(rows: Sequence[str], first: int, last: int) -> tuple[int, int]:
    """The smallest run of rows around first..last that occurs once in the cell's source (the
    `old_string` an agent following edit_cell_source's rule would choose)."""
    source = "\n".join(rows)
    lo, hi = first, last
    while True:
        snippet = "\n".join(rows[lo : hi + 1])
        if (snippet.strip() and source.count(snippet) == 1) or (lo == 0 and hi == len(rows) - 1):
            return lo, hi
        lo, hi = max(0, lo - 1), min(len(rows) - 1, hi + 1)


def string_replace(change: Change) -> Sent:
    lo, hi = unique_run(change.rows, change.line, change.line)
    old = change.rows[lo : hi + 1]
    rows = list(old)
    at = change.line - lo
    if change.kind == "replace":
        rows[at] = change.new_row
    else:
        at += 1
        rows.insert(at, change.new_row)
    after = change.rows[hi + 1] if hi + 1 < len(change.rows) else None
    return Sent(tuple(rows), (at,), old=tuple(old), after=after, meant=change.intended)


def _whole_fenced(s: Sent) -> Sent:
    rows = (CHAT_BEFORE, "```python", *s.new, "```", CHAT_AFTER)
    return replace(s, new=rows, composed=tuple(i + 2 for i in s.composed))


def _whole_elision(change: Change) -> Sent:
    first, last = elision_range(change)
    rows, composed = _range_rows(change)
    body = elided_body(rows, composed)
    new = [*change.rows[:first], *body, *change.rows[last + 1 :]]
    return Sent(tuple(new), (), meant=change.intended)


def _replace_elision(change: Change) -> Sent:
    first, last = elision_range(change)
    rows, composed = _range_rows(change)
    old = change.rows[first : last + 1]
    return Sent(tuple(elided_body(rows, composed)), (), old=tuple(old), meant=change.intended)


SentMistake = Callable[[Change, Sent], Sent | None]


def _peer_rows(fn: Callable[[Sequence[str]], list[str]]) -> SentMistake:
    return lambda change, s: s.map_composed(fn)


def _replace_dropped(change: Change, s: Sent) -> Sent:
    """Old and new strings both lose their common indentation."""
    return replace(s, new=tuple(dedent_rows(s.new)), old=tuple(dedent_rows(s.old)))


def _replace_all(fn: Callable[[Sequence[str]], list[str]]) -> SentMistake:
    """The mistake on every row of new_string (the body the model sends)."""
    return lambda change, s: replace(s, new=tuple(fn(s.new)))


def _replace_fenced(change: Change, s: Sent) -> Sent:
    return replace(s, new=(CHAT_BEFORE, "```python", *s.new, "```", CHAT_AFTER))


def _replace_echo(change: Change, s: Sent) -> Sent | None:
    if change.kind != "replace" or s.after is None:
        return None
    return replace(s, new=(*s.new, s.after))


def _unclosed(change: Change, s: Sent) -> Sent | None:
    if not _still_unclosed(change):
        return None
    return replace(s.map_composed(lambda rows: [unclosed_row(r) for r in rows]), meant=None)


@dataclass(frozen=True, slots=True)
class Mistake:
    """One mistake: what it is, and how it turns each format's correct edit into the sloppy
    one (None: that format cannot make it, `why` says why; a function returning None: not
    for this change)."""

    name: str
    what: str
    hashline: Callable[[Draft], Draft | None]
    whole: SentMistake | None  # overwrite_cell_source and NotebookEdit
    string: SentMistake | None  # edit_cell_source
    why: str = ""
    elision: bool = False  # the peers send their own elided edit (not a map of the correct)
    # the correct edit of another plausible change, when the sloppy call may equal it
    lookalike: Callable[[Draft], Draft | None] | None = None


_NO_PREFIX = "their reads show no `N:` row prefixes to copy"
_NO_LINES = "their edits name no lines or ranges"

MISTAKES: tuple[Mistake, ...] = (
    Mistake("clean", "no mistake (the control: applied as meant)", _hl_clean,
            lambda c, s: s, lambda c, s: s),
    Mistake("dropped_indent", "body rows lose their common leading indentation", _hl_dropped,
            _peer_rows(dedent_rows), _replace_dropped),
    Mistake("extra_indent", "body rows get 4 extra spaces", _hl_extra,
            _peer_rows(indent_rows), _replace_all(indent_rows)),
    Mistake("tabs", "body indentation written with tabs in a space-indented cell", _hl_tabs,
            lambda c, s: s.map_composed(lambda r: tab_rows(r, c.unit)),
            lambda c, s: replace(s, new=tuple(tab_rows(s.new, c.unit)))),
    Mistake("read_prefixes", "every body row prefixed with `N:` copied from the read view",
            _hl_prefixes, None, None, why=_NO_PREFIX),
    Mistake("fenced", "the edit inside a ``` fence, with chat text before and after",
            _hl_fenced, lambda c, s: _whole_fenced(s), _replace_fenced),
    Mistake("echo_after", "a replace body also repeats the row just after its range",
            _hl_echo, None, _replace_echo, why="a whole source has no range to overrun"),
    Mistake("insert_repeats_anchor", "an insert-after body starts with its anchor row",
            _hl_anchor, None, None, why="they have no insert-after-a-line edit"),
    Mistake("shifted_numbers", "a second edit's line counted after the first edit's insert",
            _hl_shifted, None, None, why=_NO_LINES, lookalike=_shifted_lookalike),
    Mistake("trailing_spaces", "body rows carry trailing spaces", _hl_trailing,
            _peer_rows(trailing_rows), _replace_all(trailing_rows)),
    Mistake("json_crlf", "JSON form, body rows ending in \\r", _hl_crlf,
            _peer_rows(cr_rows), _replace_all(cr_rows)),
    Mistake("json_string_lines", 'JSON form, "lines" one string instead of a list',
            _hl_string_lines, None, None, why="their source is one string already"),
    Mistake("unclosed_paren", "the body leaves a `(` unclosed (nothing meant: refuse or warn)",
            _hl_unclosed, _unclosed, _unclosed),
    Mistake("elision", "a 3-row replace whose body elides untouched rows as "
            "`# ... existing code ...`", _hl_elision, None, None, elision=True),
)  # fmt: skip


# -- contenders ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Attempt:
    """One delivery: refused or not, the reply, the file afterwards, what was meant."""

    refused: bool
    message: str
    written: bytes
    meant: str | None
    payload: str  # the tool call's arguments, as JSON
    # what the call means when it is, argument for argument, the correct call of another
    # change (checked by comparing the two calls, never assumed)
    lookalike: str | None = None


EditCall = Callable[[str], Mapping[str, Any]]


class Engine(Protocol):
    """What applies hashline edits: read `NOTEBOOK` in `folder`, then send the tool arguments
    `make` builds from the read's tag; refused or not, and the reply."""

    async def edit(self, folder: Path, make: EditCall) -> tuple[bool, str]: ...


class ToolsEngine:
    """Hashline's own tools layer over the folder (`open_directory`, snapshots in memory),
    called as an agent calls it: `notebook_read`, then `notebook_edit`."""

    async def edit(self, folder: Path, make: EditCall) -> tuple[bool, str]:
        from jupyter_hashline.tools.calls import run_tool
        from jupyter_hashline.tools.directory import open_directory

        workspace = open_directory(folder, ":memory:")
        try:
            read = await run_tool(workspace, "notebook_read", {"path": NOTEBOOK}, agent="agent")
            if read.is_error:
                raise RuntimeError(f"hashline could not read the notebook: {read.text}")
            done = await run_tool(
                workspace, "notebook_edit", make(read.reply["tag"]), agent="agent"
            )
        finally:
            await workspace.aclose()
        return done.is_error, done.text


async def view_of(raw: bytes, folder: Path) -> str:
    """Hashline's read view of a notebook (where the line numbers of its edits come from)."""
    from jupyter_hashline.tools.calls import run_tool
    from jupyter_hashline.tools.directory import open_directory

    (folder / NOTEBOOK).write_bytes(raw)
    workspace = open_directory(folder, ":memory:")
    try:
        read = await run_tool(workspace, "notebook_read", {"path": NOTEBOOK}, agent="agent")
    finally:
        await workspace.aclose()
    if read.is_error:
        raise RuntimeError(read.text.splitlines()[0] if read.text else "read failed")
    return str(read.reply["view"])


def view_bases(view: str, nb: Any) -> dict[int, int]:
    """Per cell index, the view's line number of its first source row: for the cells the
    view shows verbatim, one marker per cell, in order."""
    rows: dict[int, str] = {}
    for line in view.split("\n"):
        found = re.match(r"^(\d+):(.*)$", line)
        if found:
            rows[int(found.group(1))] = found.group(2)
    markers = [n for n in sorted(rows) if rows[n].startswith("# %% [")]
    if len(markers) != len(nb.cells):
        return {}
    bases: dict[int, int] = {}
    for index, (cell, marker) in enumerate(zip(nb.cells, markers, strict=True)):
        source = str(cell.get("source", ""))
        shown = [rows.get(marker + 1 + i) for i in range(len(source.split("\n")))]
        if source and shown == source.split("\n"):
            bases[index] = marker + 1
    return bases


class Contender(Protocol):
    name: str

    def not_for(self, mistake: Mistake) -> str | None:
        """Why this format cannot make the mistake (None: it can)."""
        ...

    async def attempt(self, change: Change, mistake: Mistake, folder: Path) -> Attempt | None:
        """The change delivered with the mistake (None: the mistake is not for this change)."""
        ...


class Hashline:
    def __init__(self, engine: Engine | None = None, name: str = "hashline") -> None:
        self.engine: Engine = engine if engine is not None else ToolsEngine()
        self.name = name

    def not_for(self, mistake: Mistake) -> str | None:
        return None

    async def attempt(self, change: Change, mistake: Mistake, folder: Path) -> Attempt | None:
        if mistake.hashline(correct_draft(change, "0000")) is None:
            return None
        (folder / NOTEBOOK).write_bytes(change.raw)
        sent: list[Draft] = []

        def make(tag: str) -> Mapping[str, Any]:
            draft = mistake.hashline(correct_draft(change, tag))
            assert draft is not None
            sent.append(draft)
            return draft.arguments()

        refused, message = await self.engine.edit(folder, make)
        draft = sent[0]
        written = (folder / NOTEBOOK).read_bytes()
        other = mistake.lookalike(draft) if mistake.lookalike is not None else None
        same_call = other is not None and other.arguments() == draft.arguments()
        lookalike = other.meant if other is not None and same_call else None
        payload = json.dumps(draft.arguments())
        return Attempt(refused, message, written, draft.meant, payload, lookalike)


class _Peer:
    """A peer's tool, simulated against nbformat: the notebook read, one cell's source set
    (or the call refused), the notebook written back as sent (no parse check)."""

    name = ""
    string = False

    def _mistake(self, mistake: Mistake) -> SentMistake | None:
        return mistake.string if self.string else mistake.whole

    def not_for(self, mistake: Mistake) -> str | None:
        if mistake.elision or self._mistake(mistake) is not None:
            return None
        return mistake.why or "not a mistake this format can make"

    async def attempt(self, change: Change, mistake: Mistake, folder: Path) -> Attempt | None:
        if self.not_for(mistake) is not None:
            return None
        if mistake.elision:
            sent: Sent | None = _replace_elision(change) if self.string else _whole_elision(change)
        else:
            fn = self._mistake(mistake)
            assert fn is not None
            correct = string_replace(change) if self.string else whole_source(change)
            sent = fn(change, correct)
        if sent is None:
            return None
        nb = read_notebook(change.raw)
        assert nb is not None
        refused, message, arguments = self._call(nb, change, sent)
        written = change.raw if refused else nbformat.writes(nb).encode("utf-8")
        return Attempt(refused, message, written, sent.meant, json.dumps(arguments))

    def _call(self, nb: Any, change: Change, sent: Sent) -> tuple[bool, str, dict[str, Any]]:
        raise NotImplementedError


class OverwriteCellSource(_Peer):
    """jupyter-mcp-server `overwrite_cell_source(cell_index, cell_source)`."""

    name = "jupyter-mcp-server overwrite_cell_source"

    def _call(self, nb: Any, change: Change, sent: Sent) -> tuple[bool, str, dict[str, Any]]:
        source = "\n".join(sent.new)
        nb.cells[change.cell].source = source
        arguments = {"cell_index": change.cell, "cell_source": source}
        return False, f"Cell {change.cell} overwritten successfully", arguments


class EditCellSource(_Peer):
    """jupyter-mcp-server `edit_cell_source(cell_index, old_string, new_string)`: old_string
    must occur in the cell's source exactly once (replace_all left false)."""

    name = "jupyter-mcp-server edit_cell_source"
    string = True

    def _call(self, nb: Any, change: Change, sent: Sent) -> tuple[bool, str, dict[str, Any]]:
        old, new = "\n".join(sent.old), "\n".join(sent.new)
        arguments = {"cell_index": change.cell, "old_string": old, "new_string": new}
        source = str(nb.cells[change.cell].source)
        count = source.count(old) if old else 0
        if not old:
            return True, "old_string must not be empty", arguments
        if count == 0:
            return True, "old_string not found in cell source", arguments
        if count > 1:
            return (
                True,
                (
                    f"old_string is not unique in cell source ({count} occurrences). "
                    "Use replace_all=True to replace all occurrences."
                ),
                arguments,
            )
        nb.cells[change.cell].source = source.replace(old, new, 1)
        return False, f"Cell {change.cell} edited successfully!", arguments


class NotebookEdit(_Peer):
    """Claude Code's NotebookEdit, `edit_mode="replace"`: the cell found by id (`cell-N` by
    index where the notebook stores none), its source set to new_source."""

    name = "Claude Code NotebookEdit"

    def _call(self, nb: Any, change: Change, sent: Sent) -> tuple[bool, str, dict[str, Any]]:
        cell = nb.cells[change.cell]
        cell_id = str(cell.get("id") or f"cell-{change.cell}")
        source = "\n".join(sent.new)
        cell.source = source
        arguments = {"cell_id": cell_id, "new_source": source, "edit_mode": "replace"}
        return False, f"Updated cell {cell_id} with {source}", arguments


def peers() -> list[Contender]:
    return [OverwriteCellSource(), EditCellSource(), NotebookEdit()]


# -- the oracle ---------------------------------------------------------------------------------


class Outcome(str, Enum):
    AS_MEANT = "as_meant"
    WARNED = "warned"
    REFUSED_HINT = "refused_with_hint"
    REFUSED_BARE = "refused_bare"
    WRONG = "applied_wrongly"
    SILENT = "unparseable_silent"
    LOOKALIKE = "lookalike"


_PARSE_WARNING = re.compile(r"(does not|doesn't|no longer|would not) parse|syntax ?error", re.I)
_HINT = re.compile(
    r"\blines? \d+|\b\d+\.\.\d+|\b\d+:|re-?send|send |re-?read|old_string|indent|fence|echo"
    r"|existing code|parse",
    re.I,
)


def judge(change: Change, attempt: Attempt) -> Outcome:
    """The outcome of one attempt, from the file on disk (see the module docstring)."""
    if attempt.written == change.raw:
        hinted = bool(attempt.message.strip()) and _HINT.search(attempt.message) is not None
        return Outcome.REFUSED_HINT if hinted else Outcome.REFUSED_BARE
    if attempt.refused:
        return Outcome.WRONG  # a refusal that wrote anyway
    nb = read_notebook(attempt.written)
    if nb is None:
        return Outcome.WRONG
    after = cell_sources(nb)
    others = [s for i, s in enumerate(change.sources) if i != change.cell]
    if (
        len(after) != len(change.sources)
        or [s for i, s in enumerate(after) if i != change.cell] != others
    ):
        return Outcome.WRONG
    kind, source = after[change.cell]
    if kind != "code":
        return Outcome.WRONG
    warned = _PARSE_WARNING.search(attempt.message) is not None
    if attempt.meant is not None and source == attempt.meant:
        return Outcome.AS_MEANT
    if attempt.lookalike is not None and source == attempt.lookalike:
        return Outcome.LOOKALIKE
    if not parses(source):
        return (
            Outcome.WARNED
            if warned and attempt.meant is None
            else (Outcome.WRONG if warned else Outcome.SILENT)
        )
    return Outcome.WRONG


# -- running and reporting -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Result:
    contender: str
    mistake: str
    case: str
    kind: str
    outcome: str
    message: str
    payload: str


async def run_all(
    changes: Sequence[Change],
    contenders: Sequence[Contender],
    mistakes: Sequence[Mistake] = MISTAKES,
) -> list[Result]:
    results: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="hashline-sloppy-") as tmp:
        for n, contender in enumerate(contenders):
            folder = Path(tmp) / str(n)
            folder.mkdir()
            for change in changes:
                for mistake in mistakes:
                    attempt = await contender.attempt(change, mistake, folder)
                    if attempt is None:
                        continue
                    outcome = judge(change, attempt)
                    results.append(Result(
                        contender.name, mistake.name, change.name, change.kind, outcome.value,
                        attempt.message[:600], attempt.payload[:2000],
                    ))  # fmt: skip
    return results


@dataclass(frozen=True, slots=True)
class Verdict:
    attempts: int
    applied_wrongly: int
    unparseable_silent: int
    controls: int
    controls_as_meant: int
    lookalikes: int = 0  # reported: no edit format that names lines can tell these apart

    @property
    def met(self) -> bool:
        return (
            self.attempts > 0
            and self.applied_wrongly == 0
            and self.unparseable_silent == 0
            and self.controls_as_meant == self.controls > 0
        )


def verdict(results: Iterable[Result], contender: str = "hashline") -> Verdict:
    mine = [r for r in results if r.contender == contender]
    count = Counter(r.outcome for r in mine)
    controls = [r for r in mine if r.mistake == "clean"]
    return Verdict(
        attempts=len(mine),
        applied_wrongly=count[Outcome.WRONG.value],
        unparseable_silent=count[Outcome.SILENT.value],
        controls=len(controls),
        controls_as_meant=sum(r.outcome == Outcome.AS_MEANT.value for r in controls),
        lookalikes=count[Outcome.LOOKALIKE.value],
    )


def tally(
    results: Sequence[Result], contenders: Sequence[Contender], mistakes: Sequence[Mistake]
) -> list[dict[str, Any]]:
    """Per mistake and contender: the attempts and each outcome's count, or why n/a."""
    rows: list[dict[str, Any]] = []
    for mistake in mistakes:
        for contender in contenders:
            mine = [
                r for r in results if r.contender == contender.name and r.mistake == mistake.name
            ]
            why = contender.not_for(mistake)
            row: dict[str, Any] = {"mistake": mistake.name, "contender": contender.name}
            if why is not None or not mine:
                row["n/a"] = why or "no change this mistake applies to"
            else:
                count = Counter(r.outcome for r in mine)
                row |= {"n": len(mine)} | {o.value: count[o.value] for o in Outcome}
            rows.append(row)
    return rows


def table(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    widths = [len(o.value) + 2 for o in Outcome]
    heads = "".join(f"{o.value:>{w}}" for o, w in zip(Outcome, widths, strict=True))
    lines = [f"{'mistake':<23}{'contender':<42}{'n':>5}{heads}"]
    last = ""
    for row in rows:
        label = row["mistake"] if row["mistake"] != last else ""
        last = row["mistake"]
        if "n/a" in row:
            lines.append(f"{label:<23}{row['contender']:<42}{'n/a':>5}  ({row['n/a']})")
            continue
        cols = "".join(f"{row[o.value]:>{w}}" for o, w in zip(Outcome, widths, strict=True))
        lines.append(f"{label:<23}{row['contender']:<42}{row['n']:>5}{cols}")
    return lines


def report(
    results: Sequence[Result],
    contenders: Sequence[Contender],
    notes: Sequence[str],
    mistakes: Sequence[Mistake] = MISTAKES,
) -> list[str]:
    lines = ["", "== sloppy agent: one intended change, delivered with each mistake", *notes]
    lines += table(tally(results, contenders, mistakes))
    lines += ["", *verdict_lines(verdict(results))]
    misses = [
        r
        for r in results
        if r.contender == "hashline"
        and (
            r.outcome in (Outcome.WRONG.value, Outcome.SILENT.value)
            or (r.mistake == "clean" and r.outcome != Outcome.AS_MEANT.value)
        )
    ]
    for r in misses[:12]:
        first = (r.message.strip().splitlines() or [""])[0][:120]
        lines.append(f"  hashline {r.outcome}: {r.mistake} on {r.case}: {first}")
    if len(misses) > 12:
        lines.append(f"  ... and {len(misses) - 12} more (the JSON figures hold every one)")
    return lines


def verdict_lines(v: Verdict) -> list[str]:
    def mark(ok: bool) -> str:
        return "MET" if ok else "MISSED"

    share = v.controls_as_meant / v.controls if v.controls else 0.0
    rows = [
        ("applied wrongly", str(v.applied_wrongly), "0", v.applied_wrongly == 0),
        ("unparseable without a word", str(v.unparseable_silent), "0",
         v.unparseable_silent == 0),
        ("controls applied as meant", f"{share:.0%}", "100%",
         v.controls > 0 and v.controls_as_meant == v.controls),
    ]  # fmt: skip
    lines = [
        f"  hashline {what:<34}{got:>8}   target {want:<6}{mark(ok)}"
        for what, got, want, ok in rows
    ]
    lines.append(
        f"  hashline {'correct call of another change':<34}{v.lookalikes:>8}   reported "
        "(a shifted insert is exactly the correct insert one row lower: no line-numbered "
        "format can refuse it without refusing that edit)"
    )
    return [*lines, f"  hashline sloppy-edit targets, all together: {mark(v.met)}"]


async def build_changes(corpus: Path, limit: int | None) -> tuple[list[Change], list[str], str]:
    """The intended changes, notes on what was left out, and a line saying where they came
    from (CORPUS_ABSENT in it when the corpus is absent)."""
    if not (corpus / "MANIFEST.tsv").is_file():
        return [], [], f"{CORPUS_ABSENT}: {corpus} is absent"
    notebooks, notes = corpus_notebooks(corpus)
    per_notebook: list[list[list[Change]]] = []
    with tempfile.TemporaryDirectory(prefix="hashline-sloppy-view-") as tmp:
        for name, raw in notebooks:
            nb = read_notebook(raw)
            assert nb is not None
            try:
                view = await view_of(raw, Path(tmp))
            except RuntimeError as error:
                notes.append(f"{name}: hashline could not read it: {error}")
                continue
            found = changes_for(name, raw, view_bases(view, nb))
            if found:
                per_notebook.append(found)
    changes = pick_changes(per_notebook, limit)
    used = len({c.notebook for c in changes})
    cells = len({(c.notebook, c.cell) for c in changes})
    where = f"{len(changes)} intended changes in {cells} cells of {used} notebooks from {corpus}"
    return changes, notes, where


def missing_inputs(where: str, changes: Sequence[Change]) -> list[str]:
    if CORPUS_ABSENT in where:
        return [where]
    return [] if changes else [f"no eligible cell found ({where})"]


def main() -> None:
    parser = argparse.ArgumentParser(description="sloppy-agent table")
    parser.add_argument("--smoke", action="store_true", help=f"{CELLS['smoke']} cells")
    parser.add_argument("--quick", action="store_true", help=f"{CELLS['quick']} cells")
    parser.add_argument("--repeats", type=int, default=1, help="ignored (not a timing bench)")
    parser.add_argument("--json", type=Path, default=None, help="where to write raw figures")
    parser.add_argument("--corpus", type=Path, default=CORPUS_DIR)
    args = parser.parse_args()
    limit = CELLS["smoke"] if args.smoke else CELLS["quick"] if args.quick else None
    changes, skipped, where = asyncio.run(build_changes(args.corpus, limit))
    contenders: list[Contender] = [Hashline(), *peers()]
    results = asyncio.run(run_all(changes, contenders))
    notes = [f"changes: {where}", "peers: models of their documented behaviour, in process"]
    notes += [f"  left out: {note}" for note in skipped]
    print("\n".join(report(results, contenders, notes)))
    missing = missing_inputs(where, changes)
    for why in missing:
        print(f"!! MISSING: {why} (`python -m bench --check` fails on it)")
    result = verdict(results)
    payload = {
        "table": "sloppy",
        "notes": notes,
        "missing": missing,
        "hashline": asdict(result) | {"met": result.met},
        "rows": tally(results, contenders, MISTAKES),
        "results": [asdict(r) for r in results],
    }
    path = args.json or RESULTS_DIR / "sloppy.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=1))


if __name__ == "__main__":
    main()
