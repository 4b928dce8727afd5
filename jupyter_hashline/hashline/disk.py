"""A `Filesystem` over real files: confined to a root, strict UTF-8, atomic writes.

Invariants:
- Paths: with a `root`, a relative path is taken relative to the root and an absolute path is
  a real absolute path, accepted only if it lies inside the root (a leading `/` does NOT mean
  the root, unlike the server's API paths). Every path is resolved, symlinks included, before
  use; anything that lands outside the root (`..`, an absolute path elsewhere, a symlink
  leading out, a NUL character) is refused with `PathOutsideRootError`. Symlinks that stay
  inside the root are followed: reads and writes go to the file they point at, and the link
  itself is kept. Without a root, paths are used as given (relative to the working directory).
- `canonical_path` is the resolved path relative to the root as a POSIX string (absolute
  when there is no root), so `a/../b.py`, `./b.py` and a link to `b.py` share one store key.
- Reads return the exact text on disk: bytes decoded as strict UTF-8 with no newline
  translation, so a BOM and CRLF stay visible to the patcher. Undecodable bytes or a NUL
  character mean `NotTextError`; a missing file `NotFoundError`.
- Writes are atomic: a temp file in the target's directory, fsync, `os.replace`. An existing
  file keeps its permission bits; a new file gets the usual mode (0o666 minus the umask).
  Missing parent directories are created (always inside the root: the target was confined
  first, and new directories cannot be symlinks). A read-only file (no write bit) is refused,
  even for a superuser. Any failure raises `WriteFailedError` with the OS reason, leaves the
  old file intact and removes the temp file.
- Blocking I/O runs in a worker thread (`asyncio.to_thread`), never on the event loop, except
  reading a regular file of at most `INLINE_READ_BYTES` (one `stat` says so) and writing at
  most `INLINE_WRITE_BYTES`: those cost less than handing them to a thread and waking the loop
  again (a 15 KB durable write: about 0.7 ms inline, 1.1 ms through a thread). Jupyter's own
  save fsyncs on its event loop at any size. A larger write (with its checks and fsyncs) is one
  worker-thread job.
- Bytes too (`ByteStorage`): `read_bytes` and `write_bytes` keep every promise above except
  the text checks, which belong to the caller that decodes (`decode_text`); a NUL byte is
  never written either way.
- Within one engine call (`callscope`) a path is resolved once and the result reused, so a
  read and the write after it address the same file; outside a call, every use resolves.
- Jupyter's atomic writer copies a file to `.~NAME` beside it before rewriting it in place; a
  save killed there leaves NAME torn (empty or half written) and `.~NAME` whole. Given
  `unreadable` (a predicate on a path and its bytes, from the layer that knows the format),
  a read that finds NAME unreadable and a regular `.~NAME` beside it (not a symlink, inside
  the root) restores it as jupyter_server does: NAME is kept as `NAME.invalid`, `.~NAME`
  becomes NAME, and the restored bytes are read. Without `unreadable` nothing is recovered.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Callable
from pathlib import Path

from .callscope import scope_memo
from .errors import (
    HashlineError,
    NotFoundError,
    NotTextError,
    PathOutsideRootError,
    WriteFailedError,
)
from .filesystem import ByteStorage, Filesystem, WriteResult

__all__ = ["DiskFilesystem", "decode_text", "encode_text"]

_NEW_FILE_MODE = 0o666  # the kernel applies the umask at creation
INLINE_READ_BYTES = 4 * 1024 * 1024
INLINE_WRITE_BYTES = 128 * 1024


class DiskFilesystem(Filesystem, ByteStorage):
    """Text files on the local disk, optionally confined to `root`."""

    def __init__(
        self,
        root: str | os.PathLike[str] | None = None,
        *,
        unreadable: Callable[[str, bytes], bool] | None = None,
    ) -> None:
        self.unreadable = unreadable
        if root is None:
            self.root: Path | None = None
            return
        resolved = Path(root).resolve()
        if not resolved.is_dir():
            raise NotFoundError(
                os.fspath(root), f"Root directory not found: {os.fspath(root)}. Create it first."
            )
        self.root = resolved

    def __repr__(self) -> str:
        return f"DiskFilesystem(root={os.fspath(self.root) if self.root else None!r})"

    # -- the Filesystem protocol ---------------------------------------------------------------

    async def read_text(self, path: str) -> str:
        return decode_text(path, await self.read_bytes(path))

    async def write_text(self, path: str, content: str) -> WriteResult:
        await self.write_bytes(path, encode_text(path, content))
        return WriteResult(text=content)

    async def stores_bytes(self, path: str) -> bool:
        return True

    async def read_bytes(self, path: str) -> bytes:
        target = self.resolve(path)
        if _small_file(target):
            data = _read_bytes(path, target)
        else:
            data = await asyncio.to_thread(_read_bytes, path, target)
        if self.unreadable is not None and self.unreadable(path, data):
            return await asyncio.to_thread(self._recover, path, target, data)
        return data

    def _recover(self, path: str, target: Path, data: bytes) -> bytes:
        """`.~NAME` restored over a torn NAME (kept as `NAME.invalid`), as jupyter_server does
        on its next read; `data` as it was when there is no usable intermediate."""
        intermediate = target.with_name(".~" + target.name)
        try:
            info = os.lstat(intermediate)
        except OSError:
            return data
        inside = self.root is None or _inside(os.fspath(intermediate), os.fspath(self.root))
        if not stat.S_ISREG(info.st_mode) or not inside:
            return data
        try:
            os.replace(target, target.with_name(target.name + ".invalid"))
            os.replace(intermediate, target)
        except OSError:
            return data  # not ours to repair (read-only folder): the read reports it torn
        return _read_bytes(path, target)

    async def write_bytes(self, path: str, data: bytes) -> None:
        target = self.resolve(path)
        if len(data) <= INLINE_WRITE_BYTES:
            _write_bytes(path, target, data)
        else:
            await asyncio.to_thread(_write_bytes, path, target, data)

    async def preflight_write(self, path: str) -> None:
        """Refuse early: escapes, read-only files, directories, unwritable parents."""
        _check_writable(path, self.resolve(path))

    async def exists(self, path: str) -> bool:
        return self.resolve(path).is_file()

    async def canonical_path(self, path: str) -> str:
        target = os.fspath(self.resolve(path))
        if self.root is not None:  # resolved paths lie inside the root: cut it off
            target = target[len(os.fspath(self.root)) :].lstrip(os.sep) or "."
        return target.replace(os.sep, "/")

    # -- path confinement ----------------------------------------------------------------------

    def resolve(self, path: str) -> Path:
        """The real location of `path` (symlinks followed); escapes raise. Resolved once per
        engine call (see the module docstring)."""
        memo = scope_memo()
        if memo is None:
            return self._resolve(path)
        key = ("resolve", self, path)
        found: Path | None = memo.get(key)
        if found is None:
            found = memo[key] = self._resolve(path)
        return found

    def _resolve(self, path: str) -> Path:
        """String operations (`os.path`) rather than pathlib: this runs on every call."""
        if "\x00" in path:
            raise PathOutsideRootError(f"Refused path {path!r}: it contains a NUL character.")
        if self.root is None:
            return Path(os.path.realpath(path))
        root = os.fspath(self.root)
        candidate = path if os.path.isabs(path) else os.path.join(root, path)
        if not _inside(os.path.normpath(candidate), root):
            raise PathOutsideRootError(
                f"Refused path {path}: it is outside the root {self.root}. "
                "Use a path relative to the root, without `..` leading out of it."
            )
        resolved = _realpath(candidate)
        if not _inside(resolved, root):
            raise PathOutsideRootError(
                f"Refused path {path}: a symlink leads outside the root {self.root} "
                f"(to {resolved}). Only files inside the root can be read or written."
            )
        return Path(resolved)


def _realpath(candidate: str) -> str:
    """`os.path.realpath(candidate)`, by one `lstat` per component of an absolute normalized
    path with no link on it (the common case), else by `realpath` itself."""
    if not os.path.isabs(candidate) or os.path.normpath(candidate) != candidate:
        return os.path.realpath(candidate)
    at = candidate.find(os.sep, 1)
    while True:
        prefix = candidate if at == -1 else candidate[:at]
        try:
            mode = os.lstat(prefix).st_mode
        except OSError:
            return candidate  # missing (or not a directory): nothing further to follow
        if stat.S_ISLNK(mode):
            return os.path.realpath(candidate)
        if at == -1:
            return candidate
        at = candidate.find(os.sep, at + 1)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


# -- blocking work (in a worker thread, or inline when small: see the module docstring) --------


def _small_file(target: Path) -> bool:
    try:
        info = os.stat(target)
    except OSError:
        return False  # let the worker thread report it
    return stat.S_ISREG(info.st_mode) and info.st_size <= INLINE_READ_BYTES


def _read_bytes(path: str, target: Path) -> bytes:
    try:
        return target.read_bytes()
    except (FileNotFoundError, NotADirectoryError) as err:
        raise NotFoundError(path) from err
    except IsADirectoryError as err:
        raise NotTextError(f"{path} is a directory, not a text file. Read a file in it.") from err
    except OSError as err:
        raise HashlineError(f"Could not read {path}: {err.strerror or err}.") from err


def decode_text(path: str, data: bytes) -> str:
    """`data` as strict UTF-8 text without NUL characters, else `NotTextError` naming `path`."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise NotTextError(
            f"{path} is not UTF-8 text (undecodable byte at offset {err.start}); "
            "only UTF-8 text files can be read and edited."
        ) from err
    if "\x00" in text:
        raise NotTextError(f"{path} contains NUL bytes: it looks binary and cannot be edited.")
    return text


