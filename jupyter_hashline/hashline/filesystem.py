"""The filesystem seam: the only way the engine touches storage.

Invariants:
- Text in and out is raw (BOM and CRLF as stored); the patcher normalizes, unless the
  filesystem says its text for a path is already a normalized view (`normalized_view`), as the
  notebook projection does: there a CR inside a line is content and must survive.
- `write_text` returns `WriteResult(text=...)`, the text as it actually landed, so adapters that
  transform on save (notebook normalization, jupytext, format-on-save) can say so.
- A missing file is `NotFoundError` (or anything `is_not_found` accepts).

Implementations subclass `Filesystem` to inherit the defaults below (or define all six
methods). Optional capabilities are one protocol each (`ByteStorage`, `LineRebaser`,
`ViewAnnotator`, `CellSelector`, `CodeSpans`), found in one place, once per filesystem:
`capabilities_of`.
`checked_filesystem` refuses, with a clear `TypeError`, an object that is not a `Filesystem`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from .errors import is_not_found
from .syntax import SpanFinder


@dataclass(frozen=True, slots=True)
class WriteResult:
    """What a write produced: the text as it landed (raw, as `read_text` would return it).

    `warnings` are things to act on about the write itself (e.g. a cell's outputs dropped by
    a retype, ids repaired); `notes` are outcomes that ask nothing of anyone (the ids new
    cells got, a cell restored).
    """

    text: str
    warnings: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class LineRebase:
    """A safe mapping of snapshot line numbers to live line numbers, for every line asked.

    `notes` say in words what moved (e.g. "cell load-data moved from line 12 to 19").
    `rows` rewrites body rows of the edit (whole rows, exact match) that name something by a
    name that changed since the read (a notebook cell shown under another id now), so they
    still name what the agent saw.
    """

    mapping: Mapping[int, int]
    notes: tuple[str, ...] = ()
    rows: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Footprint:
    """What a stale edit needs from the live text: the snapshot lines it names (1-based); the
    rows it inserts after (`after`) or before (`before`) a line, whose gap must not have taken
    a person's insertion; the lines it deletes outright (`deleted`: no rows in their place) or
    replaces (`replaced`); and every body row it writes (`rows`), so a rebaser can check what
    those rows refer to.
    """

    lines: frozenset[int]
    after: Mapping[int, tuple[str, ...]] = field(default_factory=dict)
    before: Mapping[int, tuple[str, ...]] = field(default_factory=dict)
    deleted: frozenset[int] = frozenset()
    rows: tuple[str, ...] = ()
    replaced: frozenset[int] = frozenset()

    @classmethod
    def of(cls, lines: Iterable[int] | Footprint) -> Footprint:
        """A footprint as is; plain line numbers guarded on both sides (the strictest reading,
        as if the edit inserted on either side of each)."""
        if isinstance(lines, Footprint):
            return lines
        named = frozenset(lines)
        return cls(named, dict.fromkeys(named, ()), dict.fromkeys(named, ()))

    def within(self, lines: Iterable[int]) -> Footprint:
        """The part of this footprint on `lines`."""
        mine = frozenset(lines) & self.lines
        return Footprint(
            mine,
            {n: rows for n, rows in self.after.items() if n in mine},
            {n: rows for n, rows in self.before.items() if n in mine},
            self.deleted & mine,
            self.rows,
            self.replaced & mine,
        )


@dataclass(frozen=True, slots=True)
class RebaseRefusal:
    """Why a stale edit cannot be rebased: a message for the agent and the live lines to mark
    as changed in the context shown with the rejection (1-based, live numbering)."""

    reason: str
    changed_live_lines: tuple[int, ...] = ()
    context_live_lines: tuple[int, ...] = field(default_factory=tuple)


@runtime_checkable
class Filesystem(Protocol):
    """Async text storage addressed by path."""

    async def read_text(self, path: str) -> str:
        """The file's raw text; a missing file raises `NotFoundError`."""
        ...

    async def write_text(self, path: str, content: str) -> WriteResult:
        """Write atomically and report the text as it landed."""
        ...

    async def preflight_write(self, path: str) -> None:
        """Raise before any work if `path` can certainly not be written (default: no check)."""
        return None

    async def exists(self, path: str) -> bool:
        """Whether `path` exists (default: probe `read_text`)."""
        try:
            await self.read_text(path)
        except Exception as err:
            if is_not_found(err):
                return False
            raise
        return True

    async def canonical_path(self, path: str) -> str:
        """The key under which snapshots of `path` are stored (default: `path` itself)."""
        return path

    def normalized_view(self, path: str) -> bool:
        """True when `read_text(path)` is already LF text whose CRs are content (default False)."""
        return False


