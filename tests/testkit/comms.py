"""Plugin: widgets without a kernel. `comms` swaps the kernel's comm factory for one that
records every message, so a widget's state and updates can be read in a plain test."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import comm
import pytest


class RecordingComm:
    """Stands in for a kernel comm: opens nothing, records every message sent."""

    kernel = "no kernel: recording"

    def __init__(self, **kwargs: Any) -> None:
        self.comm_id = kwargs.get("comm_id") or f"recording-{id(self):x}"
        self.opened_with = kwargs
        self.messages: list[dict[str, Any]] = []

    def send(self, data: Any = None, buffers: Any = None, **_: Any) -> None:
        self.messages.append(data)

    def on_msg(self, *_: Any) -> None:
        pass

    def open(self, *_: Any, **__: Any) -> None:
        pass

    def close(self, *_: Any, **__: Any) -> None:
        pass


@pytest.fixture
def comms(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[RecordingComm]]:
    """Every comm a widget opens during the test, in order."""
    opened: list[RecordingComm] = []

    def create_comm(**kwargs: Any) -> RecordingComm:
        opened.append(RecordingComm(**kwargs))
        return opened[-1]

    monkeypatch.setattr(comm, "create_comm", create_comm)
    yield opened
    # close what the test left open, so no widget outlives the test (and none is finalized at
    # interpreter exit, when ipywidgets' registry is already gone)
    import ipywidgets

    ipywidgets.Widget.close_all()
