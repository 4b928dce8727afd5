"""Paired notebooks in a directory: read and written through jupytext's library, as its
contents manager does in a Jupyter server.

`PairedDiskFilesystem(root)` is a `DiskFilesystem` on which a notebook paired with text files
(jupytext's `formats` in its metadata, or a `jupytext.toml` / `pyproject.toml` / other jupytext
configuration file that pairs it, found as jupytext finds them) is read as its pair and written
to every paired file. The CLI, the MCP server on `--root` and `Session`s outside a server use it,
so a pair behaves there as it does through the server.

Invariants:
- Read: the inputs come from the most recent text twin and the outputs from the `.ipynb`
  (jupytext's `read_pair`), so a person's edit of the twin is what the agent reads. Where the
  pair agrees with the `.ipynb` its bytes are returned as stored (its layout kept); otherwise
  the combined notebook as Jupyter writes it. An `.ipynb` more recent than its twin (beyond
  jupytext's `outdated_text_notebook_margin`) whose inputs differ is refused, as jupytext's
  contents manager refuses to open it, rather than overwriting either file.
- Write: the `.ipynb` gets exactly the bytes given, then every text twin jupytext's text of
  that notebook, in jupytext's order (`write_pair`: the `.ipynb` first), so the twins are the
  most recent files and a server with jupytext opens the pair without complaint.
- Unpaired notebooks and other files are read and written as by `DiskFilesystem`, and jupytext
  is not imported for them: pairing is detected from the bytes and a scan for configuration
  file names first (jupytext loads jupyter_server, which a directory must not pay for).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Mapping
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from ..hashline.disk import DiskFilesystem
from .errors import InvalidNotebookError

__all__ = ["PairedDiskFilesystem"]

_CONFIG_NAMES = ("jupytext", "jupytext.toml", "jupytext.yml", "jupytext.yaml", "jupytext.json")
CONFIG_FILES = (*_CONFIG_NAMES, *("." + name for name in _CONFIG_NAMES), ".jupytext.py")


class PairedDiskFilesystem(DiskFilesystem):
    """A directory whose paired notebooks are read and written as pairs (module docstring)."""

    def __repr__(self) -> str:
        return f"PairedDiskFilesystem(root={os.fspath(self.root) if self.root else None!r})"

    async def read_bytes(self, path: str) -> bytes:
        raw = await super().read_bytes(path)
        formats = self._pairing(path, raw)
        if formats is None:
            return raw
        return await asyncio.to_thread(self._read_pair, path, raw, formats)

    async def write_bytes(self, path: str, data: bytes) -> None:
        formats = self._pairing(path, data)
        if formats is None:
            await super().write_bytes(path, data)
            return
        for alt_path, text in await asyncio.to_thread(self._pair_texts, path, data, formats):
            if text is None:
                await super().write_bytes(alt_path, data)
            else:
                await super().write_text(alt_path, text)

    # -- pairing -------------------------------------------------------------------------------

    def _pairing(self, path: str, raw: bytes) -> list[dict[str, str]] | None:
        """The paired formats of notebook `path` (long form), or None when it is not paired."""
        if not path.lower().endswith(".ipynb"):
            return None
        in_metadata = b'"formats"' in raw or b'"jupytext_formats"' in raw
        if not in_metadata and not _config_may_apply(self.resolve(path).parent):
            return None
        from jupytext.config import load_jupytext_config, notebook_formats

        try:
            nb = json.loads(raw)
        except ValueError:
            return None  # not a notebook yet: the notebook layer says why
        if not isinstance(nb, dict) or not isinstance(nb.get("metadata"), dict):
            return None
        config = load_jupytext_config(str(self.resolve(path)))
        formats = notebook_formats(nb, config, path, fallback_on_current_fmt=False)
        if not formats or len(formats) < 2:
            return None
        return [dict(fmt) for fmt in formats]

    def _read_pair(self, path: str, raw: bytes, formats: list[dict[str, str]]) -> bytes:
        import jupytext
        import nbformat
        from jupytext.paired_paths import find_base_path_and_format
        from jupytext.pairs import latest_inputs_and_outputs
        from jupytext.sync_pairs import read_pair

        _, fmt = find_base_path_and_format(path, formats)
        inputs, outputs = latest_inputs_and_outputs(
            path, fmt, formats, self._timestamp, contents_manager_mode=True
        )
        if inputs.path is None or inputs.path == outputs.path:
            return raw

        def read_one(alt_path: str, alt_fmt: Mapping[str, Any]) -> Any:
            if alt_path == path:
                return nbformat.reads(raw.decode("utf-8"), as_version=4)
            return jupytext.read(self.resolve(alt_path), fmt=dict(alt_fmt))

        self._refuse_outdated(path, inputs, outputs, read_one)
        combined = read_pair(inputs, outputs, read_one)
        stored = json.loads(raw)
        if json.loads(nbformat.writes(combined)) == json.loads(nbformat.writes(_v4(stored))):
            return raw
        return (nbformat.writes(combined) + "\n").encode("utf-8")

    def _refuse_outdated(self, path: str, inputs: Any, outputs: Any, read_one: Any) -> None:
        """jupytext's contents manager's rule: an `.ipynb` more recent than its twin is read
        only when their inputs agree."""
        from jupytext.config import load_jupytext_config
        from jupytext.pairs import PairedFilesDiffer
        from jupytext.sync_pairs import read_pair

        config = load_jupytext_config(str(self.resolve(path)))
        margin = config.outdated_text_notebook_margin if config is not None else 1.0
        if not outputs.timestamp or outputs.timestamp <= inputs.timestamp + timedelta(
            seconds=margin
        ):
            return
        try:
            read_pair(inputs, outputs, read_one, must_match=True)
        except PairedFilesDiffer as diff:
            raise InvalidNotebookError(
                f"{outputs.path} is more recent than its paired {inputs.path}, and their cells "
                f"differ:\n{diff}\nNothing was read. Update or delete {inputs.path} (or run "
                f"`jupytext --sync {path}`), then read it again."
            ) from None

    def _pair_texts(
        self, path: str, data: bytes, formats: list[dict[str, str]]
    ) -> list[tuple[str, str | None]]:
        """Each paired path in jupytext's writing order with its text (None: `data` itself,
        for the `.ipynb`)."""
        import jupytext
        import nbformat
        from jupytext.sync_pairs import write_pair

        nb = nbformat.reads(data.decode("utf-8"), as_version=4)
        planned: list[tuple[str, str | None]] = []

        def plan(alt_path: str, fmt: Mapping[str, Any], **_: Any) -> dict[str, Any]:
            if fmt.get("extension") == ".ipynb":
                text = None if alt_path == path else nbformat.writes(nb) + "\n"
            else:
                text = jupytext.writes(nb, fmt=dict(fmt))
            planned.append((alt_path, text))
            return {}

        write_pair(path, formats, plan)
        return planned

    def _timestamp(self, path: str) -> datetime | None:
        try:
            stamp = os.stat(self.resolve(path)).st_mtime
        except (OSError, ValueError):
            return None
        return datetime.fromtimestamp(stamp, timezone.utc)


def _v4(nb: dict[str, Any]) -> Any:
    import nbformat

    return nbformat.from_dict(nb)


def _config_may_apply(folder: Path) -> bool:
    """Whether a jupytext configuration file may exist for `folder`: a file of one of its names
    in it or a parent (or a `pyproject.toml` that mentions jupytext), or a global one."""
    for directory in (folder, *folder.parents, *_global_dirs()):
        if any((directory / name).is_file() for name in CONFIG_FILES):
            return True
        pyproject = directory / "pyproject.toml"
        if pyproject.is_file() and b"jupytext" in pyproject.read_bytes():
            return True
    return False


def _global_dirs() -> list[Path]:
    """The directories jupytext looks in for a global configuration file."""
    bases: list[str] = []
    env = os.environ
    if "XDG_CONFIG_HOME" in env:
        bases += env["XDG_CONFIG_HOME"].split(":")
    elif "HOME" in env:
        bases += [os.path.join(env["HOME"], ".config"), env["HOME"]]
    bases += env["XDG_CONFIG_DIRS"].split(":") if "XDG_CONFIG_DIRS" in env else []
    bases += [] if "XDG_CONFIG_DIRS" in env else ["/usr/local/share/", "/usr/share/"]
    return [Path(p) for base in bases if base for p in (os.path.join(base, "jupytext"), base)]
