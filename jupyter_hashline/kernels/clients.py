"""A kernel client of our own: its own session id, so its message ids are its own.

Clients made by `KernelManager.client()` share the manager's session id, and message ids are
`<session id>_<pid>_<counter>`: two such clients in one process (the runner's and the
server's, or two runners') send the same ids, and replies get matched to the wrong request.
A client with a fresh `Session` (same key, so the kernel accepts its messages) cannot collide.
"""

from __future__ import annotations

from typing import Any

from jupyter_client.session import Session


def own_client(manager: Any) -> Any:
    """A started client of `manager`'s kernel with a session id of its own."""
    shared = manager.session
    session = Session(
        key=shared.key,
        signature_scheme=shared.signature_scheme,
        username=shared.username,
    )
    client = manager.client(session=session)
    client.start_channels()
    return client
