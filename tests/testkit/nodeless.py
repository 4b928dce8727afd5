"""A `PATH` on which Node is absent: every other program of the current `PATH` stays.

Node lives in /usr/bin beside make, git and the shell on these machines, so dropping whole
directories from `PATH` would remove far more than Node. Instead a folder of links to every
executable on `PATH` except Node's (`node`, `npm`, `npx`, `corepack`) stands in for it.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

NODE_PROGRAMS = frozenset({"node", "nodejs", "npm", "npx", "corepack"})


def path_without_node(folder: Path, path: str | None = None) -> str:
    """Fill `folder` with links to what `path` (default: `$PATH`) runs, Node left out."""
    folder.mkdir(parents=True, exist_ok=True)
    for directory in (path if path is not None else os.environ["PATH"]).split(os.pathsep):
        if not os.path.isdir(directory):
            continue
        for entry in os.scandir(directory):
            target = folder / entry.name
            if entry.name in NODE_PROGRAMS or target.exists() or target.is_symlink():
                continue  # Node's, or shadowed by an earlier directory (as on the real PATH)
            if entry.is_file() and os.access(entry.path, os.X_OK):
                target.symlink_to(entry.path)
    nodeless = str(folder)
    assert all(shutil.which(name, path=nodeless) is None for name in NODE_PROGRAMS)
    return nodeless
