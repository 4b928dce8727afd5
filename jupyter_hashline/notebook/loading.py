"""Reading notebook files into memory.

Invariants:
- `load_notebook(raw)` gives the notebook nbformat.reads would give for a v4 file (cell sources
  joined, transient keys dropped), as plain dicts, without repairing anything and without
  nbformat's per-read validation cost, with one difference: outputs and attachments stay as the
  file stores them (lists of lines are not joined). Nothing reads or copies an output that no
  one asks about; the serializer and the output views accept both forms.
  Files older than v4 are converted by nbformat and then treated as legacy (their converted ids
  are random, so they are not shown).
- The JSON is parsed by orjson when it is installed and accepts the text, else by the standard
  library (which also reads NaN, huge integers and lone surrogates), so both give one result.
- A loaded notebook keeps the file's bytes (UTF-8; text given as `str` is encoded): orjson
  parses bytes as they are, so a file that parses is never decoded as a whole. Bytes that are
  not UTF-8 text (undecodable, NUL) are `NotTextError`, as a text read of them would be.
- A file that is not JSON, or not a notebook at all, raises `InvalidNotebookError` saying what
  to do. Schema problems do not stop a read; writes validate what they change (validation.py).
- Each loaded text knows where its cells' bytes are (incremental/layout.py), so a write can
  reuse the bytes of the cells it does not change; the check that the layout is nbformat's runs
  once per text, on the first write that needs it.
"""

from __future__ import annotations

import copy
import gc
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import islice, repeat, takewhile
from operator import add, attrgetter, is_, itemgetter, truth
from typing import Any

import nbformat

from ..hashline.disk import decode_text
from ..hashline.errors import NotTextError
from .errors import InvalidNotebookError
from .ids import DisplayIds, display_ids
from .incremental.layout import HEAD, CellLayout, find_layout, written_layout
from .keep import KeptLayout, find_kept_layout
from .projection import marker_starts, project_notebook
from .repair import needs_repair
from .serialize import CellJsonCache, is_json_mime, joined_lines, serialize_notebook
from .validation import cell_structure_problem, structure_problem, top_level_problem

try:  # orjson is a declared dependency; the stdlib keeps working where it cannot be installed
    import orjson

    _fast_loads: Callable[[str | bytes], Any] | None = orjson.loads
except ImportError:  # pragma: no cover - exercised only without orjson
    _fast_loads = None

Notebook = dict[str, Any]
_NB_TRANSIENT = ("orig_nbformat", "orig_nbformat_minor", "signature")
_SORTED_CELL_KEYS = frozenset(
    {
        ("cell_type", "execution_count", "id", "metadata", "outputs", "source"),
        ("cell_type", "execution_count", "metadata", "outputs", "source"),
        ("cell_type", "id", "metadata", "source"),
        ("cell_type", "metadata", "source"),
        ("attachments", "cell_type", "id", "metadata", "source"),
        ("attachments", "cell_type", "metadata", "source"),
    }
)
"""The key orders of ordinary cells as nbformat writes them (sorted): checked by one lookup."""
_SORTED_OUTPUT_KEYS = frozenset(
    {
        ("name", "output_type", "text"),
        ("data", "execution_count", "metadata", "output_type"),
        ("data", "metadata", "output_type"),
        ("ename", "evalue", "output_type", "traceback"),
    }
)
_ORDINARY = {
    ("cell_type", "execution_count", "id", "metadata", "outputs", "source"): "code",
    ("cell_type", "execution_count", "metadata", "outputs", "source"): "code",
    ("cell_type", "id", "metadata", "source"): "markdown",
    ("cell_type", "metadata", "source"): "markdown",
}
"""Key orders of the commonest cells, each with the only cell type it is ordinary for."""
SPLIT_MIMES = frozenset({"application/javascript", "image/svg+xml"})
"""Mime types besides `text/*` whose values nbformat stores as lists of lines."""
_UNSET = object()


