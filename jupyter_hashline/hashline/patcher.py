"""The patcher: reads that record what an agent saw, and edits that land only where safe.

`Patcher(fs, store)` ties a `Filesystem` (where files are) and a `SnapshotStore` (what each
tag showed) together: a read stores the text it showed under its tag; an edit names that tag.

Invariants:
- Nothing is applied to text the agent did not see: an edit applies to the live text only when
  its tag's stored snapshot equals the live text (tags can collide, so the text is compared),
  or when every anchor maps to the live text safely (insert head/tail only; the filesystem's
  `LineRebaser`; else the plain text rule of recovery.py, a three-way line merge). Everything
  else is rejected. An edit must also rebase onto every version the store recorded since its
  read (another agent's edit landed there): one it conflicts with refuses it even where the
  live text seems to take it (a copy of the text it read, pasted after that edit, or the very
  text it read, put back).
- Every rejection leaves files untouched and records the live text, so its tag becomes known.
- A whole-file write replaces an existing file only under the tag of the version it replaces,
  or with `overwrite` where this patcher allows it (replace_guard.py); new files need neither.
- A multi-file patch is prepared completely (read, checked, applied in memory) before the first
  write; a write failing midway raises `PartialWriteError` saying which files landed.
- The store records the text a write reports as landed, not the text intended. A store that
  fails after the write landed (locked, broken) turns into a warning on the result, never into
  an error that would tell the agent nothing changed.
- BOM and line endings are restored on write unless the filesystem serves a normalized view.
- No NUL is ever written; files over `max_file_bytes`, patches over `max_patch_bytes` or with
  more than `max_edits` edit operations, and reads that would show more than `max_view_lines`
  lines are refused (`TooLargeError`, naming the limit) before anything is written or shown.
- Each call (read, apply, write) is one `call_scope`: the storage may resolve a path and read a
  file once per call (see callscope.py), never across calls.
- Reads, edits and writes of one path are serialized (one asyncio lock per store key, from a
  `PathLocks` table that several patchers may share).
- Seen lines are credited to this patcher's `agent`, and only that agent's seen lines allow an
  edit; the no-op streak is this patcher's own (one patcher per agent keeps both per agent).
- Every warning reaches the result: the checks', the applied edit's own repairs (pasted `N:`
  prefixes, boundary echo) and the storage's write notes, on every path (applied, recovered,
  no-op).
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from enum import Enum
from typing import cast

from . import messages
from .apply import AppliedEdits, apply_edits, validate_edits
from .callscope import call_scope
from .edits import Edit, PatchSection
from .errors import (
    CodeDoesNotParseError,
    HashlineError,
    NotFoundError,
    NotTextError,
    PatchSyntaxError,
    RepeatedNoOpError,
    StaleTagError,
    TooLargeError,
    UnknownTagError,
    UnseenLinesError,
    WriteFailedError,
    is_not_found,
)
from .filesystem import (
    Filesystem,
    Footprint,
    LineRebase,
    RebaseRefusal,
    capabilities_of,
    checked_filesystem,
)
from .locks import PathLocks
from .offload import OFFLOAD_EDITS, OFFLOAD_ROWS, heavy_call, offloaded
from .parse import PatchInput, parse_patch, patch_bulk
from .recovery import carry_lines, rebase_by_text
from .replace_guard import check_replace
from .results import (
    PartialWriteError,
    PatchResult,
    ReadResult,
    SectionOp,
    SectionResult,
    build_preview,
)
from .store import DEFAULT_AGENT, Snapshot, SnapshotStore
from .syntax import (
    SpanFinder,
    SyntaxCheck,
    broken_spans,
    changed_spans,
    describe_problems,
    finder_for_path,
)
from .text import line_count, normalize, restore, section_tag, split_lines

DEFAULT_MAX_EDITS = 10_000
"""Edit operations one patch may carry (all sections together)."""
DEFAULT_MAX_VIEW_LINES = 100_000
"""Lines one read may show (a part of a longer file: offset/limit, or cells)."""
MiB = 1024 * 1024
NOOP_ERROR_AT = 3
NOOP_WINDOW_S = 600.0


class SeenLinesPolicy(str, Enum):
    """What to do with an edit anchored on lines the agent was never shown."""

    REJECT = "reject"
    WARN = "warn"
    OFF = "off"


@dataclass(frozen=True, slots=True)
class _Live:
    """One file as read now: store key, normalized text and how to write it back."""

    path: str
    key: str
    text: str
    bom: bool
    eol: str
    raw: str
    view: bool


@dataclass(frozen=True, slots=True)
class _Prepared:
    """A section checked and applied in memory, ready to write."""

    section: PatchSection
    live: _Live
    applied: AppliedEdits
    warnings: tuple[str, ...]
    banner: str
    carried_seen: frozenset[int]
    edits: tuple[Edit, ...] = ()  # as they applied to the live text (after any rebase)


class Patcher:
    """Reads and edits files through a filesystem, remembering snapshots in a store."""

    def __init__(
        self,
        fs: Filesystem,
        store: SnapshotStore,
        seen_lines: SeenLinesPolicy | str = SeenLinesPolicy.REJECT,
        *,
        max_patch_bytes: int = 16 * MiB,
        max_file_bytes: int = 64 * MiB,
        repair_echo: bool = True,
        clock: Callable[[], float] = time.monotonic,
        agent: str = DEFAULT_AGENT,
        locks: PathLocks | None = None,
        exact_rows: bool = False,
        allow_overwrite: bool = True,
        max_edits: int = DEFAULT_MAX_EDITS,
        max_view_lines: int = DEFAULT_MAX_VIEW_LINES,
        syntax_check: SyntaxCheck | str = SyntaxCheck.WARN,
    ) -> None:
        self.fs = checked_filesystem(fs)
        self.syntax_check = SyntaxCheck(syntax_check)
        self._can = capabilities_of(self.fs)
        self.allow_overwrite = allow_overwrite
        self.max_edits = max_edits
        self.max_view_lines = max_view_lines
        self.store = store
        self.seen_lines = SeenLinesPolicy(seen_lines)
        self.max_patch_bytes = max_patch_bytes
        self.max_file_bytes = max_file_bytes
        self.repair_echo = repair_echo
        self.exact_rows = exact_rows  # computed edits (undo): rows as they are, no repairs
        self._clock = clock
        self.agent = agent
        self.locks = locks if locks is not None else PathLocks()
        self._noop: tuple[str, int, float] | None = None

    # -- reads ---------------------------------------------------------------------------------

    async def read(
        self,
        path: str,
        offset: int | None = None,
        limit: int | None = None,
        cells: Sequence[str] | str | None = None,
    ) -> ReadResult:
        """Show `path` with line numbers under `[path#TAG]`; record the snapshot and the lines
        this agent was shown."""
        with call_scope():
            return await self._read(path, offset, limit, cells)

    async def _read(
        self,
        path: str,
        offset: int | None,
        limit: int | None,
        cells: Sequence[str] | str | None,
    ) -> ReadResult:
        async with self._locked([await self._key(path)]):
            live = await self._load(path, missing_hint="Check the path.")
            return await offloaded(len(live.text), lambda: self._shown(live, offset, limit, cells))

    def _shown(
        self,
        live: _Live,
        offset: int | None,
        limit: int | None,
        cells: Sequence[str] | str | None,
    ) -> ReadResult:
        """The read view of `live`, its snapshot and the lines shown recorded."""
        lines = split_lines(live.text)
        shown, notes = self._select(live, lines, offset, limit, cells)
        if len(shown) > self.max_view_lines:
            raise TooLargeError(messages.view_too_large(live.path, len(shown), self.max_view_lines))
        tag = self.store.record(live.key, live.text)
        self.store.record_seen_lines(live.key, tag, shown, agent=self.agent)
        head = messages.header(live.path, tag)
        annotations = self._annotations(live.path, live.raw)
        rows = [head, *messages.view_rows(lines, shown, annotations), *notes]
        return ReadResult(live.path, tag, head, "\n".join(rows), live.text)

    def _select(
        self,
        live: _Live,
        lines: Sequence[str],
        offset: int | None,
        limit: int | None,
        cells: Sequence[str] | str | None,
    ) -> tuple[range | list[int], list[str]]:
        total = len(lines)
        if offset is not None and offset < 1:
            raise HashlineError(f"offset must be 1 or more (the first line is 1), got {offset}.")
        if limit is not None and limit < 0:
            raise HashlineError(f"limit must be 0 or more, got {limit}.")
        first = offset or 1
        last = total if limit is None else min(total, first + limit - 1)
        shown: range | list[int] = range(first, last + 1)
        if cells:
            wanted = self._cell_lines(live, cells)
            shown = sorted(n for n in wanted if first <= n <= last)
        return shown, _read_notes(total, first, last, offset, limit, cells, shown)

    def _cell_lines(self, live: _Live, cells: Sequence[str] | str) -> frozenset[int]:
        ids = tuple(c.strip() for c in (cells.split(",") if isinstance(cells, str) else cells))
        selector = self._can.selector
        if selector is None:
            raise HashlineError(
                f"{live.path} has no cells: `cells` only works for notebooks. Read it with "
                "offset/limit instead."
            )
        return selector.select_cells(live.path, live.raw, tuple(c for c in ids if c))

    def _annotations(self, path: str, raw: str) -> Mapping[int, Sequence[str]]:
        annotator = self._can.annotator
        return annotator.annotate_view(path, raw) if annotator is not None else {}

    # -- edits ---------------------------------------------------------------------------------

    async def apply(self, patch: PatchInput | PatchSection) -> PatchResult:
        """Apply an edit (text form, JSON form or parsed sections) to one or more files."""
        sections, count = await self._sections(patch)
        with call_scope(), heavy_call(count >= OFFLOAD_EDITS):
            return await self._apply_sections(sections)

    async def _sections(self, patch: PatchInput | PatchSection) -> tuple[list[PatchSection], int]:
        """The parsed sections and their edit count; too many edits are refused before
        anything is parsed."""
        bulk = patch_bulk(patch)
        if bulk.edits > self.max_edits:
            raise TooLargeError(messages.too_many_edits(bulk.edits, self.max_edits))
        sections = await offloaded(bulk.rows, lambda: self._parsed(patch), OFFLOAD_ROWS)
        count = sum(len(section.edits) for section in sections)
        if count > self.max_edits:
            raise TooLargeError(messages.too_many_edits(count, self.max_edits))
        return sections, count

    async def propose(self, patch: PatchInput | PatchSection) -> PatchResult:
        """Everything `apply` does but the write: every check, repair and rebase, then each
        section as it would land (`before` the file now, `after` the edit's text, `written`
        false). Nothing is written and no seen lines change; the file's text now is recorded,
        so the section's `tag` names the text the proposal was made on."""
        sections, count = await self._sections(patch)
        with call_scope(), heavy_call(count >= OFFLOAD_EDITS):
            keys = [await self._key(s.path) for s in sections]
            _refuse_duplicates(sections, keys)
            async with self._locked(keys):
                prepared = [await self._prepare(s) for s in sections]
                return PatchResult(tuple(self._proposed_section(item) for item in prepared))

    def _proposed_section(self, item: _Prepared) -> SectionResult:
        live, applied = item.live, item.applied
        tag = self.store.record(live.key, live.text)
        preview = build_preview(applied.lines, applied.regions) if applied.changed else None
        return SectionResult(
            path=live.path,
            op=SectionOp.UPDATE if applied.changed else SectionOp.NOOP,
            tag=tag,
            header=messages.header(live.path, tag),
            before=live.text,
            after=applied.text,
            written=False,
            first_changed_line=applied.first_changed_line,
            warnings=(*item.warnings, *applied.warnings),
            preview=preview.text if preview is not None else "",
            banner=item.banner,
            alignment=applied.kept,
            placed=item.edits,
        )

    async def propose_write(
        self, path: str, content: str, *, tag: str | None = None, overwrite: bool = False
    ) -> SectionResult:
        """Everything `write` checks, without writing: the section as it would land (`before`
        empty for a new file, op CREATE, else the file now, with its `tag` recorded)."""
        self._check_size(path, content, self.max_file_bytes, "The content")
        with call_scope():
            key = await self._key(path)
            async with self._locked([key]):
                try:
                    live: _Live | None = await self._load(path)
                except NotFoundError:
                    live = None
                text = content if self._is_view(path) else normalize(content).text
                if "\x00" in text:
                    raise NotTextError(
                        f"The content for {path} contains a NUL character; text files never "
                        "hold one. Nothing was written."
                    )
                check_replace(
                    self.store, path, key, None if live is None else live.text,
                    tag=tag, overwrite=overwrite, allow_overwrite=self.allow_overwrite,
                )  # fmt: skip
                warnings = self._whole_problems(path, live, text)
                await self.fs.preflight_write(path)
                before = "" if live is None else live.text
                known = self.store.record(key, before) if live is not None else section_tag("")
                op = SectionOp.CREATE if live is None else SectionOp.UPDATE
                if live is not None and live.text == text:
                    op = SectionOp.NOOP
                return SectionResult(
                    path, op, known, messages.header(path, known), before, text, False,
                    1 if text else None, warnings, "",
                )  # fmt: skip

    def _parsed(self, patch: PatchInput | PatchSection) -> list[PatchSection]:
        self.check_patch_size(patch)
        return parse_patch(patch)

    async def _apply_sections(self, sections: Sequence[PatchSection]) -> PatchResult:
        keys = [await self._key(s.path) for s in sections]
        _refuse_duplicates(sections, keys)
        async with self._locked(keys):
            prepared = [await self._prepare(s) for s in sections]
            if not any(p.applied.changed for p in prepared):
                return self._noop_result(prepared, _fingerprint(sections))
            self._noop = None
            return await self._write_all(prepared)

    async def write(
        self, path: str, content: str, *, tag: str | None = None, overwrite: bool = False
    ) -> PatchResult:
        """Create `path` with `content`, or replace all of it (the write tool). Replacing an
        existing file needs the `tag` of the version it replaces, or `overwrite` (when this
        patcher allows it); else `StaleTagError`/`OverwriteRefusedError` and nothing written."""
        self._check_size(path, content, self.max_file_bytes, "The content")
        with call_scope():
            return await self._write(path, content, tag, overwrite)

    async def _write(
        self, path: str, content: str, tag: str | None, overwrite: bool
    ) -> PatchResult:
        key = await self._key(path)
        async with self._locked([key]):
            try:
                live: _Live | None = await self._load(path)
            except NotFoundError:
                live = None
            view = self._is_view(path)
            text = content if view else normalize(content).text
            if "\x00" in text:
                raise NotTextError(
                    f"The content for {path} contains a NUL character; text files never hold "
                    "one. Nothing was written. Remove it (or write binary data another way)."
                )
            check_replace(
                self.store,
                path,
                key,
                None if live is None else live.text,
                tag=tag,
                overwrite=overwrite,
                allow_overwrite=self.allow_overwrite,
            )
            return await self._write_whole(path, key, live, text, view)

    # -- loading -------------------------------------------------------------------------------

    async def _key(self, path: str) -> str:
        return await self.fs.canonical_path(path)

    def _is_view(self, path: str) -> bool:
        return self.fs.normalized_view(path)

    async def _load(self, path: str, missing_hint: str | None = None) -> _Live:
        hint = missing_hint or "Use the write tool to create new files."
        try:
            raw = await self.fs.read_text(path)
        except UnicodeDecodeError:
            raise _not_text(path) from None
        except Exception as err:
            if is_not_found(err):
                raise NotFoundError(path, f"File not found: {path}. {hint}") from err
            raise
        self._check_size(path, raw, self.max_file_bytes, path)
        if "\x00" in raw:
            raise _not_text(path)
        key = await self._key(path)
        if self._is_view(path):
            return _Live(path, key, raw, False, "\n", raw, True)
        norm = normalize(raw)
        return _Live(path, key, norm.text, norm.bom, norm.eol, raw, False)

    def _check_size(self, path: str, text: str, limit: int, what: str) -> None:
        if len(text) * 4 <= limit:
            return  # a character is at most 4 bytes of UTF-8: no need to count them
        size = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
        if size > limit:
            raise TooLargeError(
                f"{what} is {size:,} bytes, over the limit of {limit:,} bytes, so it was not "
                f"processed and nothing was written. Edit a smaller file or split the work."
            )

    def check_patch_size(self, patch: object) -> None:
        """Refuse a patch over `max_patch_bytes` (UTF-8) before any parsing or reading.

        Adapters that parse a patch themselves (e.g. to lock its paths) call this first.
        """
        if isinstance(patch, str):
            text = patch
        elif isinstance(patch, PatchSection):
            text = json.dumps(patch.to_json())
        elif isinstance(patch, (list, tuple)) and patch and isinstance(patch[0], PatchSection):
            text = json.dumps([cast(PatchSection, s).to_json() for s in patch])
        else:
            text = _json_text(patch)
        if len(text) <= self.max_patch_bytes // 4:  # no UTF-8 text can be over: skip encoding
            return
        size = len(text.encode("utf-8", "surrogatepass"))
        if size > self.max_patch_bytes:
            raise TooLargeError(
                f"The edit is {size:,} bytes, over the limit of {self.max_patch_bytes:,} bytes; "
                "nothing was written. Send smaller edits, or use the write tool for a whole "
                "new file."
            )

    # -- preparing one section -----------------------------------------------------------------

    async def _prepare(self, section: PatchSection) -> _Prepared:
        live = await self._load(section.path)
        await self.fs.preflight_write(section.path)
        weight = _weight(live.text, section)
        prepared = await offloaded(weight, lambda: self._prepare_loaded(section, live))
        if not section.notes:
            return prepared
        return replace(prepared, warnings=(*section.notes, *prepared.warnings))

    def _prepare_loaded(self, section: PatchSection, live: _Live) -> _Prepared:
        snapshot = self.store.by_hash(live.key, section.tag)
        if snapshot is None:
            raise self._unknown_tag(section, live)
        # Line numbers refer to the text the agent read: check them there, before anything else.
        validate_edits(section.edits, line_count(snapshot.text), section.header)
        if snapshot.text == live.text:
            conflict = self._conflict_since(section, live, snapshot)
            if conflict is not None:  # the file went back to the text read after another edit
                raise self._stale(section, live, conflict)
            return self._prepare_fresh(section, live)
        if section.edge_only:
            return self._prepare_edges(section, live, snapshot)
        return self._prepare_stale(section, live, snapshot)

    def _prepare_fresh(self, section: PatchSection, live: _Live) -> _Prepared:
        warnings = self._check_seen(section, live.key, live.text)
        applied = self._apply(section.edits, live, section.header)
        seen = self.store.seen_lines(live.key, section.tag, agent=self.agent)
        carried = applied.map_lines(seen)
        return _Prepared(section, live, applied, tuple(warnings), "", carried, section.edits)

    def _prepare_edges(self, section: PatchSection, live: _Live, snapshot: Snapshot) -> _Prepared:
        current = messages.header(section.path, section_tag(live.text))
        applied = self._apply(section.edits, live, current)
        note = (
            f"{section.path} changed since your read ({section.header} is not the current "
            f"text); your insert head/tail rows were added to the current text {current}."
        )
        carried = self._carried_seen(section, snapshot, live, applied)
        return _Prepared(section, live, applied, (note,), "", carried, section.edits)

    def _prepare_stale(self, section: PatchSection, live: _Live, snapshot: Snapshot) -> _Prepared:
        warnings = self._check_seen(section, live.key, snapshot.text)
        outcome = self._rebase(section.path, snapshot.text, live.text, section.footprint())
        if not isinstance(outcome, RebaseRefusal):
            outcome = self._conflict_since(section, live, snapshot) or outcome
        if isinstance(outcome, RebaseRefusal):
            raise self._stale(section, live, outcome)
        edits, refusal = _remap(section.edits, outcome.mapping, outcome.rows)
        if refusal is not None:
            raise self._stale(section, live, refusal)
        current = messages.header(section.path, section_tag(live.text))
        applied = self._apply(edits, live, current)
        banner = "recovered: " + "; ".join(outcome.notes or ("the file changed elsewhere",))
        carried = self._carried_seen(section, snapshot, live, applied)
        return _Prepared(section, live, applied, tuple(warnings), banner, carried, tuple(edits))

    def _carried_seen(
        self, section: PatchSection, snapshot: Snapshot, live: _Live, applied: AppliedEdits
    ) -> frozenset[int]:
        """The agent's seen lines of a stale read, on the text its edit lands as: carried to
        the live text through the lines nobody changed since, then through the edit."""
        seen = self.store.seen_lines(live.key, section.tag, agent=self.agent)
        if not seen:
            return frozenset()
        return applied.map_lines(carry_lines(snapshot.text, live.text, seen))

    def _apply(self, edits: Sequence[Edit], live: _Live, label: str) -> AppliedEdits:
        applied = apply_edits(
            live.text,
            edits,
            repair_echo=self.repair_echo,
            label=label,
            exact=self.exact_rows,
            finder=self._finder(live.path, live.text),
        )
        if applied.parse_problems:
            said = describe_problems(applied.parse_problems, live.path)
            if self.syntax_check is SyntaxCheck.STRICT:
                raise CodeDoesNotParseError(
                    f"Edit rejected: with it, {live.path} {said}. Nothing was written. Fix "
                    f"the rows and send the edit again with the same header {label}."
                )
            note = f"{live.path} {said}: written as sent; fix it with another edit."
            applied = replace(applied, warnings=(*applied.warnings, note))
        if "\x00" in applied.text:
            raise NotTextError(
                f"The edit would put a NUL character into {live.path}; text files never hold "
                "one. Nothing was written. Remove the NUL from your rows and send it again."
            )
        self._check_size(live.path, applied.text, self.max_file_bytes, "The edited file")
        return applied

    def _finder(self, path: str, text: str) -> SpanFinder | None:
        """Where `path` holds Python code (None: no claim, or the check is off)."""
        if self.syntax_check is SyntaxCheck.OFF:
            return None
        code = self._can.code
        return code.code_finder(path, text) if code is not None else finder_for_path(path)

    def _whole_problems(self, path: str, live: _Live | None, text: str) -> tuple[str, ...]:
        """The warning for a whole-file write whose Python no longer parses (or refuses it)."""
        finder = self._finder(path, live.text if live is not None else "")
        if finder is None or not text:
            return ()
        new_lines = split_lines(text)
        old_lines = split_lines(live.text) if live is not None else []
        regions = changed_spans(old_lines, new_lines, finder)
        problems = broken_spans(old_lines, new_lines, regions, finder)
        if not problems:
            return ()
        said = describe_problems(problems, path).replace(" this edit", " this write")
        if live is None:
            said = said.replace("; it parsed before this write", "")
        if self.syntax_check is SyntaxCheck.STRICT:
            raise CodeDoesNotParseError(
                f"Write rejected: {path} {said}. Nothing was written. Fix the content and "
                "send it again."
            )
        return (f"{path} {said}: written as sent; fix it with an edit.",)

    def _conflict_since(
        self, section: PatchSection, live: _Live, snapshot: Snapshot
    ) -> RebaseRefusal | None:
        """The refusal when the edit does not rebase onto a version of the file the store
        recorded after the read (newest first, down to the read; the live text itself left
        out): another agent's edit that landed since, or a read that showed a change. The live
        text may then look as the agent read it where it is not (a person's pasted copy of the
        cell as read, after another agent's edit changed or deleted the cell), so it proves
        nothing either."""
        head = self.store.head(live.key)
        if head is None or head.text == snapshot.text:  # nothing recorded since (the usual case)
            return None
        footprint = section.footprint()
        for version in self.store.history(live.key):
            if version.text == snapshot.text:
                return None  # older versions were recorded before the read
            if version.text == live.text:
                continue
            step = self._rebase(section.path, snapshot.text, version.text, footprint)
            if isinstance(step, RebaseRefusal):
                return RebaseRefusal(
                    "an edit or a save recorded after your read already conflicts with yours "
                    f"(there, {step.reason}), so the current text cannot prove where your edit "
                    "belongs (the cell you read may now be someone's copy)"
                )
        return None

    def _rebase(
        self, path: str, snapshot_text: str, live_text: str, footprint: Footprint
    ) -> LineRebase | RebaseRefusal:
        rebaser = self._can.rebaser
        if rebaser is not None:
            outcome = rebaser.rebase_lines(path, snapshot_text, live_text, footprint)
            if outcome is not None:
                return outcome
        return rebase_by_text(snapshot_text, live_text, footprint)

    # -- seen lines and rejections -------------------------------------------------------------

    def _check_seen(self, section: PatchSection, key: str, shown_text: str) -> list[str]:
        if self.seen_lines is SeenLinesPolicy.OFF:
            return []
        seen = self.store.seen_lines(key, section.tag, agent=self.agent)
        unseen = sorted(section.anchor_lines() - seen)
        if not unseen:
            return []
        if self.seen_lines is SeenLinesPolicy.WARN:
            return [
                f"your edit names line(s) {messages.spans(unseen)} of {section.path}, which you "
                "were never shown; applied anyway. Read before editing to avoid surprises."
            ]
        rows, truncated = messages.reveal_rows(split_lines(shown_text), unseen)
        if not truncated:
            self.store.record_seen_lines(key, section.tag, unseen, agent=self.agent)
        raise UnseenLinesError(
            messages.unseen_message(section.path, section.header, unseen, rows, truncated)
        )

    def _record_rejection(self, live: _Live, shown: Sequence[int]) -> str:
        tag = self.store.record(live.key, live.text)
        if shown:
            self.store.record_seen_lines(live.key, tag, shown, agent=self.agent)
        return tag

    def _unknown_tag(self, section: PatchSection, live: _Live) -> UnknownTagError:
        lines = split_lines(live.text)
        shown = [n for n in sorted(section.anchor_lines()) if 1 <= n <= len(lines)]
        rows, truncated = messages.reveal_rows(lines, shown)
        tag = self._record_rejection(live, [] if truncated else shown)
        current = messages.header(section.path, tag)
        return UnknownTagError(
            messages.unknown_tag_message(
                section.path,
                section.tag,
                current,
                rows,
                getattr(self.store, "where", ""),
                getattr(self.store, "choose_file", ""),
            )
        )

    def _stale(self, section: PatchSection, live: _Live, refusal: RebaseRefusal) -> StaleTagError:
        lines = split_lines(live.text)
        shown = [n for n in refusal.context_live_lines if 1 <= n <= len(lines)]
        tag = self._record_rejection(live, shown)
        changed = set(refusal.changed_live_lines)
        rows = messages.marked_rows(lines, shown, changed)
        current = messages.header(section.path, tag)
        any_marked = any(n in changed for n in shown)
        return StaleTagError(
            messages.stale_message(section.path, refusal.reason, current, rows, any_marked)
        )

    # -- writing -------------------------------------------------------------------------------

    async def _write_all(self, prepared: Sequence[_Prepared]) -> PatchResult:
        done: list[SectionResult] = []
        for index, item in enumerate(prepared):
            if not item.applied.changed:
                done.append(self._noop_section(item, ()))
                continue
            try:
                done.append(await self._write_section(item))
            except Exception as err:
                raise _partial(err, done, prepared[index:]) from err
        return PatchResult(tuple(done))

    async def _write_section(self, item: _Prepared) -> SectionResult:
        live, applied = item.live, item.applied
        landed, write_notes, notes = await self._land(live.path, applied.text, live)
        return await offloaded(
            _weight(landed, item.section),
            lambda: self._landed_section(item, landed, write_notes, notes),
        )

    def _landed_section(
        self,
        item: _Prepared,
        landed: str,
        write_notes: tuple[str, ...],
        notes: tuple[str, ...],
    ) -> SectionResult:
        """What a section's write landed, recorded, as its result."""
        live, applied = item.live, item.applied
        warnings = [*item.warnings, *applied.warnings, *write_notes]
        seen = item.carried_seen
        if landed != applied.text:  # e.g. new cells got ids: what stayed the same stays seen
            if not write_notes and not notes:
                warnings.append(_landed_differs(live.path))
            seen = carry_lines(applied.text, landed, seen)
        new_lines = applied.lines if landed == applied.text else split_lines(landed)
        preview = build_preview(new_lines, applied.regions)
        tag, note = self._record_landed(live.path, live.key, landed, seen | preview.lines)
        warnings.extend(note)
        return SectionResult(
            path=live.path,
            op=SectionOp.UPDATE,
            tag=tag,
            header=messages.header(live.path, tag),
            before=live.text,
            after=landed,
            written=True,
            first_changed_line=applied.first_changed_line,
            warnings=tuple(warnings),
            preview=preview.text,
            banner=item.banner,
            notes=notes,
        )

    def record_rewritten(
        self, path: str, key: str, tag: str, before: str, landed: str
    ) -> tuple[str, tuple[str, ...]]:
        """Record `landed`, the text that replaced `before` (what `tag` showed this agent)
        outside an edit, such as a run's outputs written back. As for an edit's landed text,
        the agent's seen lines are carried over and a store failure is a warning (the text did
        land). Returns the tag of `landed` and the warnings."""
        try:
            seen = self.store.seen_lines(key, tag, agent=self.agent)
        except Exception as err:
            return section_tag(landed), (_unrecorded(path, err),)
        return self._record_landed(path, key, landed, carry_lines(before, landed, seen))

    def _record_landed(
        self, path: str, key: str, landed: str, seen: Iterable[int]
    ) -> tuple[str, tuple[str, ...]]:
        """Record the text a write landed; a store failure now must not turn the landed write
        into an error (the agent would be told nothing changed), so it becomes a warning."""
        try:
            tag = self.store.record(key, landed)
            self.store.record_seen_lines(key, tag, seen, agent=self.agent)
        except Exception as err:
            return section_tag(landed), (_unrecorded(path, err),)
        return tag, ()

    async def _land(
        self, path: str, text: str, live: _Live | None
    ) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
        """Write `text` (normalized) with the file's BOM/eol; return the normalized landed text
        and the filesystem's own warnings and notes about the write (e.g. ids of new cells)."""
        view = live.view if live is not None else self._is_view(path)
        raw = text if view or live is None else restore(text, live.bom, live.eol)
        result = await self.fs.write_text(path, raw)
        text_landed = result.text if view else normalize(result.text).text
        return text_landed, result.warnings, result.notes

    async def _write_whole(
        self, path: str, key: str, live: _Live | None, text: str, view: bool
    ) -> PatchResult:
        if live is not None and live.text == text:
            tag = self.store.record(key, text)
            shown = range(1, len(split_lines(text)) + 1)
            self.store.record_seen_lines(key, tag, shown, agent=self.agent)
            noop = SectionResult(
                path,
                SectionOp.NOOP,
                tag,
                messages.header(path, tag),
                text,
                text,
                False,
                None,
                ("the content equals the current file",),
                "",
            )
            return PatchResult((noop,))
        parse_notes = await offloaded(len(text), lambda: self._whole_problems(path, live, text))
        await self.fs.preflight_write(path)
        landed, write_notes, notes = await self._land(path, text, live)
        lines = split_lines(landed)
        intended = split_lines(text)
        kept = [i + 1 for i, row in enumerate(lines) if i < len(intended) and row == intended[i]]
        tag, note = self._record_landed(path, key, landed, kept)
        differs = landed != text and not notes
        warnings = write_notes or ((_landed_differs(path),) if differs else ())
        warnings = (*parse_notes, *warnings, *note)
        preview = build_preview(lines, [(1, len(lines))], context=0, max_rows=10)
        op = SectionOp.CREATE if live is None else SectionOp.UPDATE
        section = SectionResult(
            path,
            op,
            tag,
            messages.header(path, tag),
            "" if live is None else live.text,
            landed,
            True,
            1 if lines else None,
            warnings,
            preview.text,
            notes=notes,
        )
        return PatchResult((section,))

    # -- no-ops --------------------------------------------------------------------------------

    def _noop_result(self, prepared: Sequence[_Prepared], fingerprint: str) -> PatchResult:
        now = self._clock()
        count = 1
        if self._noop is not None:
            last, last_count, at = self._noop
            if last == fingerprint and now - at <= NOOP_WINDOW_S:
                count = last_count + 1
        self._noop = (fingerprint, count, now)
        if count >= NOOP_ERROR_AT:
            raise RepeatedNoOpError(
                f"This exact edit has now changed nothing {count} times in a row. Nothing was "
                "written. Stop resending it: re-read the file to see its current text, then "
                "decide what (if anything) still needs to change."
            )
        hint = (
            "no changes: every edit equals the current text, so nothing was written."
            if count == 1
            else "this same edit changed nothing twice; re-read the file before editing again "
            "(sending it a third time is an error)."
        )
        return PatchResult(tuple(self._noop_section(p, (hint,)) for p in prepared))

    def _noop_section(self, item: _Prepared, hints: tuple[str, ...]) -> SectionResult:
        live = item.live
        tag = self.store.record(live.key, live.text)
        return SectionResult(
            path=live.path,
            op=SectionOp.NOOP,
            tag=tag,
            header=messages.header(live.path, tag),
            before=live.text,
            after=live.text,
            written=False,
            first_changed_line=None,
            warnings=(*item.warnings, *item.applied.warnings, *hints),
            preview="",
            banner=item.banner,
        )

    # -- locking -------------------------------------------------------------------------------

    @asynccontextmanager
    async def _locked(self, keys: Sequence[str]) -> AsyncIterator[None]:
        """Hold the lock of every key, taken in sorted order so two patches cannot deadlock."""
        async with self.locks.hold(keys):
            yield


