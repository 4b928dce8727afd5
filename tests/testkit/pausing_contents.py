"""A test-only contents manager: Jupyter's own, pausing a notebook save halfway when told to.

Loaded by the Jupyter server that test_rel_killed_server.py starts
(`--ServerApp.contents_manager_class=testkit.pausing_contents.PausingContentsManager`, the tests
folder on PYTHONPATH). Jupyter's atomic writer first copies the old file to its `.~`
intermediate and then writes the new notebook over the target. When the file named by the
environment variable HASHLINE_TEST_PAUSE exists, the next notebook save writes HALF of the new
JSON into the target, syncs it, creates `<that file>.paused` and blocks: the test kills the
server right there, with the target torn on disk and the intermediate holding the old notebook.

Everything else is the stock `AsyncLargeFileManager` (the server's default).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from typing import Any

from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager

PAUSE = "HASHLINE_TEST_PAUSE"


class _HalfThenPause:
    """Stands in for the target file: lands half of the first write, then waits to be killed."""

    def __init__(self, inner: Any, trigger: str) -> None:
        self.inner, self.trigger = inner, trigger

    def write(self, data: str) -> int:
        self.inner.write(data[: len(data) // 2])
        self.inner.flush()
        os.fsync(self.inner.fileno())
        with open(f"{self.trigger}.paused", "w", encoding="utf-8") as signal:
            signal.write(str(os.getpid()))
        time.sleep(600)  # the test SIGKILLs the server long before this returns
        raise RuntimeError("the pausing contents manager was not killed")

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class PausingContentsManager(AsyncLargeFileManager):
    @contextlib.contextmanager
    def atomic_writing(self, os_path: str, *args: Any, **kwargs: Any) -> Iterator[Any]:
        trigger = os.environ.get(PAUSE, "")
        with super().atomic_writing(os_path, *args, **kwargs) as handle:
            if trigger and os.path.exists(trigger) and str(os_path).endswith(".ipynb"):
                yield _HalfThenPause(handle, trigger)
            else:
                yield handle