class paused_gc:
    """Pause the cyclic garbage collector while building or walking a notebook.

    Parsing a large notebook allocates hundreds of thousands of acyclic objects; each batch of
    them makes the collector rescan every object alive in the process (several times the cost
    of the parse itself in a server holding other notebooks). Nothing built here holds a cycle,
    so pausing loses nothing; the previous state is restored, and nesting is harmless.

    A class rather than a generator: a first edit of a small notebook enters it a dozen times,
    and a generator-based context manager costs several Python calls per use."""

    __slots__ = ("_paused",)

    def __init__(self) -> None:
        self._paused = False

    def __enter__(self) -> None:
        if gc.isenabled():
            gc.disable()
            self._paused = True

    def __exit__(self, *exc: object) -> None:
        if self._paused:
            self._paused = False
            gc.enable()


def parse_json(raw: str | bytes, path: str = "notebook") -> Any:
    """`json.loads(raw)`, by orjson where it can (it is several times faster on large files).

    Bytes that orjson refuses are decoded as strict UTF-8 text first (`NotTextError` if they
    are not text), so the standard library sees what a text read would have given it."""
    if _fast_loads is not None:
        try:
            return _fast_loads(raw)
        except (ValueError, TypeError):
            pass  # NaN, integers over 64 bits, lone surrogates, or not JSON: let json decide
    return json.loads(raw if isinstance(raw, str) else decode_text(path, raw))


def torn_notebook(path: str, data: bytes) -> bool:
    """Whether `data` cannot be a notebook file at all (empty, cut off, not a JSON object): what
    a save killed halfway leaves. Only `.ipynb` paths are judged; nothing else is torn."""
    if not path.endswith(".ipynb"):
        return False
    try:
        return not isinstance(parse_json(data, path), dict)
    except Exception:  # not JSON, or not text: unreadable
        return True


