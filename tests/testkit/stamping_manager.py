"""A contents manager as a deployment might configure one: jupyter_server's own large-file
manager, subclassed, with a pre-save hook that stamps every notebook it saves
(`metadata.saved_by`). A server subprocess loads it (with `tests` on its PYTHONPATH), so the
conformance matrix has a storage where notebooks are saved as models through the manager: the
stamp on disk shows the hook ran, i.e. the save went that way."""

from __future__ import annotations

from typing import Any

from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager

STAMP = "stamping-manager"


def stamp(model: dict[str, Any], **_: Any) -> None:
    """Mark a notebook model as saved by this manager (other models pass untouched)."""
    if model.get("type") == "notebook":
        model["content"]["metadata"]["saved_by"] = STAMP


class StampingContentsManager(AsyncLargeFileManager):
    """The stock manager plus the stamping pre-save hook."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.register_pre_save_hook(stamp)