def _read_notes(
    total: int,
    first: int,
    last: int,
    offset: int | None,
    limit: int | None,
    cells: object,
    shown: Sequence[int],
) -> list[str]:
    if total == 0:
        return ["(empty file: add lines with `insert head:` or `insert tail:`)"]
    if first > total:
        return [f"(offset {first} is past the end: the file has {total} lines)"]
    if offset is None and limit is None and not cells:
        return []
    if not shown:
        return ["(no lines of the requested cells in that range)"]
    return [f"(showing {len(shown)} of {total} lines; use offset/limit to see others)"]


def _remap(
    edits: Sequence[Edit], mapping: Mapping[int, int], rows: Mapping[str, str]
) -> tuple[tuple[Edit, ...], RebaseRefusal | None]:
    """Move every edit by `mapping` (and rewrite the rows `rows` names); refuse when a range
    would no longer be contiguous."""
    moved = []
    for edit in edits:
        if rows:
            edit = edit.with_lines(edit.start, edit.end, tuple(rows.get(r, r) for r in edit.lines))
        if edit.op.at_edge:
            moved.append(edit)
            continue
        targets = [mapping.get(n) for n in edit.anchors]
        first = targets[0]
        if first is None or any(t != first + i for i, t in enumerate(targets)):
            reason = f"the lines of `{edit.describe()}` are no longer together in the same order"
            return (), RebaseRefusal(reason, (), tuple(t for t in targets if t is not None))
        moved.append(edit.with_lines(first, first + len(targets) - 1))
    return tuple(moved), None


