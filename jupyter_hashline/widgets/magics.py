"""The `%hashline` line magics: text reports and the panel of the current agent session.

`%load_ext jupyter_hashline` registers them (the top-level package imports this module only
then). Commands:

    %hashline zones        print report_zones() (the terminal agent's `/cache zones`)
    %hashline cache        print report_cache() (the terminal agent's `/cache stats`)
    %hashline audit        list the log's rebuild audit, newest first
    %hashline panel        show the live ZonesPanel (one per session, shared by every call)
    %hashline use NAME     make the Session (or ZonesPanel) bound to NAME the current session
    %hashline sessions     list the sessions the magics know of, the current one marked

The current session is the one chosen with `%hashline use`, as long as it lives; otherwise the
`Session` that appeared most recently in the notebook's namespace. The namespace is scanned
after every cell and before every `%hashline` command, so a session created earlier in the same
cell counts; sessions reachable only inside containers or other objects are not seen (choose
those with `%hashline use`). Within one scan, later names count as newer. Sessions are held
weakly: a deleted session stops being a candidate.

Invariants: the magics never run a turn or change a session; an unknown command or a missing
session prints what to do next instead of raising into the notebook.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

from IPython.core.magic import Magics, line_magic, magics_class

from ..agent import Session

__all__ = [
    "HashlineMagics",
    "SessionTracker",
    "audit_report",
    "load_ipython_extension",
    "unload_ipython_extension",
]

USAGE = """\
usage: %hashline zones | cache | audit | panel | sessions | use NAME
  zones     the three zones, their contract status and the rebuild audit
  cache     hit ratio, miss causes and the most recent requests
  audit     the log's rebuild audit, newest first
  panel     the live panel of the current session
  sessions  the sessions these magics know of (* = current)
  use NAME  make the Session bound to NAME the current one"""

NO_SESSION = (
    "No agent session found. Create one (session = Session(...)) in this notebook, or pick one "
    "with %hashline use NAME."
)


class SessionTracker:
    """Knows the sessions seen in a namespace, newest last, and which one is current."""

    def __init__(self) -> None:
        self._seen: list[weakref.ref[Session]] = []
        self._chosen: weakref.ref[Session] | None = None

    def observe(self, namespace: Mapping[str, Any]) -> None:
        known = {id(obj) for obj in self._alive()}
        for value in list(namespace.values()):
            if isinstance(value, Session) and id(value) not in known:
                self._seen.append(weakref.ref(value))
                known.add(id(value))

    def choose(self, session: Session) -> None:
        self._chosen = weakref.ref(session)
        self.observe({"chosen": session})

    def current(self) -> Session | None:
        chosen = self._chosen() if self._chosen is not None else None
        if chosen is not None:
            return chosen
        alive = self._alive()
        return alive[-1] if alive else None

    def sessions(self) -> list[Session]:
        return self._alive()

    def _alive(self) -> list[Session]:
        self._seen = [ref for ref in self._seen if ref() is not None]
        return [session for ref in self._seen if (session := ref()) is not None]


def clock_time_utc(at: float) -> str:
    return datetime.fromtimestamp(at, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def audit_report(session: Session) -> str:
    """The rebuild audit as text, newest first."""
    log = session.zones.log
    records = list(reversed(log.audit))
    if not records:
        return "Rebuild audit: no rebuilds (the log has only grown)."
    kept = f"{len(records)} of {log.rebuild_count} kept"
    lines = [f"Rebuild audit (newest first; {kept}):"]
    lines += [f"  {clock_time_utc(record.at)}  {record}" for record in records]
    return "\n".join(lines)


@magics_class
class HashlineMagics(Magics):
    """`%hashline ...`: see the module docstring."""

    def __init__(self, shell: Any) -> None:
        super().__init__(shell)
        self.tracker = SessionTracker()
        self._panels: weakref.WeakKeyDictionary[Session, Any] = weakref.WeakKeyDictionary()

    def observe_namespace(self, *_args: Any) -> None:
        """The post_run_cell hook: note sessions that appeared in the namespace."""
        self.tracker.observe(self._namespace())

    def _namespace(self) -> dict[str, Any]:
        return self.shell.user_ns if self.shell is not None else {}

    @line_magic
    def hashline(self, line: str) -> Any:
        words = line.split()
        command, args = (words[0], words[1:]) if words else ("", [])
        self.observe_namespace()
        if command == "use":
            return self._use(args)
        if command == "sessions":
            return self._list_sessions()
        handler = {
            "zones": Session.report_zones,
            "cache": Session.report_cache,
            "audit": audit_report,
        }.get(command)
        if handler is None and command != "panel":
            print(f"unknown command {command!r}\n{USAGE}" if command else USAGE)
            return None
        session = self.tracker.current()
        if session is None:
            print(NO_SESSION)
        elif handler is not None:
            print(handler(session))
        else:
            self._show_panel(session)
        return None

    def _use(self, args: list[str]) -> None:
        if len(args) != 1:
            print("usage: %hashline use NAME (a variable bound to a Session or a ZonesPanel)")
            return
        value = self._namespace().get(args[0])
        session = getattr(value, "session", value)
        if not isinstance(session, Session):
            print(
                f"{args[0]!r} is not a Session in this notebook's namespace (it is "
                f"{type(value).__name__}); bind one to a name and try again."
            )
            return
        self.tracker.choose(session)
        print(f"current session: {session.id} ({session.label})")

    def _list_sessions(self) -> None:
        sessions, current = self.tracker.sessions(), self.tracker.current()
        if not sessions:
            print(NO_SESSION)
        for session in sessions:
            mark = "*" if session is current else " "
            print(f"{mark} {session.id}  {session.label}  {session.turns:,} turns")

    def _show_panel(self, session: Session) -> None:
        from IPython.display import display

        panel = self._panels.get(session)
        if panel is None:
            panel = self._panels[session] = session.panel()
        display(panel)


def load_ipython_extension(ipython: Any) -> None:
    """Register `%hashline` and the namespace hook (idempotent per shell)."""
    magics = HashlineMagics(ipython)
    previous = getattr(ipython, "_hashline_magics", None)
    if previous is not None:
        unload_ipython_extension(ipython)
    ipython.register_magics(magics)
    ipython.events.register("post_run_cell", magics.observe_namespace)
    ipython._hashline_magics = magics
    magics.observe_namespace()


def unload_ipython_extension(ipython: Any) -> None:
    magics = getattr(ipython, "_hashline_magics", None)
    if magics is None:
        return
    ipython.events.unregister("post_run_cell", magics.observe_namespace)
    ipython.magics_manager.magics["line"].pop("hashline", None)
    ipython._hashline_magics = None
