"""The server's adapters: the package's seams filled with Jupyter's own services.

- contents storage: `ContentsFilesystem`, a `Filesystem` over the server's contents manager;
- live rooms: `LiveContentsFilesystem` (the notebook layer's storage, its writes guarded by
  `LiveWriteGuard`), edits into notebooks open with real-time collaboration
  (`RoomFinder` finds their rooms);
- kernel runner: `ServerKernelRunner`, a `CellRunner` on the notebooks' own kernels of this
  server (outputs go live into an open room through `LiveOutputs`).

Each adapter imports only the faces of the lower packages (`jupyter_hashline.hashline`,
`.notebook`, `.kernels`, `.tools`) and
jupyter_server; the handlers and the wiring (`server.service`, `server.app`) use them.
"""

from __future__ import annotations

from .contents_fs import ContentsFilesystem
from .live import (
    LiveContentsFilesystem,
    LiveDocumentChanged,
    LiveWriteGuard,
)
from .live_rooms import LiveRoom, RoomFinder
from .run_kernel import ServerKernelRunner

__all__ = [
    "ContentsFilesystem",
    "LiveContentsFilesystem",
    "LiveDocumentChanged",
    "LiveRoom",
    "LiveWriteGuard",
    "RoomFinder",
    "ServerKernelRunner",
]
