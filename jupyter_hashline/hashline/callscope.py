"""One engine call's memo: facts about storage computed once per read, edit or write.

A `Patcher` call opens a scope (`call_scope`); code running under it (a filesystem, the notebook
layer) may keep in `scope_memo()` what holds for the rest of that one call: where a path
resolves, which notebook the call read. Within one call a path is resolved once, so the file an
edit read is the file it writes, even if a link is changed meanwhile; the next call resolves
again and sees the change.

Invariants:
- Outside a scope `scope_memo()` is None and nothing may be memoized: every lookup computes
  afresh (filesystems used directly behave exactly as without scopes).
- A scope lives exactly as long as the call that opened it; a call inside a call shares the
  outer scope. Scopes are context-local (contextvars): concurrent tasks never share one, and a
  worker thread started by the call (`asyncio.to_thread`) sees the call's scope.
- Keys name their owner (e.g. `("resolve", fs, path)`), so unrelated users never collide.
"""

from __future__ import annotations

import contextlib
from collections.abc import Hashable, Iterator
from contextvars import ContextVar
from typing import Any

__all__ = ["call_scope", "scope_memo"]

_MEMO: ContextVar[dict[Hashable, Any] | None] = ContextVar("hashline_call_memo", default=None)


@contextlib.contextmanager
def call_scope() -> Iterator[dict[Hashable, Any]]:
    """Open the memo of one engine call (or join the enclosing call's)."""
    memo = _MEMO.get()
    if memo is not None:
        yield memo
        return
    memo = {}
    token = _MEMO.set(memo)
    try:
        yield memo
    finally:
        _MEMO.reset(token)


def scope_memo() -> dict[Hashable, Any] | None:
    """The memo of the call running now, or None outside any call."""
    return _MEMO.get()
