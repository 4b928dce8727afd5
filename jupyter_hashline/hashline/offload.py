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
- A call of many edits (`OFFLOAD_EDITS`) runs every step in a thread (`heavy_call`): what
  each edit costs does not grow with its size.
- The caller still holds whatever asyncio locks it held: a step in a thread is awaited, never
  left running behind the call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeVar

__all__ = ["OFFLOAD_EDITS", "OFFLOAD_ROWS", "OFFLOAD_SIZE", "heavy_call", "offloaded"]

OFFLOAD_SIZE = 1024 * 1024
"""Characters (or bytes) from which a step runs in a worker thread. Below it a step is short
(a first read of an 817 KB notebook: parse, survey, project, 3.7 ms here), and a thread does
not free the loop anyway: the loop must win the interpreter back from a busy worker, which
yields it only every switch interval (5 ms), once per system call the loop makes. An agent's
read and edit of a 1,000-cell notebook open in a room (1.1 MB, a 370 KB projection) took
61-74 ms when its 1.1 MB put the notebook's steps in a thread (worst stall 36 ms), and 23-35 ms
once weighed by its projection, on the loop (worst stall 12-32 ms; bench.server_room)."""

OFFLOAD_ROWS = 2_000
"""Rows of an edit (lines of its text, edits and body rows of its JSON form) from which parsing
it runs in a worker thread: parsing costs per row, not per character (5-13 µs a verb line,
about 3 µs a body row here), so 2,000 rows are at most about 25 ms on the loop."""

OFFLOAD_EDITS = 64
"""Edit operations from which every step of a call runs in a worker thread (`heavy_call`),
whatever the file's size: checking an edit (anchors, echoes, its cell's syntax) and landing it
(its cell validated, serialized, diffed) cost 0.2-0.5 ms here however small it is, so 10,000
edits spread over 10,000 cells of a 400 KB notebook held the loop for 2.4 s."""

_HEAVY: ContextVar[bool] = ContextVar("hashline_heavy_call", default=False)


@contextmanager
def heavy_call(heavy: bool = True) -> Iterator[None]:
    """Within it (when `heavy`), `offloaded` runs every step in a worker thread."""
    token = _HEAVY.set(heavy or _HEAVY.get())
    try:
        yield
    finally:
        _HEAVY.reset(token)


T = TypeVar("T")


async def offloaded(size: int, work: Callable[[], T], threshold: int = OFFLOAD_SIZE) -> T:
    """`work()`, in a worker thread when `size` is `threshold` (`OFFLOAD_SIZE` unless said) or
    more, or within a `heavy_call` (see above)."""
    if size < threshold and not _HEAVY.get():
        return work()
    return await asyncio.to_thread(work)