def _refuse_duplicates(sections: Sequence[PatchSection], keys: Sequence[str]) -> None:
    seen: dict[str, str] = {}
    for section, key in zip(sections, keys, strict=True):
        if key in seen:
            raise HashlineError(
                f"The edit has two sections for the same file ({seen[key]} and "
                f"{section.header}). Nothing was written. Put all edits for one file under one "
                "header; line numbers refer to the text as you read it."
            )
        seen[key] = section.header


def _fingerprint(sections: Sequence[PatchSection]) -> str:
    return json.dumps([s.to_json() for s in sections], sort_keys=True)


def _not_text(path: str) -> NotTextError:
    return NotTextError(
        f"{path} is not a text file (it has NUL bytes or is not valid UTF-8), so it cannot be "
        "read or edited as text. Nothing was written."
    )


def _landed_differs(path: str) -> str:
    return (
        f"{path} as saved differs from your edit (the storage rewrote it, e.g. format-on-save or "
        "notebook normalization); the header and preview show the saved text: re-read before "
        "editing lines you did not see here."
    )


def _json_text(patch: object) -> str:
    """A JSON-form patch as JSON text; a value JSON cannot express is a syntax error."""
    try:
        return json.dumps(patch, default=str)
    except (TypeError, ValueError, RecursionError) as err:
        raise PatchSyntaxError(
            f"The edit is not plain JSON data ({type(err).__name__}: {err}). Send the edit text "
            "or the JSON form: {'path', 'tag', 'edits'} or a list of those."
        ) from None