def encode_text(path: str, content: str) -> bytes:
    """`content` as UTF-8, refused (`NotTextError`) when it holds a NUL or cannot be encoded."""
    if "\x00" in content:
        raise NotTextError(f"Refused to write {path}: the text contains a NUL character.")
    try:
        return content.encode("utf-8")
    except UnicodeEncodeError as err:
        raise NotTextError(
            f"Refused to write {path}: character {content[err.start]!r} at offset {err.start} "
            "cannot be encoded as UTF-8. Remove it and try again."
        ) from err


def _check_writable(path: str, target: Path) -> os.stat_result | None:
    """Raise `WriteFailedError` when a write to `target` would certainly fail; return the
    target's `stat` (None when it does not exist yet)."""
    try:
        info = os.stat(target)
    except FileNotFoundError:
        info = None
    except OSError as err:
        raise _write_failed(path, err) from err
    if info is not None:
        if stat.S_ISDIR(info.st_mode):
            raise WriteFailedError(f"Cannot write {path}: it is a directory.")
        if not info.st_mode & 0o222 or not os.access(target, os.W_OK):
            raise WriteFailedError(
                f"Cannot write {path}: the file is read-only. Nothing was changed; make it "
                "writable first or write somewhere else."
            )
        ancestor = target.parent  # holds an existing file: a directory
    else:
        ancestor = _nearest_existing(target.parent)
        if not ancestor.is_dir():
            raise WriteFailedError(f"Cannot write {path}: {ancestor} is not a directory.")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise WriteFailedError(f"Cannot write {path}: the directory {ancestor} is not writable.")
    return info


