"""A `Filesystem` over the Jupyter server's contents manager (sync or async).

Every byte goes through the contents manager, never `open()`, so checkpoints, jupytext pairing
and custom storage backends keep working. The manager is looked up on every call (the server's
current one): jupytext's server extension replaces the server's contents manager after other
extensions have loaded.

Invariants:
- Paths are API paths (see `paths.api_path`): relative to the server root, confined to it,
  symlinks included when the manager stores files on local disk; hidden paths are refused when
  the manager does not allow hidden files; paths outside `allowed_paths` are refused.
- Reads ask for `type="file", format="text"`: the raw text as stored (for `.ipynb`, the JSON).
  A notebook paired by jupytext (`jupytext.formats` in its metadata) is read as a notebook
  model instead, so jupytext merges a newer text twin exactly as JupyterLab sees it; its text
  is that model serialized as Jupyter writes it. A notebook torn by a save that died
  halfway reads as the previous notebook Jupyter's atomic writer kept (the one place a file is
  read with `open()`: that writer's own intermediate).
- Notebooks on a stock local-disk manager (exactly jupyter_server's `FileContentsManager`,
  `LargeFileManager` or their async twins, without save hooks), or on jupytext's manager over
  one when neither jupytext's configuration nor the notebook's metadata pairs the notebook
  (jupytext then saves it as that manager would), are stored as bytes (`ByteStorage`): read
  from disk and written crash-safe (a temp file beside the notebook, fsync, rename, directory
  fsync: no moment where the notebook on disk is empty or partial, unlike the stock writer,
  which truncates in place), so the bytes the notebook layer built are the bytes saved,
  nothing is parsed again and nothing is read back. As on a notebook save, a notebook's first
  save gets its checkpoint and the manager emits its `save` event. A notebook that does not
  exist yet is created through jupytext's manager (its metadata may pair it).
- Other writes save what they are given byte for byte (`type="file", format="text"`),
  notebooks included; a notebook's first save gets its checkpoint, as a notebook save does.
  Notebook models (`type="notebook"`, content as `nbformat.reads` gives it) are saved instead
  for paired notebooks (so jupytext writes every paired file) and when the manager has save
  hooks (they may expect notebook models). The landed text is read back the way it is read
  (raw, or the paired notebook's model).
- Nothing is written when the server is read-only, the file is marked read-only, the content
  holds a NUL character, or it exceeds `max_file_bytes`.
- Contents-manager `HTTPError`s and other exceptions become engine errors (`HashlineError`).
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any, TypeVar

from jupyter_core.utils import ensure_async
from jupyter_server.services.contents.filecheckpoints import (
    AsyncFileCheckpoints,
    FileCheckpoints,
)
from jupyter_server.services.contents.fileio import path_to_intermediate
from jupyter_server.services.contents.filemanager import (
    AsyncFileContentsManager,
    FileContentsManager,
)
from jupyter_server.services.contents.largefilemanager import (
    AsyncLargeFileManager,
    LargeFileManager,
)
from jupyter_server.services.contents.manager import AsyncContentsManager, ContentsManager
from tornado.web import HTTPError

from ...hashline import (
    ByteStorage,
    DiskFilesystem,
    Filesystem,
    HashlineError,
    NotFoundError,
    NotTextError,
    TooLargeError,
    WriteFailedError,
    WriteResult,
    scope_memo,
)
from ...notebook import contents_model, is_paired, parse_notebook_text, serialize_notebook
from ..config import path_allowed
from ..errors import (
    BadRequestError,
    HiddenPathError,
    PathNotAllowedError,
    PermissionDeniedError,
    ReadOnlyError,
    StorageError,
)
from ..paths import api_path, confined_os_path, is_hidden_path

T = TypeVar("T")
_WRITE_BITS = stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH


@contextlib.contextmanager
def contents_errors(path: str, *, writing: bool) -> Iterator[None]:
    """Translate what a contents manager raises into the engine's error tree."""
    try:
        yield
    except HashlineError:
        raise
    except HTTPError as err:
        raise _from_http_error(path, err, writing=writing) from err
    except FileNotFoundError as err:
        raise NotFoundError(path) from err
    except PermissionError as err:
        raise PermissionDeniedError(f"Permission denied: {path}. {err.strerror}.") from err
    except Exception as err:
        if writing:
            raise WriteFailedError(f"Writing {path} failed: {err}. The file is unchanged.") from err
        raise StorageError(f"Reading {path} failed: {err}") from err


