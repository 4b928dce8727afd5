"""The startup heap is frozen once a real server runs, once per process, and only when asked."""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path

import pytest

from bench.server import LocalServer
from jupyter_hashline.server import heap
from jupyter_hashline.server.app import HashlineExtension


def test_freezing_collects_first_and_happens_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    monkeypatch.setattr(heap, "_frozen", False)
    monkeypatch.setattr(heap.gc, "collect", lambda: calls.append("collect"))
    monkeypatch.setattr(heap.gc, "freeze", lambda: calls.append("freeze"))
    monkeypatch.setattr(heap.gc, "get_freeze_count", lambda: 1234)
    assert heap.freeze_startup_heap() == 1234
    assert heap.freeze_startup_heap() is None  # requests' objects are never pinned
    assert calls == ["collect", "freeze"]


@pytest.mark.parametrize("wanted", [True, False])
def test_the_extension_freezes_only_when_configured(
    monkeypatch: pytest.MonkeyPatch, wanted: bool
) -> None:
    calls: list[int] = []
    monkeypatch.setattr(heap, "freeze_startup_heap", lambda: calls.append(1) or 99)
    extension = HashlineExtension(freeze_startup_heap=wanted)
    asyncio.run(extension._start_jupyter_server_extension(None))
    assert calls == ([1] if wanted else [])


@pytest.mark.slow
def test_a_running_server_froze_its_startup_heap(tmp_path: Path) -> None:
    """A real `jupyter server` says how many objects it froze once its loop runs: a Jupyter
    server holds well over 10,000 at startup."""
    (tmp_path / "root").mkdir()
    with LocalServer(tmp_path / "root", tmp_path / "home") as server:
        log = tmp_path / "home" / f"server-{server.port}.log"
        pattern = re.compile(r"jupyter_hashline: froze (\d+) startup objects")
        deadline = time.monotonic() + 60
        while not (found := pattern.search(log.read_text(errors="replace"))):
            assert time.monotonic() < deadline, log.read_text(errors="replace")[-2000:]
            time.sleep(0.05)
        assert int(found.group(1)) > 10_000