def _nearest_existing(directory: Path) -> Path:
    while not directory.exists() and directory != directory.parent:
        directory = directory.parent
    return directory


def _write_bytes(path: str, target: Path, data: bytes) -> None:
    if b"\x00" in data:
        raise NotTextError(f"Refused to write {path}: the data contains a NUL byte.")
    info = _check_writable(path, target)
    try:
        if info is None:
            target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise _write_failed(path, err) from err
    mode = None if info is None else stat.S_IMODE(info.st_mode)
    temp = target.with_name(f".{target.name}.{secrets.token_hex(6)}.hashline-tmp")
    try:
        _write_temp(temp, data, mode)
        os.replace(temp, target)
    except BaseException as err:
        with contextlib.suppress(OSError):
            temp.unlink(missing_ok=True)
        if isinstance(err, OSError):
            raise _write_failed(path, err) from err
        raise
    _fsync_directory(target.parent)


def _write_temp(temp: Path, data: bytes, mode: int | None) -> None:
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, _NEW_FILE_MODE)
    try:
        if mode is not None:
            os.fchmod(fd, mode)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_directory(directory: Path) -> None:
    """Make the rename durable; best effort (some filesystems refuse directory fsync)."""
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _write_failed(path: str, err: OSError) -> WriteFailedError:
    reason = err.strerror or str(err)
    if err.errno == errno.ENOSPC:
        reason += " (the disk is full)"
    return WriteFailedError(
        f"Could not write {path}: {reason}. Nothing was changed: the file is unchanged, its "
        "previous content intact."
    )