def _from_http_error(path: str, err: HTTPError, *, writing: bool) -> HashlineError:
    detail = str(err.log_message or err.reason or "")
    if err.status_code == 404:
        return NotFoundError(path)
    if err.status_code == 403:
        return PermissionDeniedError(f"Permission denied: {path}. {detail}".strip())
    if err.status_code == 400 and ("UTF-8" in detail or "base64" in detail):
        return NotTextError(
            f"{path} is not UTF-8 text; only text files and notebooks can be edited."
        )
    if err.status_code == 400 and "directory" in detail:
        return BadRequestError(f"{path} is a directory; name a file inside it.")
    if err.status_code == 400:
        return BadRequestError(f"The server refused {path}: {detail}")
    if writing:
        return WriteFailedError(f"Writing {path} failed: {detail}. The file is unchanged.")
    return StorageError(f"Reading {path} failed: {detail}")


class ContentsFilesystem(Filesystem, ByteStorage):
    """Raw text files addressed by API path, stored by a Jupyter contents manager."""

    def __init__(
        self,
        contents_manager: Any,
        *,
        allowed_paths: tuple[str, ...] = (),
        read_only: bool = False,
        max_file_bytes: int = 64 * 1024 * 1024,
    ) -> None:
        """Over one contents manager; `ContentsFilesystem.current` follows the server's."""
        self._current: Callable[[], Any] = lambda: contents_manager
        self._allowed = allowed_paths
        self._read_only = read_only
        self._max_file_bytes = max_file_bytes
        self._roots: tuple[Any, str | None] | None = None
        self._disk: tuple[str, DiskFilesystem] | None = None
        self._unpaired_files: dict[str, tuple[int, int, bool]] = {}

    @classmethod
    def current(cls, manager: Callable[[], Any], **options: Any) -> ContentsFilesystem:
        """A filesystem over whatever contents manager `manager()` returns at each call."""
        fs = cls(None, **options)
        fs._current = manager
        return fs

    @property
    def _cm(self) -> Any:
        return self._current()

    @property
    def _local_root(self) -> str | None:
        """The manager's root folder when it stores files on local disk (cached per manager)."""
        cm = self._cm
        if self._roots is None or self._roots[0] is not cm:
            root = getattr(cm, "root_dir", "")
            self._roots = (cm, root if isinstance(root, str) and os.path.isdir(root) else None)
        return self._roots[1]

    async def _call(
        self, path: str, call: Callable[[], Awaitable[T] | T], *, writing: bool = False
    ) -> T:
        """Run a (sync or async) contents-manager call with its errors translated."""
        with contents_errors(path, writing=writing):
            return await ensure_async(call())

    def resolve(self, raw: str) -> str:
        """The API path for `raw`, after every confinement check (no I/O but `realpath`)."""
        path = api_path(raw)
        if not getattr(self._cm, "allow_hidden", False) and is_hidden_path(path):
            raise HiddenPathError(
                f"{path} is hidden (a name starts with '.'), and this server does not serve "
                "hidden files (ContentsManager.allow_hidden is False). Pick a visible file."
            )
        if not path_allowed(path, self._allowed):
            raise PathNotAllowedError(
                f"{path} is outside the paths this server lets agents use: "
                f"{list(self._allowed)}. Work on files under those folders."
            )
        if self._local_root is not None:
            self._os_path(path)
        return path

    def _os_path(self, path: str) -> str:
        """The confined real path of API `path`, resolved once per engine call (callscope): the
        file a call read is the file it writes, and a call resolves symlinks only once."""
        root = self._local_root
        assert root is not None
        memo = scope_memo()
        if memo is None:
            return confined_os_path(root, path)
        key = ("contents os path", self, root, path)
        found: str | None = memo.get(key)
        if found is None:
            found = memo[key] = confined_os_path(root, path)
        return found

    async def canonical_path(self, path: str) -> str:
        resolved = self.resolve(path)
        if self._local_root is None:
            return resolved
        real = self._os_path(resolved)
        return os.path.relpath(real, os.path.realpath(self._local_root)).replace(os.sep, "/")

    async def read_text(self, path: str) -> str:
        resolved = self.resolve(path)
        text = await self._read_raw(resolved)
        if resolved.endswith(".ipynb") and is_paired(text):
            return await self._read_model(resolved)
        return text

    async def _read_raw(self, path: str) -> str:
        model = await self._call(
            path, lambda: self._cm.get(path, content=True, type="file", format="text")
        )
        text = model.get("content")
        if not isinstance(text, str):
            raise NotTextError(f"{path} is not a text file; only text files can be edited.")
        self._check_size(path, text)
        return self._unless_torn(path, text) if path.endswith(".ipynb") else text

    def _unless_torn(self, path: str, text: str) -> str:
        """A notebook whose save died halfway (a server killed mid-write) is torn, and Jupyter's
        atomic writer left the previous file next to it as its `.~` intermediate: read that
        previous notebook instead, touching nothing (Jupyter restores it on its next open).
        Costs a stat per read; the text is parsed only while an intermediate exists."""
        previous = self._previous_if_torn(path, text)
        return text if previous is None else previous.decode("utf-8")

    def _previous_if_torn(self, path: str, data: str | bytes) -> bytes | None:
        """The `.~` intermediate's bytes when `data` (the file) is torn and they are not."""
        if self._local_root is None:
            return None
        backup = path_to_intermediate(self._os_path(path))
        if not os.path.isfile(backup):
            return None
        try:
            json.loads(data)
            return None
        except ValueError:
            pass
        try:
            with open(backup, "rb") as previous:
                old = previous.read()
            json.loads(old)
        except (OSError, ValueError):
            return None
        return old

    async def _read_model(self, path: str) -> str:
        """A paired notebook as the contents manager serves it (jupytext merges its twin)."""
        model = await self._call(path, lambda: self._cm.get(path, content=True, type="notebook"))
        content = model.get("content")
        if not isinstance(content, Mapping):
            raise NotTextError(f"{path} did not load as a notebook.")
        text = serialize_notebook(content)
        self._check_size(path, text)
        return text

    # -- notebooks as bytes (ByteStorage) -------------------------------------------------------

    async def stores_bytes(self, path: str) -> bool:
        """Whether notebook `path` is stored as bytes on local disk (see the module docstring):
        on a stock local-disk manager, or on jupytext's over one when nothing pairs it."""
        if not path.endswith(".ipynb") or self._local_root is None:
            return False
        cm = self._cm
        kind = _storage_kind(cm)
        if kind is None or _has_save_hooks(cm):
            return False
        return kind == _STOCK or await self._unpaired(cm, path)

    async def _unpaired(self, cm: Any, path: str) -> bool:
        """Under jupytext's manager: whether neither its configuration nor the notebook's
        metadata pairs `path` (then jupytext saves it as the manager below it would). The
        bytes read to tell are kept for this engine call's `read_bytes`."""
        with contents_errors(path, writing=False):
            config = await ensure_async(cm.get_config(path, use_cache=True))
            if config is not None and config.default_formats(path):
                return False
            try:
                info = os.stat(self._os_path(path))
            except FileNotFoundError:
                # A new notebook: no bytes to tell by, so jupytext's manager saves it and
                # pairs it as the metadata the agent wrote says.
                return False
            known = self._unpaired_files.get(path)
            if known is not None and known[:2] == (info.st_size, info.st_mtime_ns):
                return known[2]
            data = await self._local_disk().read_bytes(path)
        memo = scope_memo()
        if memo is not None:
            memo[("contents bytes", self, path)] = data
        unpaired = not _names_jupytext(data)
        self._remember_unpaired(path, info, unpaired)
        return unpaired

    def _remember_unpaired(self, path: str, info: os.stat_result, unpaired: bool) -> None:
        self._unpaired_files[path] = (info.st_size, info.st_mtime_ns, unpaired)
        while len(self._unpaired_files) > _UNPAIRED_KNOWN:
            del self._unpaired_files[next(iter(self._unpaired_files))]

    async def read_bytes(self, path: str) -> bytes:
        resolved = self.resolve(path)
        memo = scope_memo()
        data = None if memo is None else memo.pop(("contents bytes", self, resolved), None)
        if data is None:
            with contents_errors(resolved, writing=False):
                data = await self._local_disk().read_bytes(resolved)
        self._check_byte_size(resolved, len(data))
        previous = self._previous_if_torn(resolved, data)
        return data if previous is None else previous

    async def write_bytes(self, path: str, data: bytes) -> None:
        resolved = self.resolve(path)
        self._check_writable(resolved)
        self._check_byte_size(resolved, len(data))
        cm = self._cm
        with contents_errors(resolved, writing=True):
            await self._local_disk().write_bytes(resolved, data)
            await _ensure_checkpoint(cm, resolved)
        cm.emit(data={"action": "save", "path": resolved})
        known = self._unpaired_files.get(resolved)
        if known is not None:  # an edit of cells never pairs a notebook (metadata is kept)
            with contextlib.suppress(OSError):
                self._remember_unpaired(resolved, os.stat(self._os_path(resolved)), known[2])

    def _local_disk(self) -> DiskFilesystem:
        """The manager's root as a `DiskFilesystem` (its atomic, fsynced writes)."""
        root = self._local_root
        assert root is not None, "stores_bytes() said this manager keeps no local files"
        if self._disk is None or self._disk[0] != root:
            self._disk = (root, DiskFilesystem(root))
        return self._disk[1]

    # -- the rest of the protocol --------------------------------------------------------------

    async def exists(self, path: str) -> bool:
        resolved = self.resolve(path)
        return bool(await self._call(resolved, lambda: self._cm.file_exists(resolved)))

    async def preflight_write(self, path: str) -> None:
        """Refuse a write that would certainly fail. Passed once, it holds for the rest of the
        engine call (callscope): an edit checks before it prepares and again before it lands,
        and the second asks the contents manager nothing (the write itself still fails on a
        file made read-only in between)."""
        resolved = self.resolve(path)
        self._check_writable(resolved)
        memo = scope_memo()
        key = ("preflight", self, resolved)
        if memo is not None and key in memo:
            return
        if not await self._exists_for_write(resolved):
            await self._check_folder(resolved)
        elif not await self._writable(resolved):
            raise PermissionDeniedError(
                f"{resolved} is not writable on this server; nothing was written."
            )
        if memo is not None:
            memo[key] = True

    def _asks_the_disk(self) -> bool:
        """Whether the manager answers `file_exists` and a model's `writable` from the local
        disk alone (a stock manager, or jupytext's over one): then the disk is asked directly,
        without building a model (a contents `get` also checks hiddenness and emits an event:
        about a millisecond)."""
        return self._local_root is not None and _storage_kind(self._cm) is not None

    async def _exists_for_write(self, path: str) -> bool:
        if self._asks_the_disk():
            return os.path.isfile(self._os_path(path))
        return bool(await self._call(path, lambda: self._cm.file_exists(path)))

    async def _writable(self, path: str) -> bool:
        if self._asks_the_disk():
            return os.access(self._os_path(path), os.W_OK)
        model = await self._call(path, lambda: self._cm.get(path, content=False, type="file"))
        return model.get("writable") is not False

    async def _check_folder(self, path: str) -> None:
        """A new file needs its folder: contents managers do not create folders on save."""
        folder = path.rpartition("/")[0]
        if folder and not await self._call(path, lambda: self._cm.dir_exists(folder)):
            raise NotFoundError(
                path,
                f"Cannot create {path}: the folder {folder} does not exist on this server. "
                "Create the folder first (e.g. in JupyterLab's file browser) or write elsewhere.",
            )

    def check_write(self, path: str, content: str) -> str:
        """Every check a write makes before saving (no I/O but `stat`); returns the API path.

        The live-notebook path (`live.py`) runs these before it edits a shared document.
        """
        resolved = self.resolve(path)
        self._check_writable(resolved)
        if "\x00" in content:
            raise NotTextError(
                f"Refusing to write a NUL character into {resolved}; remove it and retry."
            )
        self._check_size(resolved, content)
        return resolved

    async def write_text(self, path: str, content: str) -> WriteResult:
        resolved = self.check_write(path, content)
        cm = self._cm
        as_notebook = resolved.endswith(".ipynb") and (is_paired(content) or _has_save_hooks(cm))
        model = self._model(resolved, content, as_notebook=as_notebook)
        await self._call(resolved, lambda: cm.save(model, resolved), writing=True)
        if resolved.endswith(".ipynb") and not as_notebook:
            with contents_errors(resolved, writing=True):
                await _ensure_checkpoint(cm, resolved)
        if as_notebook and is_paired(content):
            return WriteResult(text=await self._read_model(resolved))
        return WriteResult(text=await self._read_raw(resolved))

    def _model(self, path: str, content: str, *, as_notebook: bool) -> dict[str, Any]:
        if not path.endswith(".ipynb"):
            return {"type": "file", "format": "text", "content": content}
        if as_notebook:  # jupytext's save hooks, for one, need the model nbformat.reads gives
            return contents_model(path, content)
        parse_notebook_text(path, content)  # never save a broken notebook
        return {"type": "file", "format": "text", "content": content}

    def _check_writable(self, path: str) -> None:
        if self._read_only:
            raise ReadOnlyError(
                f"This server is read-only for agents; {path} was not written. "
                "Ask the person running Jupyter to allow edits."
            )
        if self._local_root is None:
            return
        real = self._os_path(path)
        with contextlib.suppress(OSError):
            if not os.stat(real).st_mode & _WRITE_BITS:
                raise PermissionDeniedError(
                    f"{path} is marked read-only; nothing was written. "
                    "Ask the owner to make it writable, or write a new file."
                )

    def _check_size(self, path: str, text: str) -> None:
        if len(text) > self._max_file_bytes // 4:
            self._check_byte_size(path, len(text.encode("utf-8", "surrogatepass")))

    def _check_byte_size(self, path: str, size: int) -> None:
        limit = self._max_file_bytes
        if size > limit:
            raise TooLargeError(
                f"{path} is larger than this server's file limit ({limit} bytes); "
                "it cannot be read or edited through hashline."
            )