class LoadedNotebook:
    """One version of a notebook file: its raw text, the notebook, and what it projects to.

    Treat `nb` as immutable: it is shared with caches (projections, summaries, the layout).
    `survey` says which cells are stored unlike nbformat (a source not stored as its lines,
    transient metadata, unsorted keys: their bytes are never reused), which need a repair on
    write, and which is too broken to write.
    """

    __slots__ = (
        "_ids",
        "_kept",
        "_layout",
        "_projection",
        "_splice",
        "_starts",
        "_top",
        "_views",
        "_written",
        "nb",
        "raw",
        "survey",
    )

    def __init__(
        self,
        raw: bytes,
        nb: Notebook,
        *,
        layout: CellLayout | object | None = _UNSET,
        survey: CellSurvey | None = None,
        written: bool = False,
        top_level: str | object | None = _UNSET,
        kept: KeptLayout | None = None,
    ) -> None:
        """`layout` when the caller knows it, else found on demand (`written`: `raw` is
        `serialize_notebook(nb)`, so its layout needs no checking); `survey` when the cells
        were surveyed (else the cells count as checked and clean: a notebook this package just
        built); `top_level` when the top level's schema problem is known (see
        `top_level_problem`); `kept` when `raw` was written in a kept layout (keep.py)."""
        self.raw = raw
        self._kept: KeptLayout | str | None = kept
        self.nb = nb
        self.survey = survey or CellSurvey()
        self._layout = layout
        self._written = written
        self._top: object = top_level
        self._projection: str | None = None
        self._starts: list[int] | None = None
        self._ids: DisplayIds | None = None
        self._views: dict[str, Any] = {}
        self._splice: Splice | None = None

    @property
    def projection(self) -> str:
        if self._projection is None:
            with paused_gc():
                self._projection = project_notebook(self.nb, self.ids.ids)
        return self._projection

    def projected_length(self) -> int | None:
        """The projection's length when it was made, else None (nothing is computed)."""
        return None if self._projection is None else len(self._projection)

    @property
    def marker_starts(self) -> list[int]:
        """Offsets of the marker lines in `projection` (cached)."""
        if self._starts is None:
            self._starts = marker_starts(self.projection)
        return self._starts

    @property
    def ids(self) -> DisplayIds:
        if self._ids is None:
            with paused_gc():
                self._ids = display_ids(self.nb.get("cells", []))
        return self._ids

    @property
    def layout(self) -> CellLayout | None:
        """Where each cell's bytes are in `raw`, when they can be reused as they are (cached)."""
        if self._layout is _UNSET:
            if self._written:
                self._layout = written_layout(self.raw, self.nb)
            else:
                self._layout = find_layout(self.raw, self.nb, self.survey.suspect)
        return self._layout  # type: ignore[return-value]

    def known_layout(self) -> CellLayout | None:
        """The layout when it is known or needs no checking (`written`), else None: a small
        file's layout check would cost about what serializing it costs."""
        if self._layout is _UNSET and not self._written:
            return None
        return self.layout

    def matches_nbformat(self, cache: CellJsonCache | None = None) -> bool:
        """Whether `raw` is exactly what nbformat writes for `nb`, checked by writing it whole
        (`cache` keeps the cells' JSON for the write that follows). Once true it counts as
        `written`: its layout needs no other check. For small files, where this costs less
        than proving a kept layout (keep.py) or sampling one."""
        if self._written:
            return True
        if not (self.raw.startswith(HEAD[:12]) and self.raw.endswith(b"}\n")):
            return False  # not nbformat's opening or end: no need to write it to know
        try:
            same = serialize_notebook(self.nb, cache=cache).encode("utf-8") == self.raw
        except (UnicodeEncodeError, TypeError, ValueError):  # a lone surrogate, a non-JSON value
            return False
        if same:
            self._written = True
            if self._layout is None:  # sampled as unknown: now known
                self._layout = _UNSET
        return same

    def kept_layout(self) -> KeptLayout | str:
        """The layout `raw` has, proven on every byte (keep.py), or why it has none (cached)."""
        if self._kept is None:
            with paused_gc():
                self._kept = find_kept_layout(self.raw, self.nb)
        return self._kept

    def top_level_problem(self) -> str | None:
        """The schema problem of everything but the cells (metadata, version), or None. Cached."""
        if self._top is _UNSET:
            self._top = top_level_problem(self.nb)
        return self._top  # type: ignore[return-value]

    def write_problem(self) -> str | None:
        """Why this notebook can be read but not written, or None: its top level (metadata,
        version) fails the schema, or a cell is too broken to be a cell (validation.py). Other
        schema problems of cells are left to the writes that change those cells."""
        return self.top_level_problem() or self.survey.broken

    def cached_view(self, fmt: str, default: Any = None) -> Any:
        """The view `fmt` if it was computed, else `default` (nothing is computed)."""
        return self._views.get(fmt, default)

    def view(self, fmt: str, render: Callable[[Notebook, str], Any]) -> Any:
        """`render(nb, fmt)`, computed once per `fmt` (jupytext texts, annotations, ...)."""
        if fmt not in self._views:
            with paused_gc():
                self._views[fmt] = render(self.nb, fmt)
        return self._views[fmt]

    def splices_annotations(self) -> bool:
        """Whether this version was spliced from one whose `ANNOTATIONS` view was made (then
        making its own costs only the spliced cells)."""
        return self._splice is not None

    def take_splice(self) -> Splice | None:
        """How `splice_views` made this version's projection from one whose `ANNOTATIONS` view
        was made, once (then forgotten: it holds that view), else None."""
        splice, self._splice = self._splice, None
        return splice


ANNOTATIONS = "annotations"
"""The view of a loaded notebook holding its output summaries by projection line (filesystem.py
renders it; `splice_views` carries the last version's to the next, see `Splice`)."""


@dataclass(frozen=True, slots=True)
class KeptRun:
    """Old cells shown as before inside a splice's middle: `length` characters at offset
    `offset` of the new text, `lines` lines that started `old_line` lines after the middle's
    start in the old text."""

    offset: int
    length: int
    old_line: int
    lines: int


