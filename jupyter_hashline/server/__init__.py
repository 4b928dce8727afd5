"""The jupyter-server extension: a REST API for hashline reads and edits.

This is the only package that imports jupyter_server or tornado. `jupyter_hashline`'s
`_jupyter_server_extension_points` imports it lazily, so the engine stays light.
"""

from __future__ import annotations

from .adapters import ContentsFilesystem
from .app import HashlineExtension, make_store
from .config import HashlineSettings, SeenLinesPolicy, apply_workspace_overlay
from .handlers import make_handlers
from .service import HashlineService, build_service

__all__ = [
    "ContentsFilesystem",
    "HashlineExtension",
    "HashlineService",
    "HashlineSettings",
    "SeenLinesPolicy",
    "apply_workspace_overlay",
    "build_service",
    "make_handlers",
    "make_store",
]