_STOCK_MANAGERS = (
    FileContentsManager,
    AsyncFileContentsManager,
    LargeFileManager,  # saves in chunks when asked, else as the manager it extends
    AsyncLargeFileManager,
)
_STOCK, _JUPYTEXT = "stock", "jupytext"
_UNPAIRED_KNOWN = 256
"""Notebooks whose pairing verdict is remembered (by size and modification time)."""
_JUPYTEXT_KEY = b'"jupytext'
"""Starts every key jupytext pairs a notebook by (`jupytext`, with its `formats` and
`text_representation`, and the older `jupytext_formats`); base64 data never holds a quote."""


_NBFORMAT_HEAD = b'{\n "cells": ['
_TOP_METADATA = b'\n ],\n "metadata": {'
"""In nbformat's layout (indent 1, keys sorted) the notebook's own metadata follows the cells
at depth 1; a JSON string holds no raw line break, so these bytes occur there only."""


def _names_jupytext(data: bytes) -> bool:
    """Whether a notebook file may hold a jupytext key: in nbformat's layout only its top-level
    metadata can pair it, and only that (the end of the file) is searched; in any other layout,
    the whole file (a key in a cell's metadata counts too: when in doubt, the file is paired)."""
    start = data.rfind(_TOP_METADATA) if data.startswith(_NBFORMAT_HEAD) else -1
    return data.find(_JUPYTEXT_KEY, max(start, 0)) != -1


