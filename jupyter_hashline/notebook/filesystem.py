"""`NotebookFilesystem`: `.ipynb` files read and written as their projection.

Wraps any `Filesystem` (disk, in-memory, the server's contents manager). For `.ipynb` paths:
`read_text` returns the projection (hashline's, or a jupytext format); `write_text` re-reads the
current notebook, merges the text into it, repairs what JupyterLab repairs on save (repair.py),
validates what changed, serializes exactly as Jupyter does, writes through the inner filesystem
(atomic there) and returns the projection of what landed. Every other path passes through.

Invariants:
- A write never touches a file that cannot be parsed or is too broken to open (metadata that
  is not an object, a cell too broken to be a cell), nor writes an edit that would add a
  schema problem (validity.py): it raises `InvalidNotebookError` saying why and what to do.
  A notebook invalid already is written when the edit adds no problem, with a warning saying
  it is still invalid and why, on every write.
  Cells the edit does not change are not validated again (that would cost more than the whole
  write): they are kept exactly as they are.
- The text written is in the layout the file has (keep.py; the `layout` option, default `keep`),
  or `nbformat.writes(merged) + "\n"` for new files, files no layout reproduces (with a note)
  and the `nbformat` layout; the cells the edit did not change keep their bytes
  (incremental/layout.py, keep.py), so a one-line edit serializes one cell.
- Writing the text a read returned changes nothing and writes nothing, so the file stays byte
  identical (whatever its layout).
- Parsing is cached by the file's bytes (a read followed by a write parses once; the bytes a
  write produced are never parsed again), and a file that changed since the version cached is
  parsed by the cells that changed (incremental/reload.py). Cached notebooks and cells are never
  mutated.
- Over a `ByteStorage` (the disk; the server's local-disk contents manager) notebooks it
  `stores_bytes` are read and written as bytes: a file is compared
  with the bytes read before, parsed by orjson and written back without ever being decoded or
  encoded as a whole. Other storages are read and written as text.
- Within one engine call (`callscope`) the notebook is read once: a write merges into the
  notebook the same call read (the text the edit was computed on), without reading it again.
- A `WriteGuard` given to the filesystem sees every notebook projection a read returns and is
  asked before every notebook write (it may refuse it by raising): the seam for storages that
  change under the engine's feet, such as a notebook open in a collaborative room.
- With a `Notary` (Jupyter's signature store), a trusted notebook stays trusted across writes
  exactly as trust.py's rule says, once the write has landed: signing never fails or undoes a
  write, and a filesystem without one signs nothing.
- Optional capabilities of the engine: `ViewAnnotator` (output summaries), `CellSelector`
  (lines of named cells) and `LineRebaser` (cell-aware recovery of stale edits: cells found by
  id, not by line), the latter two for the hashline projection only.
"""

from __future__ import annotations

import threading
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from ..hashline.callscope import scope_memo
from ..hashline.disk import encode_text
from ..hashline.errors import AnchorError, HashlineError, is_not_found
from ..hashline.filesystem import (
    ByteStorage,
    Filesystem,
    Footprint,
    LineRebase,
    RebaseRefusal,
    WriteResult,
    capabilities_of,
    checked_filesystem,
)
from ..hashline.offload import offloaded
from ..hashline.syntax import SpanFinder, finder_for_path
from ..hashline.text import line_count
from .code_spans import CellSpans, notebook_language
from .errors import InvalidNotebookError
from .executed import Executed, with_executed
from .ids import IdNotes, IdSource, display_ids, id_notes
from .incremental.cellmatch import CellMatch, match_cells
from .incremental.layout import assemble
from .incremental.region import merge_edit
from .incremental.reload import reload_notebook
from .jupytext_view import check_format, jupytext_text, merge_jupytext
from .keep import KeptLayout, assemble_kept, check_layout, chosen_layout
from .loading import (
    ANNOTATIONS,
    LoadedNotebook,
    Splice,
    load_notebook,
    paused_gc,
    splice_views,
)
from .merge import merge_projection, split_notes
from .outputs import DEFAULT_MAX_CHARS, cell_outputs, output_summary
from .projection import cell_source, parse_projection
from .rebase import rebase_lines
from .repair import repair_cells
from .serialize import CellJsonCache, serialize_notebook
from .trust import Notary, TrustKeeper
from .validation import top_structure_problem
from .validity import check_write, remember_problem, still_invalid

