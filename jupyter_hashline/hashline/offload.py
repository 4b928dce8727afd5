"""Running an engine call's CPU-heavy steps off the event loop, when they are heavy.

A server runs the engine on its event loop, which serves everyone else on the server too. Steps
whose cost grows with a file's size (parsing, splitting, merging, projecting, hashing, storing a
snapshot) run in a worker thread once the file is `OFFLOAD_SIZE` or larger: the loop keeps
serving while they run, and the worker yields the interpreter every switch interval, so no
single step holds everyone up. Below that size a step costs less than handing it to a thread.
(A notebook is weighed by its last projection once it has one: megabytes of images cost
a comparison of bytes, not work per character.)

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
"""Characters (or bytes) from which a step runs in a worker thread. Below it a step is short
(a first read of an 817 KB notebook: parse, survey, project, 3.7 ms here), and a thread does
not free the loop anyway: the loop must win the interpreter back from a busy worker, which
yields it only every switch interval (5 ms), once per system call the loop makes. An agent's
read and edit of a 1,000-cell notebook open in a room (1.1 MB, a 370 KB projection) took
61-74 ms when its 1.1 MB put the notebook's steps in a thread (worst stall 36 ms), and 23-35 ms
once weighed by its projection, on the loop (worst stall 12-32 ms; bench.server_room)."""

T = TypeVar("T")


async def offloaded(size: int, work: Callable[[], T]) -> T:
    """`work()`, in a worker thread when `size` is `OFFLOAD_SIZE` or more (see above)."""
    if size < OFFLOAD_SIZE:
        return work()
    return await asyncio.to_thread(work)
