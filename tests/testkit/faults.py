"""Fault injection for the disk and the snapshot store, shared by the reliability tests.

`DiskFaults` wraps the `os` calls `DiskFilesystem` makes while writing (open of the temp file,
write, fsync, replace) and raises a chosen `OSError` at one of those points, only for files
under one root, so nothing else in the process is disturbed. `store_state` captures everything
a snapshot store knows about one path, to prove a failed write left it unadvanced.
`QuickSqliteStore`, `hold_exclusive_lock` and `garble` make a store busy or corrupt.

`Trial` judges one injected fault by the files alone, independently of the test's other
asserts: every file under the root is exactly as it was before the fault, or carries exactly
the edits acknowledged to the agent (an `Edit` the oracle applies to the old bytes itself,
never through hashline), plus any edit whose outcome the agent never learned (a killed
process: landed or not, never torn); notebooks stay valid; no temporary file is left unless a
killed process had no chance to clean up. Each trial is one fault, counted once.

Counts go to the one recorder (recorder.py): `TALLY` is its counter of inputs tried and clean
errors, each `Trial` records its fault there (judged before anything may raise), and while a
trial runs, the error answers it provokes are counted as expected ones.
"""

from __future__ import annotations

import errno
import itertools
import json
import os
import sqlite3
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

import nbformat
import pytest

from jupyter_hashline.hashline import SqliteSnapshotStore, disk
from testkit.recorder import RECORDER

TALLY: Counter[str] = RECORDER.counts  # inputs tried / clean errors
TEMP_SUFFIX = ".hashline-tmp"
POINTS = ("open", "write", "fsync", "replace")
ERRNOS = {
    "ENOSPC": errno.ENOSPC,
    "EIO": errno.EIO,
    "EACCES": errno.EACCES,
    "EROFS": errno.EROFS,
    "EDQUOT": errno.EDQUOT,
}


