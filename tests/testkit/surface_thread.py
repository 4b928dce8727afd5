"""Surfaces (testkit.surfaces) held open for a whole module and called from plain, synchronous
tests: one event loop runs in a background thread; each surface is opened and closed by one
task of that loop (an MCP client's task group must be left by the task that entered it), and
every call is a coroutine submitted to the loop, waited for from the test's thread."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Coroutine, Mapping
from typing import Any, TypeVar

from testkit.surfaces import Reply, Surface

T = TypeVar("T")


class LoopThread:
    """An event loop running in a daemon thread until `close`."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 240) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=30)
        self.loop.close()


class HeldSurface:
    """`surface` opened on `loop` by a task that waits to close it: `call` is synchronous."""

    def __init__(self, loop: LoopThread, surface: Surface, open_timeout: float = 120) -> None:
        self.loop, self.surface = loop, surface
        opened: concurrent.futures.Future[asyncio.Event] = concurrent.futures.Future()

        async def hold() -> None:
            stop = asyncio.Event()
            try:
                await surface.open()
            except BaseException as err:
                opened.set_exception(err)
                return
            opened.set_result(stop)
            await stop.wait()
            await surface.aclose()

        self.holder = asyncio.run_coroutine_threadsafe(hold(), loop.loop)
        self.stop = opened.result(open_timeout)

    def call(self, tool: str, args: Mapping[str, Any]) -> Reply:
        return self.loop.run(self.surface.call(tool, args))

    def close(self) -> None:
        self.loop.loop.call_soon_threadsafe(self.stop.set)
        self.holder.result(60)
