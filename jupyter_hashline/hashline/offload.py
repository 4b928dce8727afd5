"""Running an engine call's CPU-heavy steps off the event loop, when they are heavy.

A server runs the engine on its event loop, which serves everyone else on the server too. Steps
whose cost grows with a file's size (parsing, splitting, merging, projecting, hashing, storing a
snapshot) run in a worker thread once the file is `OFFLOAD_SIZE` or larger: the loop keeps
serving while they run, and the worker yields the interpreter every switch interval, so no
single step holds everyone up. Below that size a step costs less than handing it to a thread.

Invariants:
- `offloaded(size, work)` returns what `work()` returns (or raises what it raises) either way;
  the step runs with the caller's context (the engine call's scope and memo go with it).
- The caller still holds whatever asyncio locks it held: a step in a thread is awaited, never
  left running behind the call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TypeVar

__all__ = ["OFFLOAD_SIZE", "offloaded"]

OFFLOAD_SIZE = 1024 * 1024
"""Characters (or bytes) from which a step runs in a worker thread. Below it the heaviest step
is small: a first read of an 817 KB notebook (parse, survey, project) takes 3.7 ms here, while
the six hand-offs of a read and an edit cost about 15% of the edit (bench.cold, 1,000 cells)."""

T = TypeVar("T")


async def offloaded(size: int, work: Callable[[], T]) -> T:
    """`work()`, in a worker thread when `size` is `OFFLOAD_SIZE` or more (see above)."""
    if size < OFFLOAD_SIZE:
        return work()
    return await asyncio.to_thread(work)
