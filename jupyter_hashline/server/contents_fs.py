"""A `Filesystem` over the Jupyter server's contents manager (sync or async).

Every byte goes through the contents manager, never `open()`, so checkpoints, jupytext pairing
and custom storage backends keep working.

Invariants:
- Paths are API paths (see `paths.api_path`): relative to the server root, confined to it,
  symlinks included when the manager stores files on local disk; hidden paths are refused when
  the manager does not allow hidden files; paths outside `allowed_paths` are refused.
- Reads ask for `type="file", format="text"`: the raw text as stored (for `.ipynb`, the JSON).
  A notebook torn by a save that died halfway reads as the previous notebook its atomic
  writer kept (the one place a file is read with `open()`: that writer's own intermediate).
- Notebooks are saved as notebook models (`type="notebook"`, content as `nbformat.reads` gives
  it) so pre/post-save hooks and jupytext pairing run; other files as `type="file",
  format="text"`. The landed text is read back.
- Nothing is written when the server is read-only, the file is marked read-only, the content
  holds a NUL character, or it exceeds `max_file_bytes`.
- Contents-manager `HTTPError`s and other exceptions become engine errors (`HashlineError`).
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar

from jupyter_core.utils import ensure_async
from jupyter_server.services.contents.fileio import path_to_intermediate
from tornado.web import HTTPError

from ..hashline.errors import (
    HashlineError,
    NotFoundError,
    NotTextError,
    TooLargeError,
    WriteFailedError,
)
from ..hashline.filesystem import Filesystem, WriteResult
from ..notebook.errors import InvalidNotebookError
from ..notebook.loading import rejoin_lines
from .config import path_allowed
from .errors import (
    BadRequestError,
    HiddenPathError,
    PathNotAllowedError,
    PermissionDeniedError,
    ReadOnlyError,
    StorageError,
)
from .paths import api_path, confined_os_path, is_hidden_path

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


class ContentsFilesystem(Filesystem):
    """Raw text files addressed by API path, stored by a Jupyter contents manager."""

    def __init__(
        self,
        contents_manager: Any,
        *,
        allowed_paths: tuple[str, ...] = (),
        read_only: bool = False,
        max_file_bytes: int = 64 * 1024 * 1024,
    ) -> None:
        self._cm = contents_manager
        self._allowed = allowed_paths
        self._read_only = read_only
        self._max_file_bytes = max_file_bytes
        root = getattr(contents_manager, "root_dir", "")
        self._local_root = root if isinstance(root, str) and os.path.isdir(root) else None

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
            confined_os_path(self._local_root, path)
        return path

    async def canonical_path(self, path: str) -> str:
        resolved = self.resolve(path)
        if self._local_root is None:
            return resolved
        real = confined_os_path(self._local_root, resolved)
        return os.path.relpath(real, os.path.realpath(self._local_root)).replace(os.sep, "/")

    async def read_text(self, path: str) -> str:
        resolved = self.resolve(path)
        model = await self._call(
            resolved, lambda: self._cm.get(resolved, content=True, type="file", format="text")
        )
        text = model.get("content")
        if not isinstance(text, str):
            raise NotTextError(f"{resolved} is not a text file; only text files can be edited.")
        self._check_size(resolved, text)
        return self._unless_torn(resolved, text) if resolved.endswith(".ipynb") else text

    def _unless_torn(self, path: str, text: str) -> str:
        """A notebook whose save died halfway (a server killed mid-write) is torn, and Jupyter's
        atomic writer left the previous file next to it as its `.~` intermediate: read that
        previous notebook instead, touching nothing (Jupyter restores it on its next open).
        Costs a stat per read; the text is parsed only while an intermediate exists."""
        if self._local_root is None:
            return text
        backup = path_to_intermediate(confined_os_path(self._local_root, path))
        if not os.path.isfile(backup):
            return text
        try:
            json.loads(text)
            return text
        except ValueError:
            pass
        try:
            with open(backup, encoding="utf-8") as previous:
                old = previous.read()
            json.loads(old)
        except (OSError, ValueError):
            return text
        return old

    async def exists(self, path: str) -> bool:
        resolved = self.resolve(path)
        return bool(await self._call(resolved, lambda: self._cm.file_exists(resolved)))

    async def preflight_write(self, path: str) -> None:
        resolved = self.resolve(path)
        self._check_writable(resolved)
        if not await self._call(resolved, lambda: self._cm.file_exists(resolved)):
            await self._check_folder(resolved)
            return
        model = await self._call(
            resolved, lambda: self._cm.get(resolved, content=False, type="file")
        )
        if model.get("writable") is False:
            raise PermissionDeniedError(
                f"{resolved} is not writable on this server; nothing was written."
            )

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
        model = self._model(resolved, content)
        await self._call(resolved, lambda: self._cm.save(model, resolved), writing=True)
        return WriteResult(text=await self.read_text(resolved))

    def _model(self, path: str, content: str) -> dict[str, Any]:
        if not path.endswith(".ipynb"):
            return {"type": "file", "format": "text", "content": content}
        notebook = parse_notebook_text(path, content)
        # The model a contents manager expects is what nbformat.reads gives: multi-line strings
        # joined (jupytext's save hooks, for one, need str sources).
        return {"type": "notebook", "format": "json", "content": rejoin_lines(notebook)}

    def _check_writable(self, path: str) -> None:
        if self._read_only:
            raise ReadOnlyError(
                f"This server is read-only for agents; {path} was not written. "
                "Ask the person running Jupyter to allow edits."
            )
        if self._local_root is None:
            return
        real = confined_os_path(self._local_root, path)
        with contextlib.suppress(OSError):
            if not os.stat(real).st_mode & _WRITE_BITS:
                raise PermissionDeniedError(
                    f"{path} is marked read-only; nothing was written. "
                    "Ask the owner to make it writable, or write a new file."
                )

    def _check_size(self, path: str, text: str) -> None:
        limit = self._max_file_bytes
        if len(text) > limit // 4 and len(text.encode("utf-8", "surrogatepass")) > limit:
            raise TooLargeError(
                f"{path} is larger than this server's file limit ({limit} bytes); "
                "it cannot be read or edited through hashline."
            )


def parse_notebook_text(path: str, content: str) -> dict[str, Any]:
    """The JSON object of a notebook file's text, or `InvalidNotebookError` saying why not."""
    try:
        notebook = json.loads(content)
    except ValueError as err:
        raise InvalidNotebookError(f"{path}: the notebook text is not JSON ({err}).") from err
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        raise InvalidNotebookError(f"{path}: the text is not a notebook (no `cells` list).")
    return notebook
