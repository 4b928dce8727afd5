"""Readable names for the agents of REST requests that do not name themselves.

A request without `X-Hashline-Agent`, authenticated by the server's token alone (for which
jupyter_server invents a new anonymous user on every request), is named after the person who
holds the token (the account running the server) and the client that sent it, read from its
`User-Agent`: `ada via curl`, `ada via python-httpx`, `ada via browser`.

Invariants:
- A name is readable and never carries the token, a hash of it, or a random id.
- The same client of the same server always gets the same name (seen lines are keyed by it).
- Names fit the agent header's limits: at most 64 characters, printable ASCII.
"""

from __future__ import annotations

import getpass
import re
from functools import cache

__all__ = ["client_name", "server_owner", "token_agent"]

_PRODUCT = re.compile(r"[A-Za-z][A-Za-z0-9._-]{0,31}")
_BROWSERS = ("Mozilla", "Opera")


def client_name(user_agent: str | None) -> str:
    """The client product a `User-Agent` names (`curl`, `python-httpx`), `browser` for web
    browsers, `client` when it names none."""
    found = _PRODUCT.match((user_agent or "").strip())
    if found is None:
        return "client"
    product = found.group(0)
    return "browser" if product.startswith(_BROWSERS) else product


@cache
def server_owner() -> str:
    """The account the server runs as: who holds its token."""
    try:
        name = getpass.getuser()
    except (KeyError, OSError):  # no login name for this uid (e.g. a container)
        return "jupyter"
    return re.sub(r"[^A-Za-z0-9._-]", "", name)[:24] or "jupyter"


def token_agent(user_agent: str | None, owner: str | None = None) -> str:
    """The agent name of a token-only request from this client."""
    return f"{owner or server_owner()} via {client_name(user_agent)}"