@runtime_checkable
class ByteStorage(Protocol):
    """Optional capability: files as the bytes stored, read and written without decoding.

    A layer that parses files itself (the notebook layer parses UTF-8 JSON) uses this to skip
    decoding and re-encoding text it never shows, and to compare a file with the bytes it read
    before. `read_bytes` refuses what `read_text` refuses for reasons other than the encoding
    (missing file, directory, path outside the root); checking that the bytes are text is the
    caller's job. `write_bytes` lands exactly `data` (atomically, with the durability of
    `write_text`) or raises, leaving the old file intact.
    """

    async def stores_bytes(self, path: str) -> bool:
        """Whether `path` is read and written through `read_bytes` / `write_bytes` (else through
        the text methods: a storage may keep only some files as plain bytes)."""
        ...

    async def read_bytes(self, path: str) -> bytes: ...

    async def write_bytes(self, path: str, data: bytes) -> None: ...


@runtime_checkable
class LineRebaser(Protocol):
    """Optional capability of a filesystem: rebase a stale edit by the structure it knows.

    The notebook filesystem implements this with cell ids (a person editing cell 3 never stales
    an agent's edit to cell 7). `footprint` names the snapshot lines to map and the gaps the edit
    inserts into. Return `None` to let the patcher use its plain text rule.
    """

    def rebase_lines(
        self, path: str, snapshot_text: str, live_text: str, footprint: Footprint
    ) -> LineRebase | RebaseRefusal | None: ...


@runtime_checkable
class ViewAnnotator(Protocol):
    """Optional capability: annotation rows shown after numbered lines of a read view.

    Annotations (e.g. a notebook cell's output summary) are never part of the text and never
    parsed back. `text` is the exact text `read_text(path)` just returned.
    """

    def annotate_view(self, path: str, text: str) -> Mapping[int, tuple[str, ...]]: ...


@runtime_checkable
class CellSelector(Protocol):
    """Optional capability: the line numbers (1-based) that belong to the named cells.

    Raises `AnchorError` naming the known ids when an id is not in `text`.
    """

    def select_cells(self, path: str, text: str, cell_ids: tuple[str, ...]) -> frozenset[int]: ...


@runtime_checkable
class CodeSpans(Protocol):
    """Optional capability: where a text holds code, and in which language (syntax.py).

    `text` is the file's text as read now (a filesystem may learn the language from it: a
    notebook's kernel). None: no claim about this path. Without the capability, a file's
    name decides (`syntax.finder_for_path`: Python files are Python).
    """

    def code_finder(self, path: str, text: str) -> SpanFinder | None: ...


_FILESYSTEM_METHODS = (
    "read_text",
    "write_text",
    "preflight_write",
    "exists",
    "canonical_path",
    "normalized_view",
)


@dataclass(frozen=True, slots=True)
class Capabilities:
    """The optional capabilities of one filesystem: each is the filesystem itself when it has
    the capability, else None."""

    bytes: ByteStorage | None = None
    rebaser: LineRebaser | None = None
    annotator: ViewAnnotator | None = None
    selector: CellSelector | None = None
    code: CodeSpans | None = None


def capabilities_of(fs: Filesystem) -> Capabilities:
    """The optional capabilities `fs` has (each protocol checked here, and only here)."""
    return Capabilities(
        bytes=fs if isinstance(fs, ByteStorage) else None,
        rebaser=fs if isinstance(fs, LineRebaser) else None,
        annotator=fs if isinstance(fs, ViewAnnotator) else None,
        selector=fs if isinstance(fs, CellSelector) else None,
        code=fs if isinstance(fs, CodeSpans) else None,
    )


def checked_filesystem(fs: object) -> Filesystem:
    """`fs` if it is a `Filesystem` (every method of the protocol), else a `TypeError`."""
    if not isinstance(fs, Filesystem):
        missing = [name for name in _FILESYSTEM_METHODS if not hasattr(fs, name)]
        raise TypeError(
            f"{type(fs).__name__} is not a Filesystem (it lacks {', '.join(missing)}); "
            "subclass jupyter_hashline.hashline.Filesystem to inherit the defaults."
        )
    return fs