@dataclass(frozen=True, slots=True)
class Splice:
    """How `splice_views` made a version's projection from the one before: its first `head`
    and last `tail` cells are the old ones, shown as before; the text of the cells between
    starts at offset `start` in both texts and has `old_lines` lines before, `new_lines` now;
    `runs` are the old cells shown as before between them, in the new text's order.
    `annotations`: the old version's `ANNOTATIONS` view, so the new one's can reuse its notes
    of the kept cells (kept only when the old version's was made)."""

    annotations: Mapping[int, Any]
    head: int
    tail: int
    start: int
    old_lines: int
    new_lines: int
    runs: tuple[KeptRun, ...] = ()


def splice_views(previous: LoadedNotebook, loaded: LoadedNotebook) -> None:
    """Give `loaded` its projection from `previous`'s, re-projecting only the cells it does not
    share with `previous` (the very same objects, shown under the same ids, wherever they are):
    a change to a few scattered cells costs those cells, not the notebook or the stretch
    between them. Does nothing when `previous` was never projected."""
    if previous._projection is None or loaded._projection is not None:
        return
    old, new = previous.nb.get("cells", []), loaded.nb.get("cells", [])
    head = len(list(takewhile(truth, map(is_, old, new))))
    limit = min(len(old), len(new)) - head
    tail = len(list(islice(takewhile(truth, map(is_, reversed(old), reversed(new))), limit)))
    ids, old_ids = loaded.ids.ids, previous.ids.ids
    if ids[:head] != old_ids[:head] or ids[len(ids) - tail :] != old_ids[len(old_ids) - tail :]:
        head = tail = 0  # ids shifted (derived ids, or duplicates renamed): match cell by cell
    text, starts = previous.projection, previous.marker_starts
    start = starts[head] if head < len(old) else len(text)
    end = starts[len(old) - tail] if tail else len(text)
    with paused_gc():
        middle, middle_starts, pieces = _splice_middle(previous, loaded, head, len(new) - tail)
    shift = len(middle) - (end - start)
    loaded._projection = text[:start] + middle + text[end:]
    before = previous._views.get(ANNOTATIONS)
    if before is not None:
        runs, old_lines = _kept_runs(text, start, end, pieces)
        loaded._splice = Splice(before, head, tail, start, old_lines, middle.count("\n"), runs)
    loaded._starts = [
        *starts[:head],
        *map(add, middle_starts, repeat(start)),
        *map(add, starts[len(old) - tail :], repeat(shift)),
    ]


def _kept_runs(
    text: str, start: int, end: int, pieces: list[tuple[int, int, int]]
) -> tuple[tuple[KeptRun, ...], int]:
    """The `KeptRun`s of the old middle `text[start:end]` from its pieces `(offset in the new
    middle, begin, finish in the old text)`, and its line count, counted once, in C. No runs
    (their notes are all made again) when a piece lies outside the old middle or two pieces
    share old cells (a cell shown twice)."""
    runs: list[KeptRun] = []
    line, counted = 0, start
    for offset, begin, finish in sorted(pieces, key=itemgetter(1)):
        if begin < counted or finish > end:
            return (), text.count("\n", start, end)
        line += text.count("\n", counted, begin)
        lines = text.count("\n", begin, finish)
        runs.append(KeptRun(start + offset, finish - begin, line, lines))
        line, counted = line + lines, finish
    return tuple(sorted(runs, key=attrgetter("offset"))), line + text.count("\n", counted, end)


