"""Notebook trust kept across the engine's writes: Jupyter's signatures, computed as nbformat does.

Jupyter renders a notebook's HTML and JavaScript outputs only when the notebook is trusted: its
signature (an HMAC of the whole notebook, `nbformat.sign`) is in the notary's store on this
machine. Jupyter's save signs a notebook when every code cell is trusted (JupyterLab marks the
cells of a trusted notebook, and of the person's own runs) or has no output that could run
code; a read marks every cell trusted or not by that store. The engine writes notebook bytes
itself, so without this module a single agent edit made a trusted notebook untrusted.

The rule (`TrustKeeper.kept`): the version a write makes is signed exactly when
- the version it replaces is signed: the engine keeps trust, it never grants it; and
- every output of the new version that Jupyter does not trust unsigned (`execute_result` and
  `display_data` with data: what `NotebookNotary.check_cells` distrusts) was an output of the
  version it replaces, or of an earlier signed version of the same notebook that a write
  dropped (a deleted cell an undo restores), or came from the notebook's kernel in this very
  write (`ran`: the outputs `NotebookFilesystem.write_outputs` sets).
So editing sources, metadata and cell structure, clearing outputs, deleting cells and undoing
those keep trust, as the same edits saved from JupyterLab do. An output that comes from
anywhere else (a cell restored from an untrusted version) leaves the new version unsigned, and
a note says so.
Outputs of the engine's own runs count as a person's runs count in JupyterLab: they came from
the notebook's kernel on this machine, run by someone who can already run any code there.

Invariants:
- `notebook_digest` is `NotebookNotary.compute_signature(nbformat.reads(file))` for the file
  the notebook was loaded from or serialized to: the HMAC over nbformat's `yield_everything`
  order of the notebook without what nbformat strips on read (`signature`, `orig_nbformat`,
  `orig_nbformat_minor` in its metadata, `trusted` in its cells' metadata). HMAC hashes the
  concatenation of the pieces, so a source stored as a list of lines hashes as its joined
  string: the notebook the engine holds is hashed as it is, with no nbformat round trip.
  (A notebook nbformat repairs on read, such as one with missing or duplicate ids, gets fresh
  random ids there on every read, so Jupyter never finds it signed; neither does this.)
- Outputs dropped from signed versions are remembered as fingerprints (SHA-256 of their sorted
  JSON), per path, bounded (`VOUCHED_PER_PATH`), in this process only.
- Each cell's hashed text is cached by the cell object's identity (cells a write kept are the
  very same objects), and each path's last digest by the version: a write hashes the text of
  the cells it changed, then bytes. Digests are computed off the event loop when the notebook
  is large (`offloaded`); the notary is asked on the caller's thread (nbformat's SQLite store
  serves only the thread that opened it), as Jupyter asks it on every notebook save and read.
- A failing notary (a store that raises, a read-only database) never fails or undoes a write:
  the failure is logged, the write's result says nothing about trust, and nothing is signed.
- A machine that never signed a notebook gets nothing created by this module: no secret file,
  no signature database (`NbformatNotary` asks for the key only when the secret exists).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ..hashline.offload import offloaded
from .loading import LoadedNotebook, rejoined_outputs
from .serialize import CellJsonCache

__all__ = [
    "NbformatNotary",
    "Notary",
    "SigningKey",
    "TrustKeeper",
    "data_dir_notary",
    "dropped_outputs",
    "fingerprints",
    "notebook_digest",
    "outputs_known",
]

VOUCHED_PER_PATH = 4096
"""Fingerprints of outputs from signed versions remembered per notebook (see `TrustKeeper`)."""

_log = logging.getLogger(__name__)

NOTEBOOK_TRANSIENT = frozenset({"signature", "orig_nbformat", "orig_nbformat_minor"})
"""Notebook metadata keys nbformat strips on read: never part of a signature."""
CELL_TRANSIENT = "trusted"
"""The cell metadata key nbformat strips on read (JupyterLab's per-cell trust flag)."""
UNSAFE_OUTPUT_TYPES = frozenset({"execute_result", "display_data"})
SAFE_OUTPUT_KEYS = frozenset({"output_type", "execution_count", "metadata"})
"""An output of those types with any other key (its `data`) is distrusted unsigned
(`NotebookNotary._check_cell`)."""


@dataclass(frozen=True, slots=True)
class SigningKey:
    """The notary's secret and hash algorithm (a `hashlib` name, e.g. `sha256`)."""

    secret: bytes
    algorithm: str


class Notary(Protocol):
    """Where signatures are kept (the seam `TrustKeeper` signs through)."""

    def key(self) -> SigningKey | None:
        """The signing key, or None when nothing can have been signed (no secret yet)."""

    def is_signed(self, digest: str, algorithm: str) -> bool:
        """Whether the store holds this signature."""

    def sign(self, digest: str, algorithm: str) -> None:
        """Store this signature."""


class NbformatNotary:
    """A `Notary` over an nbformat `NotebookNotary` (a contents manager's `notary`, or one over
    a data dir), looked up on every call: `notary()` may return another one each time (the
    server's current contents manager) or None (no notary: nothing is signed)."""

    def __init__(self, notary: Callable[[], Any]) -> None:
        self._notary = notary

    def key(self) -> SigningKey | None:
        notary = self._notary()
        if notary is None:
            return None
        if not notary.trait_has_value("secret"):
            secret_file = notary.secret_file
            if not secret_file or not Path(secret_file).is_file():
                return None  # reading `secret` would create one: nothing was signed with it
        return SigningKey(notary.secret, notary.algorithm)

    def is_signed(self, digest: str, algorithm: str) -> bool:
        notary = self._notary()
        return notary is not None and bool(notary.store.check_signature(digest, algorithm))

    def sign(self, digest: str, algorithm: str) -> None:
        notary = self._notary()
        if notary is not None:
            notary.store.store_signature(digest, algorithm)


def _pieces(value: Any, out: list[str]) -> None:
    """The text nbformat's `yield_everything` yields for `value`, appended to `out`: a dict's
    keys in sorted order each followed by its value, a list's items, a string as it is, any
    other value as `str()` gives it."""
    if isinstance(value, dict):
        for key in sorted(value):
            out.append(key)
            _pieces(value[key], out)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _pieces(item, out)
    elif isinstance(value, str):
        out.append(value)
    else:
        out.append(str(value))


def _without(value: Any, key: str) -> Any:
    if isinstance(value, dict) and key in value:
        return {k: v for k, v in value.items() if k != key}
    return value


def cell_text(cell: Any) -> str:
    """What a cell contributes to its notebook's signature, as text (its `trusted` flag left
    out)."""
    out: list[str] = []
    if isinstance(cell, dict) and isinstance(cell.get("metadata"), dict):
        cell = {**cell, "metadata": _without(cell["metadata"], CELL_TRANSIENT)}
    _pieces(cell, out)
    return "".join(out)


def _chunks(nb: Mapping[str, Any], cache: CellJsonCache | None) -> Iterator[str]:
    """The notebook's signed text, in pieces: every cell's text (cached by cell identity)."""
    for key in sorted(nb):
        value = nb[key]
        if key == "metadata" and isinstance(value, dict):
            value = {k: v for k, v in value.items() if k not in NOTEBOOK_TRANSIENT}
        if key != "cells" or not isinstance(value, list):
            out = [key]
            _pieces(value, out)
            yield "".join(out)
            continue
        yield key
        known = cache.get_many(value) if cache is not None else [None] * len(value)
        for cell, text in zip(value, known, strict=True):
            if text is None:
                text = cell_text(cell)
                if cache is not None:
                    cache.put(cell, text)
            yield text


def notebook_digest(
    nb: Mapping[str, Any], key: SigningKey, cache: CellJsonCache | None = None
) -> str:
    """The notebook's signature under `key`, as nbformat computes it (see the module
    docstring). Raises `UnicodeEncodeError` for text nbformat cannot hash either."""
    mac = hmac.new(key.secret, digestmod=key.algorithm)
    for chunk in _chunks(nb, cache):
        mac.update(chunk.encode("utf-8"))
    return mac.hexdigest()


def _output_lists(nb: Mapping[str, Any]) -> list[list[Any]]:
    """The `outputs` lists of the notebook's code cells (what Jupyter's trust looks at)."""
    cells = nb.get("cells")
    lists: list[list[Any]] = []
    for cell in cells if isinstance(cells, list) else ():
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            outputs = cell.get("outputs")
            if isinstance(outputs, list) and outputs:
                lists.append(outputs)
    return lists


def _unsafe(lists: Iterable[list[Any]]) -> list[Any]:
    """The outputs of these lists Jupyter distrusts in an unsigned notebook."""
    return [output for outputs in lists for output in outputs if _distrusted(output)]


def _apart(one: Mapping[str, Any], other: Mapping[str, Any]) -> list[Any]:
    """The distrusted outputs of `one` that are not the very objects `other` holds. Lists a
    write kept (every cell it did not touch, and the cells whose source alone changed) are
    passed over whole, so this costs a look per cell, not per output."""
    held = _output_lists(other)
    same = {id(outputs) for outputs in held}
    apart = _unsafe(outputs for outputs in _output_lists(one) if id(outputs) not in same)
    if not apart:
        return apart
    known = {id(output) for outputs in held for output in outputs}
    return [output for output in apart if id(output) not in known]


def _distrusted(output: Any) -> bool:
    """Whether Jupyter distrusts this output in an unsigned notebook (anything that is not
    an output dict is distrusted too)."""
    if not isinstance(output, dict):
        return True
    return output.get("output_type") in UNSAFE_OUTPUT_TYPES and not set(output) <= SAFE_OUTPUT_KEYS


def fingerprints(outputs: Iterable[Any]) -> set[bytes]:
    """Outputs as comparable fingerprints (SHA-256 of their sorted JSON), however their lines
    are stored."""
    joined = rejoined_outputs(list(outputs))
    return {
        hashlib.sha256(json.dumps(output, sort_keys=True, ensure_ascii=False).encode()).digest()
        for output in joined
    }


def outputs_known(
    old: Mapping[str, Any], new: Mapping[str, Any], vouched: Collection[bytes] = ()
) -> bool:
    """Whether every output of `new` that Jupyter distrusts unsigned is an output of `old`, or
    one of the `vouched` fingerprints (outputs of earlier signed versions).

    Outputs the write kept are the very objects `old` holds (found by identity, so only the
    others are compared by value)."""
    others = _apart(new, old)
    if not others:
        return True
    unknown = fingerprints(others) - fingerprints(_unsafe(_output_lists(old)))
    return all(fingerprint in vouched for fingerprint in unknown)


def dropped_outputs(old: Mapping[str, Any], new: Mapping[str, Any]) -> set[bytes]:
    """Fingerprints of the distrusted outputs of `old` that `new` no longer holds (a deleted
    cell's, a cleared or re-run cell's)."""
    gone = _apart(old, new)
    return fingerprints(gone) if gone else set()


def _untrusted_note(path: str) -> str:
    return (
        f"{path} was trusted, but this version is not signed: it has outputs the trusted "
        "version did not have, so JupyterLab will not run their HTML or JavaScript until "
        "someone trusts the notebook again (File > Trust Notebook, or `jupyter trust`)."
    )


class TrustKeeper:
    """Keeps a notebook signed across the engine's writes (the rule in the module docstring)."""

    def __init__(self, notary: Notary, *, cache_size: int = 16) -> None:
        self.notary = notary
        self._cells = CellJsonCache()
        self._digests: OrderedDict[str, tuple[LoadedNotebook, SigningKey, str]] = OrderedDict()
        self._vouched: OrderedDict[str, dict[bytes, None]] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()

    async def kept(
        self, path: str, old: LoadedNotebook, new: LoadedNotebook, *, ran: bool = False
    ) -> tuple[str, ...]:
        """Sign `new` (the version a write landed at `path`) when the rule says so; the notes
        to give (why a trusted notebook lost its trust). Never raises: a failure is logged."""
        try:
            return await self._kept(path, old, new, ran=ran)
        except Exception:
            _log.warning(
                "Could not keep %s trusted: its new version is written, not signed.",
                path,
                exc_info=True,
            )
            return ()

    async def _kept(
        self, path: str, old: LoadedNotebook, new: LoadedNotebook, *, ran: bool
    ) -> tuple[str, ...]:
        key = self.notary.key()
        if key is None:
            return ()
        before = await offloaded(len(old.raw), lambda: self.digest(path, old, key))
        if not self.notary.is_signed(before, key.algorithm):
            return ()
        vouched = await offloaded(len(old.raw), lambda: self._vouch(path, old, new))
        if not ran and not await offloaded(
            len(new.raw), lambda: outputs_known(old.nb, new.nb, vouched)
        ):
            return (_untrusted_note(path),)
        after = await offloaded(len(new.raw), lambda: self.digest(path, new, key))
        self.notary.sign(after, key.algorithm)
        return ()

    def _vouch(self, path: str, old: LoadedNotebook, new: LoadedNotebook) -> Collection[bytes]:
        """Remember the outputs signed version `old` had and `new` drops (an undo of a cell's
        deletion brings them back: they came from a trusted version of this very notebook);
        what is remembered for the path."""
        dropped = dropped_outputs(old.nb, new.nb)
        with self._lock:
            vouched = self._vouched.pop(path, {})
            vouched.update(dict.fromkeys(dropped))
            while len(vouched) > VOUCHED_PER_PATH:
                del vouched[next(iter(vouched))]
            self._vouched[path] = vouched
            while len(self._vouched) > self._cache_size:
                self._vouched.popitem(last=False)
            return set(vouched)

    def digest(self, path: str, version: LoadedNotebook, key: SigningKey) -> str:
        """The signature of `version` of `path` (remembered for the path's latest version)."""
        with self._lock:
            known = self._digests.get(path)
        if known is not None and known[0] is version and known[1] == key:
            return known[2]
        digest = notebook_digest(version.nb, key, self._cells)
        with self._lock:
            self._digests[path] = (version, key, digest)
            self._digests.move_to_end(path)
            while len(self._digests) > self._cache_size:
                self._digests.popitem(last=False)
        return digest


class _DataDirNotary:
    """Jupyter's notary over a data dir, made on first use once that dir holds both a secret
    and a signature database (a machine that never signed gets neither created)."""

    def __init__(self, data_dir: str) -> None:
        self.data_dir = data_dir
        self._notary: Any = None

    def __call__(self) -> Any:
        if self._notary is None:
            folder = Path(self.data_dir)
            if (folder / "notebook_secret").is_file() and (folder / "nbsignatures.db").is_file():
                from nbformat.sign import NotebookNotary

                self._notary = NotebookNotary(data_dir=self.data_dir)
        return self._notary


def data_dir_notary(data_dir: str) -> NbformatNotary:
    """The notary a local Jupyter uses with this data dir (its `nbsignatures.db` and
    `notebook_secret`), for surfaces that write notebooks without a server (CLI, MCP)."""
    return NbformatNotary(_DataDirNotary(data_dir))