@dataclass
class DiskFaults:
    """Raise `OSError(code)` at `point` of every write under `root` while armed."""

    root: Path
    point: str
    code: int
    armed: bool = True
    injected: int = 0
    _temp_fds: set[int] = field(default_factory=set)

    def _fail(self) -> None:
        self.injected += 1
        raise OSError(self.code, os.strerror(self.code))

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        real_open, real_write = os.open, os.write
        real_fsync, real_replace = os.fsync, os.replace

        def ours(path: object) -> bool:
            text = os.fspath(path) if isinstance(path, (str, os.PathLike)) else ""
            return self.armed and str(text).startswith(str(self.root))

        def fake_open(path: Any, flags: int, mode: int = 0o777, **kw: Any) -> int:
            is_temp = ours(path) and str(path).endswith(TEMP_SUFFIX)
            if is_temp and self.point == "open":
                self._fail()
            fd = real_open(path, flags, mode, **kw)
            if is_temp:
                self._temp_fds.add(fd)
            return fd

        def fake_write(fd: int, data: Any) -> int:
            if self.armed and fd in self._temp_fds and self.point == "write":
                real_write(fd, bytes(data[: max(1, len(data) // 2)]))  # half lands, then ENOSPC
                self._temp_fds.discard(fd)
                self._fail()
            return real_write(fd, data)

        def fake_fsync(fd: int) -> None:
            if self.armed and fd in self._temp_fds and self.point == "fsync":
                self._temp_fds.discard(fd)
                self._fail()
            real_fsync(fd)

        def fake_replace(src: Any, dst: Any, **kw: Any) -> None:
            if ours(dst) and self.point == "replace":
                self._fail()
            real_replace(src, dst, **kw)

        monkeypatch.setattr(disk.os, "open", fake_open)
        monkeypatch.setattr(disk.os, "write", fake_write)
        monkeypatch.setattr(disk.os, "fsync", fake_fsync)
        monkeypatch.setattr(disk.os, "replace", fake_replace)


def temp_files(root: Path) -> list[Path]:
    """Temp files a write left behind (there must be none after a failure it survived)."""
    return sorted(p for p in root.rglob(f"*{TEMP_SUFFIX}"))


def tree_bytes(root: Path) -> dict[str, bytes]:
    """Every regular file under `root` and its bytes."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def store_state(store: Any, key: str) -> list[tuple[str, str, int, frozenset[int]]]:
    """(tag, text, recorded_at_ms, seen lines) of every version of `key`, newest first."""
    return [
        (snap.tag, snap.text, snap.recorded_at_ms, store.seen_lines(key, snap.tag))
        for snap in store.history(key)
    ]


class QuickSqliteStore(SqliteSnapshotStore):
    """The server's default store with a short busy timeout, for lock tests through REST
    (configured as `store_class = "testkit.faults.QuickSqliteStore"`)."""

    def __init__(self, path: str, max_versions_per_path: int = 64) -> None:
        super().__init__(path, max_versions_per_path, busy_timeout_s=0.2)


def hold_exclusive_lock(db: Path) -> sqlite3.Connection:
    """Another process's view: a connection holding the store's write lock until rollback."""
    holder = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN EXCLUSIVE")
    return holder


def garble(db: Path) -> bytes:
    """Overwrite every page of a SQLite file but the header with 0xFF; returns the bytes."""
    data = bytearray(db.read_bytes())
    for offset in range(100, len(data), 4096):
        data[offset : offset + 4096] = b"\xff" * min(4096, len(data) - offset)
    for suffix in ("-wal", "-shm"):
        db.with_name(db.name + suffix).unlink(missing_ok=True)
    db.write_bytes(bytes(data))
    return bytes(data)


# -- the oracle ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Edit:
    """An edit as the oracle applies it to a file's old bytes: `replace` line `line` (1-based),
    `insert_after` it, `append` a line, or `create` the file with `text`. In a notebook, lines
    are those of cell `cell`'s source."""

    path: str
    op: str
    line: int = 0
    text: str = ""
    cell: int | None = None


def _edit_lines(lines: list[str], edit: Edit) -> None:
    if edit.op == "replace":
        lines[edit.line - 1] = edit.text
    elif edit.op == "insert_after":
        lines.insert(edit.line, edit.text)
    elif edit.op == "append":
        lines.append(edit.text)
    else:
        raise ValueError(f"unknown edit {edit.op}")


def _edited_text(old: bytes, edit: Edit) -> bytes:
    bom = old.startswith(b"\xef\xbb\xbf")
    text = old.decode("utf-8-sig")
    eol = "\r\n" if "\r\n" in text.split("\n", 1)[0] + "\n" else "\n"
    ends = text.endswith(eol)
    lines = text[: -len(eol)].split(eol) if ends else text.split(eol)
    _edit_lines(lines, edit)
    out = eol.join(lines) + (eol if ends else "")
    return (b"\xef\xbb\xbf" if bom else b"") + out.encode("utf-8")


def _joined(value: Any, key: str = "") -> Any:
    """A notebook value with multi-line strings joined (as nbformat reads them)."""
    if isinstance(value, dict):
        return {k: _joined(v, k) for k, v in value.items() if k != "trusted"}
    if isinstance(value, list):
        if all(isinstance(v, str) for v in value) and (key in ("source", "text") or "/" in key):
            return "".join(value)
        return [_joined(v) for v in value]
    return value


def _edited_notebook(old: Any, edit: Edit) -> Any:
    nb = _joined(old)
    assert edit.cell is not None, "a notebook edit names its cell"
    cell = nb["cells"][edit.cell]
    lines = cell["source"].split("\n")
    _edit_lines(lines, edit)
    cell["source"] = "\n".join(lines)
    return nb


@dataclass
class Trial:
    """One injected fault, judged on the files under `root` when the `with` block ends."""

    name: str
    root: Path
    leftovers: bool = False  # a killed process may leave its temporary file
    aside: tuple[str, ...] = ()  # files a recovery may set aside (Jupyter's `<name>.invalid`)
    before: dict[str, bytes] = field(default_factory=dict)
    acknowledged: list[Edit] = field(default_factory=list)
    unknown: list[Edit] = field(default_factory=list)
    verdict: str = ""
    _injecting: Any = None

    def __enter__(self) -> Trial:
        self.before = tree_bytes(self.root)
        self._injecting = RECORDER.injecting()
        self._injecting.__enter__()
        return self

    def acknowledge(self, *edits: Edit) -> None:
        """Edits the agent was told landed: they must be in the files."""
        self.acknowledged.extend(edits)

    def outcome_unknown(self, *edits: Edit) -> None:
        """Edits whose outcome the agent never learned: landed or not, never half."""
        self.unknown.extend(edits)

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._injecting.__exit__(None, None, None)
        self.verdict = self.judge()
        RECORDER.fault(self.name, not self.verdict)
        RECORDER.trial_edits(self.name, len(self.acknowledged), self.verdict)
        if kind is None and self.verdict:
            raise AssertionError(f"fault not survived ({self.name}): {self.verdict}")

    @property
    def survived(self) -> bool:
        return not self.verdict

    def judge(self) -> str:
        """'' when the files are an allowed outcome, else what is wrong."""
        leftover = temp_files(self.root)
        if leftover and not self.leftovers:
            return f"temporary files left: {[p.name for p in leftover]}"
        final = {
            k: v
            for k, v in tree_bytes(self.root).items()
            if not _ignored(k, self.leftovers) and k not in self.aside
        }
        problems = []
        for landed in self._allowed():
            problem = _compare(landed, final)
            if not problem:
                return ""
            problems.append(problem)
        return problems[0]

    def _allowed(self) -> list[dict[str, Any]]:
        """Every state the files may be in: the unknown edits landed or not, then the
        acknowledged ones, in order."""
        states = []
        for count in range(len(self.unknown) + 1):
            for chosen in itertools.combinations(self.unknown, count):
                states.append(_apply_all(self.before, [*chosen, *self.acknowledged]))
        return states


def _ignored(path: str, leftovers: bool) -> bool:
    hidden = any(part.startswith(".") for part in Path(path).parts)
    return hidden or (leftovers and path.endswith(TEMP_SUFFIX))


def _apply_all(before: dict[str, bytes], edits: Sequence[Edit]) -> dict[str, Any]:
    state: dict[str, Any] = {k: v for k, v in before.items() if not _ignored(k, True)}
    for edit in edits:
        if edit.op == "create":
            state[edit.path] = edit.text.encode("utf-8")
        elif edit.path.endswith(".ipynb"):
            old = state[edit.path]
            state[edit.path] = _edited_notebook(
                json.loads(old) if isinstance(old, bytes) else old, edit
            )
        else:
            state[edit.path] = _edited_text(state[edit.path], edit)
    return state


def _compare(want: dict[str, Any], final: dict[str, bytes]) -> str:
    if set(want) != set(final):
        return f"files differ: expected {sorted(want)}, found {sorted(final)}"
    for path, expected in want.items():
        got = final[path]
        if isinstance(expected, bytes):
            if got != expected:
                return f"{path} is neither as it was nor as the acknowledged edits left it"
            continue
        try:
            nb = json.loads(got)
            nbformat.validate(nbformat.from_dict(json.loads(got)))
        except Exception as error:
            return f"{path} is not a valid notebook: {type(error).__name__}: {error}"
        if _joined(nb) != expected:
            return f"{path} does not hold exactly the acknowledged edits"
    return ""


@pytest.fixture
def fault(request: pytest.FixtureRequest) -> Callable[..., Trial]:
    """`with fault(root, "label") as trial:` one injected fault, judged on the files."""

    def start(
        root: Path, label: str = "", *, leftovers: bool = False, aside: tuple[str, ...] = ()
    ) -> Trial:
        return Trial(f"{request.node.nodeid} {label}".strip(), root, leftovers, aside)

    return start