def _splice_middle(
    previous: LoadedNotebook, loaded: LoadedNotebook, first: int, stop: int
) -> tuple[str, list[int], list[tuple[int, int, int]]]:
    """The projection of `loaded`'s cells `first..stop-1`, its marker offsets and its old
    pieces (offset, then begin and finish in the old text): runs of cells `previous` showed
    the same way (same object, same id, in order) as slices of its text, the other cells
    projected.

    A cell is looked for first where the run before it leaves off (cells kept in place, or
    shifted alike by cells inserted or deleted before them), and a run is measured from there
    in C; an index of every old cell is made only when a cell is not found there and the next
    one is not either (not a cell replaced in place). A cell not found is projected, which is
    never wrong: reuse only saves work."""
    old_cells, cells = previous.nb.get("cells", []), loaded.nb.get("cells", [])
    old_ids, ids = previous.ids.ids, loaded.ids.ids
    text, starts = previous.projection, previous.marker_starts
    where: dict[int, int] | None = None

    def located(index: int, guess: int) -> int | None:
        nonlocal where
        if 0 <= guess < len(old_cells) and old_cells[guess] is cells[index]:
            return guess
        after, following = guess + 1, index + 1
        in_place = following < len(cells) and 0 <= after < len(old_cells)
        if where is None and in_place and old_cells[after] is cells[following]:
            return None  # replaced in place: the next cell is where it was
        if where is None:
            where = {id(cell): n for n, cell in enumerate(old_cells)}
        return where.get(id(cells[index]))

    parts: list[str] = []
    offsets: list[int] = []
    pieces: list[tuple[int, int, int]] = []
    pos, index, shift = 0, first, 0
    while index < stop:
        found = located(index, index + shift)
        if found is None or old_ids[found] != ids[index]:
            run = index + 1
            while run < stop and located(run, run + shift) is None:
                run += 1
            piece = project_notebook({"cells": cells[index:run]}, ids[index:run])
            offsets.extend(pos + at for at in marker_starts(piece))
        else:
            count = _same_run(cells, old_cells, ids, old_ids, index, found, stop)
            begin = starts[found]
            finish = starts[found + count] if found + count < len(starts) else len(text)
            piece = text[begin:finish]
            pieces.append((pos, begin, finish))
            offsets.extend(map(add, starts[found : found + count], repeat(pos - begin)))
            run, shift = index + count, found - index
        parts.append(piece)
        pos += len(piece)
        index = run
    return "".join(parts), offsets, pieces


def _same_run(
    cells: Sequence[Any],
    old_cells: Sequence[Any],
    ids: Sequence[str],
    old_ids: Sequence[str],
    index: int,
    found: int,
    stop: int,
) -> int:
    """How many cells from `cells[index]` (before `stop`) are the very objects from
    `old_cells[found]` on, in order, shown under the same ids: at least one, since the caller
    found the first so (the loop over the cells always moves on)."""
    limit = min(stop - index, len(old_cells) - found)
    count, step = 1, 32
    while count < limit:  # blocks of doubling size: the work follows the run, not the notebook
        end = min(limit, count + step)
        block = cells[index + count : index + end]
        same = len(list(takewhile(truth, map(is_, block, old_cells[found + count : found + end]))))
        count += same
        if same < len(block):
            break
        step *= 2
    if ids[index : index + count] != old_ids[found : found + count]:
        count = next(k for k in range(1, count) if ids[index + k] != old_ids[found + k])
    return count


def load_notebook(
    raw: str | bytes, path: str = "notebook", *, text: str | None = None
) -> LoadedNotebook:
    """Parse a notebook file's bytes or text (see the module docstring); `text` is the text
    `raw` (bytes) was encoded from, when the caller has it."""
    with paused_gc():
        if isinstance(raw, str):
            return _load(raw.encode("utf-8", "surrogatepass"), path, raw)
        return _load(raw, path, text)


def _load(raw: bytes, path: str, text: str | None) -> LoadedNotebook:
    """`text`: the str `raw` was encoded from (the standard library parses it as given)."""
    try:
        data = parse_json(raw, path) if text is None else parse_json(text, path)
    except NotTextError:
        raise
    except ValueError as err:
        raise InvalidNotebookError(
            f"{path} is not valid JSON ({err}), so it cannot be read as a notebook. Repair the "
            "file (for example resolve git conflict markers) or restore it, then read it again."
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("nbformat"), int):
        raise InvalidNotebookError(
            f"{path} is JSON but not a notebook (no integer `nbformat` field)."
        )
    if data["nbformat"] != 4:
        source = text if text is not None else decode_text(path, raw)
        return LoadedNotebook(raw, _converted(source, data["nbformat"], path), layout=None)
    if not isinstance(data.get("cells"), list):
        raise InvalidNotebookError(f"{path} is not a readable notebook: it has no `cells` list.")
    odd = next((n for n, cell in enumerate(data["cells"]) if not isinstance(cell, dict)), None)
    if odd is not None:
        raise InvalidNotebookError(
            f"{path} is not a readable notebook: cell {odd + 1} is not a JSON object. Repair the "
            "file (or restore it from version control), then read it again."
        )
    return LoadedNotebook(raw, data, survey=_join_sources(data))