def _stock_class(cls: type) -> bool:
    """Whether `cls` is one of jupyter_server's own local-disk managers, exactly: a subclass
    may store files its own way (override how it writes, reads or names them), so it keeps
    going through `save()`."""
    return cls in _STOCK_MANAGERS


_OWN_WAYS = ("save", "get", "atomic_writing", "_save_file", "_save_notebook", "_read_file")
"""Methods that, replaced on a manager instance, make it store files its own way."""


def _storage_kind(cm: Any) -> str | None:
    """`_STOCK`, `_JUPYTEXT` (jupytext's manager over a stock one) or None (anything else,
    including a stock manager with one of its storing methods replaced on the instance)."""
    if any(name in vars(cm) for name in _OWN_WAYS):
        return None
    cls = type(cm)
    if _stock_class(cls):
        return _STOCK
    if cls.__name__.endswith("JupytextContentsManager") and _stock_class(cls.__mro__[1]):
        return _JUPYTEXT
    return None


def _has_save_hooks(cm: Any) -> bool:
    """Whether saving runs hooks besides the manager's own (they may expect notebook models)."""
    hooks = (getattr(cm, "pre_save_hook", None), getattr(cm, "post_save_hook", None))
    registered = (getattr(cm, "_pre_save_hooks", ()), getattr(cm, "_post_save_hooks", ()))
    return any(hook is not None for hook in hooks) or any(len(r) for r in registered)