HASHLINE = "hashline"
SMALL_FILE = 32 * 1024
"""Below this many characters a notebook is serialized whole rather than by reusing bytes."""
SUMMARY_PREFIX = "   ⎿ "


def _output_notes(loaded: LoadedNotebook, summaries: CellJsonCache) -> dict[int, tuple[str, ...]]:
    """Projection line -> the output summary shown after it (the last line of its cell).

    Summaries are cached by cell identity: cells a write did not change are the same objects.
    A cell's last line is the line above the next cell's marker (the projection's last line
    for the last cell), counted in the projection itself: only the cells with outputs cost
    anything beyond one pass over the cells. A version spliced from one whose notes were made
    (`LoadedNotebook.take_splice`) keeps the notes of the cells before and after the spliced
    ones (those after moved by the lines the splice added) and of the old cells it kept between
    them (`Splice.runs`, each run's moved to where it now starts), and makes only the others'."""
    cells = loaded.nb.get("cells", [])
    splice = loaded.take_splice()
    text, starts = loaded.projection, loaded.marker_starts
    if len(starts) != len(cells):  # not one marker per cell: count the sources instead
        return _output_notes_by_sources(cells, summaries)
    if splice is None:
        return _cell_notes(cells, range(len(cells)), text, starts, summaries, (1, 0))
    before, start = splice.annotations, splice.start
    first = 1 + text.count("\n", 0, start)  # the line the spliced cells start on
    after = first + splice.old_lines  # in the old text, the line the cells after them started on
    shift = splice.new_lines - splice.old_lines
    notes = {line: note for line, note in before.items() if line < first}
    notes.update(_middle_notes(loaded, splice, first, summaries))
    notes.update({line + shift: note for line, note in before.items() if line >= after})
    return notes


def _middle_notes(
    loaded: LoadedNotebook, splice: Splice, first: int, summaries: CellJsonCache
) -> dict[int, tuple[str, ...]]:
    """The notes of a splice's middle, which starts on line `first`: its kept runs keep their
    old notes (moved to where the run now starts), the cells between them get theirs made."""
    cells, text, starts = loaded.nb.get("cells", []), loaded.projection, loaded.marker_starts
    before = splice.annotations
    old = sorted(n for n in before if first <= n < first + splice.old_lines) if splice.runs else []
    notes: dict[int, tuple[str, ...]] = {}
    line, at = first, splice.start
    for run in splice.runs:
        made = range(bisect_left(starts, at), bisect_left(starts, run.offset))
        notes.update(_cell_notes(cells, made, text, starts, summaries, (line, at)))
        line += text.count("\n", at, run.offset)
        moved = line - (first + run.old_line)
        low = bisect_left(old, first + run.old_line)
        high = bisect_left(old, first + run.old_line + run.lines)
        notes.update({n + moved: before[n] for n in old[low:high]})
        line, at = line + run.lines, run.offset + run.length
    made = range(bisect_left(starts, at), len(cells) - splice.tail)
    notes.update(_cell_notes(cells, made, text, starts, summaries, (line, at)))
    return notes


def _cell_notes(
    cells: Sequence[Any],
    indices: range,
    text: str,
    starts: Sequence[int],
    summaries: CellJsonCache,
    origin: tuple[int, int],
) -> dict[int, tuple[str, ...]]:
    """The notes of cells `indices` (a run), lines counted from `origin`: (the line number at
    that offset, the offset), at or before the run's first marker."""
    shown = [index for index in indices if cells[index].get("outputs")]
    if not shown:
        return {}
    known = summaries.get_many(cells[index] for index in shown)
    notes: dict[int, tuple[str, ...]] = {}
    line, counted = origin  # line numbers of `text` up to offset `counted`
    for index, summary in zip(shown, known, strict=True):
        end = starts[index + 1] if index + 1 < len(starts) else len(text)
        line += text.count("\n", counted, end)
        counted = end
        last = line - 1 if index + 1 < len(starts) else line_count(text)
        if summary is None:
            summary = output_summary(cells[index]) or ""
            summaries.put(cells[index], summary)
        if summary:
            notes[last] = (SUMMARY_PREFIX + summary,)
    return notes