def _converted(raw: str, version: int, path: str) -> Notebook:
    if version not in (1, 2, 3):
        raise InvalidNotebookError(
            f"{path} uses nbformat {version}, which this version cannot read (only 1 to 4)."
        )
    try:
        node = nbformat.reads(raw, as_version=4)
    except Exception as err:
        raise InvalidNotebookError(
            f"{path} (nbformat {version}) cannot be converted: {err}"
        ) from None
    nb = json.loads(json.dumps(node))
    for cell in nb.get("cells", []):
        cell.pop("id", None)
    nb["nbformat_minor"] = 4
    return rejoin_lines(nb)


@dataclass(frozen=True, slots=True)
class CellSurvey:
    """What one pass over a loaded notebook's cells found (indices into its cells).

    `suspect`: stored unlike nbformat (their bytes are never reused); `repairable`: problems a
    write repairs (repair.py); `broken`: the first cell too broken to be a cell, worded."""

    suspect: frozenset[int] = frozenset()
    repairable: frozenset[int] = frozenset()
    broken: str | None = None


def _join_sources(nb: Notebook) -> CellSurvey:
    """In place: join cell sources, drop transient keys; survey the cells (one pass).

    Outputs and attachments are left as stored (see the module docstring).
    """
    drop_transient(nb)
    facts = survey_cells(nb["cells"], version_flags(nb))
    return CellSurvey(
        frozenset(facts.suspect),
        frozenset(facts.repairable),
        None if not facts.broken else structure_problem(nb),
    )


def drop_transient(nb: Notebook) -> None:
    """In place: drop the notebook metadata keys nbformat never writes."""
    metadata = nb.get("metadata")
    if isinstance(metadata, dict):
        for key in _NB_TRANSIENT:
            metadata.pop(key, None)


def version_flags(nb: Mapping[str, Any]) -> tuple[bool, bool]:
    """(legacy, future): older than nbformat 4.5 (no ids), newer than 4.5 (unknown types ok)."""
    minor = nb.get("nbformat_minor")
    return not isinstance(minor, int) or minor < 5, isinstance(minor, int) and minor > 5


@dataclass(frozen=True, slots=True)
class CellFacts:
    """What a survey of some cells found (indices into those cells): see `CellSurvey`."""

    suspect: tuple[int, ...]
    repairable: tuple[int, ...]
    broken: bool


def survey_cells(cells: Sequence[dict[str, Any]], flags: tuple[bool, bool]) -> CellFacts:
    """In place: join the cells' sources and drop their transient metadata; survey them.

    `flags` are the notebook's `version_flags`."""
    legacy, future = flags
    suspect: list[int] = []
    repairable: list[int] = []
    broken: int | None = None
    for index, cell in enumerate(cells):
        shape = _ORDINARY.get(tuple(cell))
        if shape is not None and shape == cell.get("cell_type"):
            # the usual shapes: keys sorted, nothing to repair (but a legacy cell's id)
            if not _join_cell_source(cell) or (
                cell.get("outputs") and not _stored_like_nbformat(cell)
            ):
                suspect.append(index)
            if legacy and "id" in cell:
                repairable.append(index)
            if (
                type(cell["source"]) is not str
                or type(cell["metadata"]) is not dict
                or type(cell.get("outputs", ())) not in (list, tuple)
            ):
                broken = index if broken is None else broken
            continue
        if not _join_cell_source(cell) or not _stored_like_nbformat(cell):
            suspect.append(index)
        if needs_repair(cell, legacy):
            repairable.append(index)
        if broken is None and cell_structure_problem(cell, future) is not None:
            broken = index
    return CellFacts(tuple(suspect), tuple(repairable), broken is not None)