async def _ensure_checkpoint(cm: Any, path: str) -> None:
    """What a notebook save does after saving: make sure one checkpoint exists. With
    jupyter_server's own file checkpoints, that is whether the checkpoint's file exists (where
    they keep it, one `isfile`): their `list_checkpoints` also builds the checkpoint's model,
    and the async one stats the file in a worker thread for its date, which nobody reads here
    (0.7 ms of every agent save of a 15 KB notebook on a real server)."""
    if _lists_stock_checkpoints(cm):
        found = os.path.isfile(cm.checkpoints.checkpoint_path("checkpoint", path.strip("/")))
    else:
        found = bool(await ensure_async(cm.list_checkpoints(path)))
    if not found:
        await ensure_async(cm.create_checkpoint(path))


_STOCK_CHECKPOINTS = (FileCheckpoints, AsyncFileCheckpoints)
_LISTS_ITS_CHECKPOINTS = (ContentsManager.list_checkpoints, AsyncContentsManager.list_checkpoints)


def _lists_stock_checkpoints(cm: Any) -> bool:
    """Whether `cm` lists checkpoints by asking jupyter_server's own file checkpoints, exactly
    (a subclass, or a manager listing them its own way, is asked through `list_checkpoints`)."""
    listing = getattr(type(cm), "list_checkpoints", None)
    return (
        type(getattr(cm, "checkpoints", None)) in _STOCK_CHECKPOINTS
        and "list_checkpoints" not in vars(cm)
        and listing in _LISTS_ITS_CHECKPOINTS
    )