def _output_notes_by_sources(
    cells: Sequence[Any], summaries: CellJsonCache
) -> dict[int, tuple[str, ...]]:
    """`_output_notes`, with each cell's lines counted from its source."""
    notes: dict[int, tuple[str, ...]] = {}
    line = 1
    for cell in cells:
        source = cell.get("source", "")
        if not isinstance(source, str):
            source = cell_source(cell)
        line += source.count("\n") + 1 if source else 0
        if cell.get("outputs"):
            summary = summaries.get(cell)
            if summary is None:
                summary = output_summary(cell) or ""
                summaries.put(cell, summary)
            if summary:
                notes[line] = (SUMMARY_PREFIX + summary,)
        line += 1
    return notes


@runtime_checkable
class NotebookStorage(Protocol):
    """Optional capability of the storage under a `NotebookFilesystem`: take a merged notebook
    as the notebook it is (sources joined, as the merge made it) beside its file bytes, so a
    storage that holds notebooks as objects (a live collaborative document) needs no parse of
    the bytes. `base` is the notebook the edit was merged into (the one this call read; the
    cells the edit kept are its very objects), None for a new file. Returns the text that
    landed, or None to have the bytes written as usual."""

    async def write_notebook(
        self,
        path: str,
        notebook: Mapping[str, Any],
        data: bytes,
        base: Mapping[str, Any] | None,
    ) -> WriteResult | None: ...


class WriteGuard(Protocol):
    """Guards notebook writes of a `NotebookFilesystem` against what changed since its reads."""

    def shown(self, path: str, text: str) -> None:
        """A read of notebook `path` returned `text`."""

    async def before_write(self, path: str, read_now: Callable[[], Awaitable[str]]) -> None:
        """Called before notebook `path` is written; raises to refuse the write (nothing is
        written). `read_now` reads the notebook's projection as it is now (not `shown`)."""


def is_notebook_path(path: str) -> bool:
    return path.lower().endswith(".ipynb")