def _stored_like_nbformat(cell: dict[str, Any]) -> bool:
    """Whether the cell's outputs and attachments are stored as nbformat writes them, judged
    from keys and value types only (no payload is read): line-split values as lists, other
    values not, keys sorted."""
    attachments = cell.get("attachments")
    if attachments is not None and (
        not isinstance(attachments, dict) or not all(map(_bundle_stored, attachments.values()))
    ):
        return False
    outputs = cell.get("outputs")
    if not outputs or cell.get("cell_type") != "code":
        return True
    if not isinstance(outputs, list):
        return False
    for output in outputs:
        if not isinstance(output, dict):
            return False
        keys = tuple(output)
        if keys not in _SORTED_OUTPUT_KEYS and list(keys) != sorted(keys):
            return False
        data = output.get("data")
        if data is not None and not _bundle_stored(data):
            return False
        if output.get("output_type") == "stream" and type(output.get("text")) is not list:
            return False
    return True


def _bundle_stored(bundle: Any) -> bool:
    if not isinstance(bundle, dict) or not _sorted_keys(bundle):
        return False
    for mime, value in bundle.items():
        split = mime.startswith("text/") or mime in SPLIT_MIMES
        if split != isinstance(value, list) and not is_json_mime(mime):
            return False
    return True


def _sorted_keys(mapping: dict[str, Any]) -> bool:
    keys = list(mapping)
    return keys == sorted(keys)


def _join_cell_source(cell: dict[str, Any]) -> bool:
    """Join the source in place; True when the cell was stored exactly as nbformat writes it
    (as far as this cheap look can tell: source as its lines, no `trusted`, keys sorted)."""
    canonical = True
    source = cell.get("source")
    if isinstance(source, list):
        try:
            joined = "".join(source)
        except TypeError:
            canonical = False
        else:
            cell["source"] = joined
            canonical = joined.splitlines(True) == source
    elif source is not None:
        canonical = False
    metadata = cell.get("metadata")
    if isinstance(metadata, dict) and "trusted" in metadata:
        del metadata["trusted"]
        canonical = False
    return canonical and (tuple(cell) in _SORTED_CELL_KEYS or _sorted_keys(cell))


def rejoin_lines(nb: Notebook) -> Notebook:
    """In place, as nbformat reads do: join every line list into a string (sources, outputs and
    attachments); drop transient keys. The form a contents-manager notebook model has."""
    metadata = nb.get("metadata")
    if isinstance(metadata, dict):
        for key in _NB_TRANSIENT:
            metadata.pop(key, None)
    for cell in nb["cells"]:
        if isinstance(cell, dict):
            _rejoin_cell(cell)
    return nb


def _rejoin_cell(cell: dict[str, Any]) -> None:
    _join_cell_source(cell)
    attachments = cell.get("attachments")
    if isinstance(attachments, dict):
        for bundle in attachments.values():
            _rejoin_bundle(bundle)
    if cell.get("cell_type") != "code" or not isinstance(cell.get("outputs"), list):
        return
    for output in cell["outputs"]:
        if not isinstance(output, dict):
            continue
        kind = output.get("output_type", "")
        if kind in ("execute_result", "display_data"):
            _rejoin_bundle(output.get("data"))
        elif kind and isinstance(output.get("text"), list):
            output["text"] = joined_lines(output["text"])


def rejoined_outputs(outputs: Any) -> Any:
    """A copy of a cell's `outputs` with every line list joined (the form kernels produce and
    contents-manager models hold), to compare outputs whatever form they are stored in."""
    cell = {"cell_type": "code", "outputs": copy.deepcopy(outputs)}
    _rejoin_cell(cell)
    return cell["outputs"]


def _rejoin_bundle(bundle: Any) -> None:
    if not isinstance(bundle, dict):
        return
    for mime, value in bundle.items():
        if not is_json_mime(mime) and isinstance(value, list):
            bundle[mime] = joined_lines(value)