def _unrecorded(path: str, err: Exception) -> str:
    reason = err.message if isinstance(err, HashlineError) else f"{type(err).__name__}: {err}"
    return (
        f"{path} WAS written, but the snapshot store could not record the new text ({reason}). "
        f"Do not send this call again: re-read {path} before editing it again (the header "
        "above may be unknown to the server)."
    )


def _partial(
    err: Exception, done: Sequence[SectionResult], pending: Sequence[_Prepared]
) -> HashlineError:
    written = [s for s in done if s.written]
    if not written and isinstance(err, HashlineError):
        return err
    reason = err.message if isinstance(err, HashlineError) else f"{type(err).__name__}: {err}"
    failed, *rest = pending
    not_written = [_unwritten(p) for p in pending]
    result = PatchResult((*done, *not_written))
    landed = ", ".join(s.header for s in written) or "none"
    missing = ", ".join(p.section.path for p in (failed, *rest))
    message = (
        f"Writing {failed.section.path} failed: {reason}\n"
        f"Landed (new headers): {landed}. NOT written: {missing}. The files not written are "
        "unchanged; re-read them and send their edits again with fresh headers."
    )
    if not written:
        return WriteFailedError(message)
    return PartialWriteError(message, result)


def _unwritten(item: _Prepared) -> SectionResult:
    live = item.live
    tag = section_tag(live.text)
    return SectionResult(
        live.path,
        SectionOp.UPDATE,
        tag,
        messages.header(live.path, tag),
        live.text,
        live.text,
        False,
        None,
        item.warnings,
        "",
    )


def _weight(text: str, section: PatchSection) -> int:
    """What applying `section` to `text` (or recording it landed as `text`) weighs against
    `OFFLOAD_SIZE`: the characters of both (a small file may get a big edit)."""
    return len(text) + section.row_chars