def new_notebook() -> dict[str, Any]:
    """An empty nbformat 4.5 notebook, as a new `.ipynb` written from a projection starts."""
    return {"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


class NotebookFilesystem(Filesystem):
    """A `Filesystem` that shows notebooks as text (see the module docstring)."""

    def __init__(
        self,
        inner: Filesystem,
        projection: str = HASHLINE,
        clear_outputs_on_edit: bool = False,
        *,
        new_id: IdSource | None = None,
        cache_size: int = 16,
        layout: str = "keep",
        guard: WriteGuard | None = None,
        notary: Notary | None = None,
    ) -> None:
        self.inner = checked_filesystem(inner)
        self.guard = guard
        self.trust = TrustKeeper(notary) if notary is not None else None
        self.layout = check_layout(layout)
        self.projection = projection if projection == HASHLINE else check_format(projection)
        self.clear_outputs_on_edit = clear_outputs_on_edit
        self._new_id = new_id
        self._cache_size = cache_size
        self._loaded: OrderedDict[str, LoadedNotebook] = OrderedDict()
        self._id_notes: OrderedDict[str, IdNotes] = OrderedDict()
        self._cells = CellJsonCache()
        self._summaries = CellJsonCache()
        self._lock = threading.Lock()
        self._bytes = capabilities_of(self.inner).bytes
        self._notebooks = self.inner if isinstance(self.inner, NotebookStorage) else None

    def __repr__(self) -> str:
        return f"NotebookFilesystem({self.inner!r}, projection={self.projection!r})"

    @property
    def hashline(self) -> bool:
        return self.projection == HASHLINE

    # -- the Filesystem protocol ---------------------------------------------------------------

    async def read_text(self, path: str) -> str:
        if not is_notebook_path(path):
            return str(await self.inner.read_text(path))
        view = await self._read_projection(path)
        if self.guard is not None:
            self.guard.shown(path, view)
        return view

    async def _read_projection(self, path: str) -> str:
        raw, text = await self._fetch(path)
        return await offloaded(self._work(path, len(raw)), lambda: self._read_view(path, raw, text))

    async def write_text(self, path: str, content: str) -> WriteResult:
        if not is_notebook_path(path):
            return await self._inner_write(path, content)
        if self.guard is not None:
            await self.guard.before_write(path, lambda: self._read_projection(path))
        current = await self._current(path)
        size = self._work(path, len(current.raw) if current is not None else len(content))
        planned = await offloaded(size, lambda: self._planned(path, current, content))
        if isinstance(planned, LoadedNotebook):
            return WriteResult(self._view(planned))
        written, reports = planned
        base = current.nb if current is not None else None
        landed = await self._write_notebook(path, written, base)
        data = _landed_bytes(written, landed)
        loaded, view = await offloaded(size, lambda: self._landed_view(path, written, data))
        notes, warnings = split_notes(reports)
        trust = await self._keep_trust(path, current, loaded)
        said = landed or WriteResult("")
        return WriteResult(view, (*warnings, *said.warnings), (*notes, *said.notes, *trust))

    def _planned(
        self, path: str, current: LoadedNotebook | None, content: str
    ) -> LoadedNotebook | tuple[LoadedNotebook, tuple[str, ...]]:
        with paused_gc():
            return self._plan_write(path, current, content)

    def _read_view(self, path: str, raw: bytes, text: str | None) -> str:
        """The notebook in `raw` loaded and remembered, and its view; for the hashline
        projection also its output summaries (a read shows them next)."""
        loaded = self._loaded_now(path, raw, text)
        view = self._view(loaded)
        if self.hashline:
            loaded.view(ANNOTATIONS, lambda nb, _: _output_notes(loaded, self._summaries))
        return view

    def _plan_write(
        self, path: str, current: LoadedNotebook | None, content: str
    ) -> LoadedNotebook | tuple[LoadedNotebook, tuple[str, ...]]:
        """The notebook to write and the notes on it, or `current` when nothing changes."""
        if current is not None:
            self._check_writable(path, current)
        base = current.nb if current is not None else new_notebook()
        merged, warnings = self._merge(base, content, current)
        if current is not None and merged is current.nb:
            return current
        if current is None:
            merged, repairs = repair_cells(merged)
            check_write(path, None, merged, None)
            written, notes = self._serialize(path, None, merged)
            return written, (*warnings, *repairs, *notes)
        match = match_cells(current.nb.get("cells", []), merged.get("cells", []))
        merged, repairs = repair_cells(merged, _to_look_at(current, match))
        if repairs:
            match = match_cells(current.nb.get("cells", []), merged.get("cells", []))
        problem = check_write(path, current, merged, match)
        written, notes = self._serialize(path, current, merged, match)
        splice_views(current, written)
        return written, (*warnings, *repairs, *notes, *_invalid_notes(path, written, problem))

    async def preflight_write(self, path: str) -> None:
        await self.inner.preflight_write(path)

    async def exists(self, path: str) -> bool:
        return await self.inner.exists(path)

    async def canonical_path(self, path: str) -> str:
        return await self.inner.canonical_path(path)

    def normalized_view(self, path: str) -> bool:
        return is_notebook_path(path) or self.inner.normalized_view(path)

    # -- outputs -------------------------------------------------------------------------------

    async def outputs(self, path: str, cell_id: str, max_chars: int = DEFAULT_MAX_CHARS) -> str:
        """The outputs of one cell as text (clipped; images as sized placeholders)."""
        if not is_notebook_path(path):
            raise HashlineError(f"{path} is not a notebook (.ipynb): it has no cell outputs.")
        return cell_outputs((await self._read(path)).nb, cell_id, max_chars=max_chars)

    async def output_list(self, path: str, cell_id: str) -> tuple[Mapping[str, Any], ...]:
        """The outputs of one code cell as stored (nbformat v4 dicts), numbered as `outputs`
        numbers them; () for a cell that is not a code cell."""
        if not is_notebook_path(path):
            raise HashlineError(f"{path} is not a notebook (.ipynb): it has no cell outputs.")
        cells: Sequence[Mapping[str, Any]] = (await self._read(path)).nb.get("cells", [])
        ids = display_ids(cells).ids
        if cell_id not in ids:
            raise AnchorError(f"No cell id={cell_id} in this notebook.")
        outputs = cells[ids.index(cell_id)].get("outputs") or ()
        return tuple(outputs)

    async def write_outputs(self, path: str, executed: Mapping[str, Executed]) -> WriteResult:
        """Set the outputs and execution counts of executed cells, in one write.

        Nothing else in the notebook changes. Cells named in `executed` that are no longer
        code cells of the notebook are reported in the warnings, not written. Returns the
        projection as it landed (the outputs change the file, not necessarily the text).
        """
        if not is_notebook_path(path):
            raise HashlineError(f"{path} is not a notebook (.ipynb): it has no cell outputs.")
        current = await self._current(path) or await self._read(path)
        self._check_writable(path, current)
        merged, missing = with_executed(current.nb, executed)
        warnings = tuple(
            f"cell {cid} is no longer a code cell of {path}: its outputs were not written"
            for cid in missing
        )
        if merged is current.nb:
            return WriteResult(self._view(current), warnings)
        with paused_gc():
            match = match_cells(current.nb.get("cells", []), merged.get("cells", []))
            problem = check_write(path, current, merged, match)
            written, notes = self._serialize(path, current, merged, match)
            splice_views(current, written)
            notes = (*notes, *_invalid_notes(path, written, problem))
        landed = await self._write_notebook(path, written, current.nb)
        loaded = self._landed(path, written, _landed_bytes(written, landed))
        trust = await self._keep_trust(path, current, loaded, ran=True)
        said = landed or WriteResult("")
        return WriteResult(
            self._view(loaded), (*warnings, *notes, *said.warnings), (*said.notes, *trust)
        )

    def view_of(self, path: str, text: str) -> str:
        """What a read of notebook `path` shows when its file holds `text` (e.g. the file as a
        collaboration room just saved it, read beside this filesystem's storage)."""
        raw = text.encode("utf-8", "surrogatepass")
        return self._view(self._load(path, raw, text))

    # -- optional engine capabilities ----------------------------------------------------------

    def annotate_view(self, path: str, text: str) -> Mapping[int, tuple[str, ...]]:
        """Output summaries after the last line of each code cell that has outputs."""
        loaded = self._cached_for_view(path, text)
        if loaded is None or not self.hashline:
            return {}
        notes: Mapping[int, tuple[str, ...]] = loaded.view(
            ANNOTATIONS, lambda nb, _: _output_notes(loaded, self._summaries)
        )
        return notes

    def select_cells(self, path: str, text: str, cell_ids: tuple[str, ...]) -> frozenset[int]:
        """The line numbers of the named cells (marker and source) in the projection `text`."""
        if not is_notebook_path(path):
            raise AnchorError(
                f"{path} is not a notebook, so it has no cells; read it with offset/limit."
            )
        if not self.hashline:
            raise HashlineError(
                f"`cells` needs the hashline projection; {path} is shown as {self.projection}. "
                "Read it with offset/limit instead."
            )
        loaded = self._cached_for_view(path, text)
        if loaded is not None:
            spans = _cell_line_spans(text, loaded.ids.ids, loaded.marker_starts, cell_ids)
        else:
            cells = parse_projection(text)
            spans = {c.cell_id: (c.line, c.last_line) for c in cells if c.cell_id is not None}
        missing = [cid for cid in cell_ids if spans.get(cid) is None]
        if missing:
            names = ", ".join(loaded.ids.ids if loaded is not None else spans) or "(none)"
            raise AnchorError(
                f"{path} has no cell with id {', '.join(missing)}. Its cell ids are: {names}."
            )
        lines: set[int] = set()
        for cid in cell_ids:
            first, last = spans[cid] or (1, 0)
            lines.update(range(first, last + 1))
        return frozenset(lines)

    def code_finder(self, path: str, text: str) -> SpanFinder | None:
        """Code cells as spans in the notebook's language (a Python kernel: IPython syntax);
        a plain file by its name; no claim for a notebook shown in a jupytext format."""
        if not is_notebook_path(path):
            return finder_for_path(path)
        if not self.hashline:
            return None
        loaded = self._cached_for_view(path, text)
        return CellSpans(notebook_language(loaded.nb) if loaded is not None else "ipython")

    def rebase_lines(
        self, path: str, snapshot_text: str, live_text: str, footprint: Footprint
    ) -> LineRebase | RebaseRefusal | None:
        """Cell-aware recovery for the hashline projection (None elsewhere: the text rule)."""
        if not is_notebook_path(path) or not self.hashline:
            return None
        with self._lock:
            notes = self._id_notes.get(snapshot_text, IdNotes())
            live_notes = self._id_notes.get(live_text, IdNotes())
        try:
            return rebase_lines(snapshot_text, live_text, footprint, notes, live_notes)
        except InvalidNotebookError:
            return None

    def positional_ids(self, text: str) -> bool:
        """Whether projection `text` (one this filesystem served lately) shows ids that name
        cells by position or stand for copies of one id: there, which cell a marker names
        can change when cells are added or removed elsewhere."""
        with self._lock:
            notes = self._id_notes.get(text)
        return notes is not None and bool(notes)

    # -- internals -----------------------------------------------------------------------------

    async def _bytes_of(self, path: str) -> ByteStorage | None:
        """The byte storage `path` is kept in, or None (read and written as text)."""
        if self._bytes is not None and await self._bytes.stores_bytes(path):
            return self._bytes
        return None

    async def _inner_write(self, path: str, content: str) -> WriteResult:
        return await self.inner.write_text(path, content)

    async def _write_notebook(
        self, path: str, written: LoadedNotebook, base: Mapping[str, Any] | None
    ) -> WriteResult | None:
        """Write a notebook (its bytes, or the notebook itself to a `NotebookStorage`): what
        the storage says landed, or None when the bytes landed as they are."""
        data = written.raw
        if self._notebooks is not None:
            stored = await self._notebooks.write_notebook(path, written.nb, data, base)
            if stored is not None:
                return stored
        storage = await self._bytes_of(path)
        if storage is not None:
            await storage.write_bytes(path, data)
            return None
        return await self._inner_write(path, data.decode("utf-8"))

    async def _keep_trust(
        self, path: str, old: LoadedNotebook | None, new: LoadedNotebook, *, ran: bool = False
    ) -> tuple[str, ...]:
        """Sign the version a write landed when the version it replaced was signed (trust.py);
        the notes to give. A new file (no `old`) was never trusted."""
        if self.trust is None or old is None:
            return ()
        return await self.trust.kept(path, old, new, ran=ran)

    async def _read(self, path: str) -> LoadedNotebook:
        raw, text = await self._fetch(path)
        return await offloaded(
            self._work(path, len(raw)), lambda: self._loaded_now(path, raw, text)
        )

    async def _fetch(self, path: str) -> tuple[bytes, str | None]:
        """The notebook file's bytes, and its text when the storage gave text."""
        storage = await self._bytes_of(path)
        if storage is not None:
            return await storage.read_bytes(path), None
        text = str(await self.inner.read_text(path))
        return text.encode("utf-8", "surrogatepass"), text

    def _loaded_now(self, path: str, raw: bytes, text: str | None) -> LoadedNotebook:
        """The notebook in `raw`, as the one this engine call read."""
        loaded = self._load(path, raw, text)
        memo = scope_memo()
        if memo is not None:
            memo[("notebook", self, path)] = loaded
        return loaded

    async def _current(self, path: str) -> LoadedNotebook | None:
        """The notebook this engine call read (see the module docstring), else read now (None
        when there is no such file)."""
        memo = scope_memo()
        found: LoadedNotebook | None = None if memo is None else memo.get(("notebook", self, path))
        if found is not None:
            return found
        return await self._read_if_exists(path)

    async def _read_if_exists(self, path: str) -> LoadedNotebook | None:
        try:
            return await self._read(path)
        except Exception as err:
            if is_not_found(err):
                return None
            raise

    def _work(self, path: str, size: int) -> int:
        """What a step on notebook `path` costs, as `offloaded` weighs it: the length of the
        projection last made of it (what the steps parse, compare and project: cells' text,
        not the bytes of their images), else `size` (its bytes: nothing is known yet)."""
        with self._lock:
            known = self._loaded.get(path)
        projected = known.projected_length() if known is not None else None
        return size if projected is None else projected

    def _load(self, path: str, raw: bytes, text: str | None) -> LoadedNotebook:
        """The notebook in `raw`: the cached version when the bytes are the same, else parsed
        by what changed since that version (incremental/reload.py), else parsed whole."""
        with self._lock:
            cached = self._loaded.get(path)
            if cached is not None and cached.raw == raw:
                self._loaded.move_to_end(path)
                return cached
        if cached is not None:
            reloaded = reload_notebook(cached, raw, path)
            if reloaded is not None:
                return self._remember(path, reloaded)
        return self._remember(path, load_notebook(raw, path, text=text))

    def _landed(self, path: str, written: LoadedNotebook, landed: bytes) -> LoadedNotebook:
        """Remember what a write landed (the storage may have changed it: believe the storage)
        as the notebook this call now has. Its output notes are made now when that costs only
        the cells the write changed (spliced from a version whose notes were made), so the
        version after a person's next save can splice them too."""
        loaded = written if landed == written.raw else load_notebook(landed, path)
        if self.hashline and loaded.splices_annotations():
            loaded.view(ANNOTATIONS, lambda nb, _: _output_notes(loaded, self._summaries))
        memo = scope_memo()
        if memo is not None:
            memo[("notebook", self, path)] = loaded
        return self._remember(path, loaded)

    def _landed_view(
        self, path: str, written: LoadedNotebook, landed: bytes
    ) -> tuple[LoadedNotebook, str]:
        loaded = self._landed(path, written, landed)
        return loaded, self._view(loaded)

    def _remember(self, path: str, loaded: LoadedNotebook) -> LoadedNotebook:
        with self._lock:
            self._loaded[path] = loaded
            self._loaded.move_to_end(path)
            while len(self._loaded) > self._cache_size:
                self._loaded.popitem(last=False)
        return loaded

    def _view(self, loaded: LoadedNotebook) -> str:
        if not self.hashline:
            return loaded.view(self.projection, jupytext_text)
        text = loaded.projection
        notes: IdNotes = loaded.view(
            "id notes", lambda nb, _: id_notes(nb.get("cells", []), loaded.ids)
        )
        if notes:
            with self._lock:
                self._id_notes[text] = notes
                self._id_notes.move_to_end(text)
                while len(self._id_notes) > 4 * self._cache_size:
                    self._id_notes.popitem(last=False)
        return text

    def _cached_for_view(self, path: str, text: str) -> LoadedNotebook | None:
        with self._lock:
            loaded = self._loaded.get(path)
        if loaded is None or not is_notebook_path(path):
            return None
        return loaded if loaded.projection == text else None

    def _merge(
        self, base: dict[str, Any], content: str, current: LoadedNotebook | None
    ) -> tuple[dict[str, Any], list[str]]:
        if not self.hashline:
            return merge_jupytext(base, content, self.projection)
        if current is not None:
            region = merge_edit(
                base,
                current.projection,
                content,
                shown=current.ids,
                starts=current.marker_starts,
                all_ids=frozenset(current.ids.ids),
                clear_outputs_on_edit=self.clear_outputs_on_edit,
                new_id=self._new_id,
            )
            if region is not None:
                return region
        return merge_projection(
            base,
            content,
            clear_outputs_on_edit=self.clear_outputs_on_edit,
            new_id=self._new_id,
            shown=current.ids if current is not None else None,
            before=current.projection if current is not None else None,
        )

    def _serialize(
        self,
        path: str,
        current: LoadedNotebook | None,
        merged: dict[str, Any],
        match: CellMatch | None = None,
    ) -> tuple[LoadedNotebook, tuple[str, ...]]:
        """`merged` with its file bytes, and a note when the file's layout was not kept.

        A file in nbformat's layout (known; checked by sampling where the file is large, or,
        with the `keep` layout, by writing it whole where it is small) reuses the bytes of the
        cells `merged` kept (with the `keep` layout, only when no cell is stored unlike
        nbformat). Otherwise, with the `keep` layout, a file whose layout is proven (keep.py) is
        written in it, reusing bytes the same way; any other file (and every file with the
        `nbformat` layout) is written in nbformat's layout in full. Text that cannot be UTF-8
        is refused (`NotTextError`)."""
        if current is None:
            return self._serialized(path, merged), ()
        keep = chosen_layout(self.layout) == "keep"
        if len(current.raw) >= SMALL_FILE:
            layout = current.layout
        elif keep and current.matches_nbformat(self._cells):
            layout = current.layout  # proven whole: costs less than proving a kept layout
        else:
            layout = current.known_layout()
        if layout is not None and not (keep and current.survey.suspect):
            try:
                built = assemble(current.raw, current.nb, layout, merged, match)
            except UnicodeEncodeError:
                built = None  # serialized in full below, which names the character
            if built is not None:
                return LoadedNotebook(built[0], merged, layout=built[1]), ()
        if not keep:
            return self._serialized(path, merged), ()
        kept = current.kept_layout()
        if isinstance(kept, KeptLayout):
            try:
                data, new_kept = assemble_kept(current.raw, current.nb, kept, merged, match)
            except UnicodeEncodeError:
                pass  # serialized in full below, which names the character
            else:
                return LoadedNotebook(data, merged, layout=None, kept=new_kept), ()
        written = self._serialized(path, merged)
        if isinstance(kept, str) and written.raw != current.raw:
            return written, (_fallback_note(path, kept),)
        return written, ()

    def _serialized(self, path: str, merged: dict[str, Any]) -> LoadedNotebook:
        """`merged` written whole in nbformat's layout."""
        data = encode_text(path, serialize_notebook(merged, cache=self._cells))
        return LoadedNotebook(data, merged, written=True)

    def _check_writable(self, path: str, current: LoadedNotebook) -> None:
        """Refuse a notebook too broken to open (its top level, or a cell too broken to be a
        cell); other schema problems are kept by writes that add none (validity.py)."""
        problem = top_structure_problem(current.nb) or current.survey.broken
        if problem is not None:
            raise InvalidNotebookError(
                f"{path} is not a valid notebook ({problem}), so it can be read but not "
                "written. Nothing was written. Repair it (e.g. open and save it in JupyterLab, "
                "or restore it from version control), then read it again."
            )


def _landed_bytes(written: LoadedNotebook, landed: WriteResult | None) -> bytes:
    """The bytes a notebook write landed: the storage's text, else the bytes written."""
    return written.raw if landed is None else landed.text.encode("utf-8", "surrogatepass")


def _invalid_notes(path: str, written: LoadedNotebook, problem: str | None) -> tuple[str, ...]:
    remember_problem(written, problem)
    return () if problem is None else (still_invalid(path, problem),)


def _fallback_note(path: str, why: str) -> str:
    return (
        f"{path} was written in nbformat's layout (Jupyter's), not in the layout it had: {why}. "
        "Later edits keep this layout."
    )


def _cell_line_spans(
    text: str, ids: Sequence[str], starts: Sequence[int], wanted: Sequence[str]
) -> dict[str, tuple[int, int] | None]:
    """The first and last line (1-based) of each wanted cell of projection `text`, from the
    offsets of its markers: counts line breaks up to the wanted cells only."""
    index = {cid: n for n, cid in enumerate(ids)}
    spans: dict[str, tuple[int, int] | None] = {}
    for cid in wanted:
        n = index.get(cid)
        if n is None:
            spans[cid] = None
            continue
        end = starts[n + 1] if n + 1 < len(starts) else len(text)
        first = text.count("\n", 0, starts[n]) + 1
        spans[cid] = (first, first + text.count("\n", starts[n], end) - 1)
    return spans


def _to_look_at(current: LoadedNotebook, match: CellMatch) -> list[int]:
    """The cells of the merged notebook a repair must look at: new or changed ones, and kept
    ones the load found in need of one."""
    flagged = (match.new_index(index) for index in current.survey.repairable)
    return sorted({*match.fresh(), *(index for index in flagged if index is not None)})
