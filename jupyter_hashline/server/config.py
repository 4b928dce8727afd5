"""The server extension's effective settings and the workspace overlay rule.

Precedence: command line > config files > defaults, all handled by traitlets on
the extension app; then a workspace overlay file (e.g. `.jupyter-hashline.json` at the server
root) is merged by `apply_workspace_overlay`.

Invariants:
- An overlay may only tighten: raise the seen-lines guard (off < warn < reject), lower a size
  limit, narrow the allowed paths, turn read-only on, turn running cells off (`allow_run`
  false; never true), turn undoing edits off (`allow_revert` false; never true), forbid
  whole-file writes without a tag (`allow_overwrite` false; never true). Anything else it asks
  for is refused, one refusal message per key, and the setting keeps its value.
- Keys that would redirect data (the snapshot store class or path) and unknown keys are always
  refused. The merge is pure: settings in, settings and refusals out.
- No workspace file may set an agent session's provider, model, base URL or API keys (under
  any spelling: `base_url`, `ANTHROPIC_API_KEY`, a `HashlineSession` section...): a project
  file must not be able to send the user's key to a look-alike endpoint. Such keys get a
  refusal that says where those settings do come from.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..hashline import SeenLinesPolicy, SyntaxCheck

MIB = 1024 * 1024
_POLICY_ORDER = (SeenLinesPolicy.OFF, SeenLinesPolicy.WARN, SeenLinesPolicy.REJECT)


def strictness(policy: SeenLinesPolicy) -> int:
    """off < warn < reject."""
    return _POLICY_ORDER.index(policy)


@dataclass(frozen=True, slots=True)
class HashlineSettings:
    """Everything the service needs to know from configuration."""

    seen_lines: SeenLinesPolicy = SeenLinesPolicy.REJECT
    syntax_check: SyntaxCheck = SyntaxCheck.WARN
    projection: str = "hashline"
    layout: str = "keep"
    live_save: str = "wait"
    review: str = "off"
    review_self_accept: bool = False
    max_request_bytes: int = 16 * MIB
    max_patch_bytes: int = 16 * MIB
    max_file_bytes: int = 64 * MIB
    max_edits_per_patch: int = 10_000
    max_view_lines: int = 100_000
    max_versions_per_path: int = 64
    allowed_paths: tuple[str, ...] = ()  # API path prefixes; empty means the whole root
    read_only: bool = False
    allow_run: bool = True
    allow_revert: bool = True
    allow_overwrite: bool = True
    keep_trust: bool = True
    store_class: str = "jupyter_hashline.hashline.sqlite_store.SqliteSnapshotStore"
    store_path: str = ""
    activity_limit: int = 200
    max_sessions: int = 64
    server_mcp_tools: tuple[str, ...] = ("notebook_read", "notebook_outputs", "notebook_edit")


@dataclass(frozen=True, slots=True)
class OverlayResult:
    """The merged settings and one message per refused overlay key."""

    settings: HashlineSettings
    applied: tuple[str, ...]
    refused: tuple[str, ...]


REDIRECTING_KEYS = frozenset({"store_class", "store_path"})
AGENT_SETTING_KEYS = frozenset({"provider", "model", "hashlinesession"})
AGENT_SETTING_SUFFIXES = ("base_url", "api_key", "api_keys")


def is_agent_setting(key: str) -> bool:
    """Whether an overlay key names an agent session setting (provider, model, URL, key)."""
    lowered = key.lower()
    return lowered in AGENT_SETTING_KEYS or lowered.endswith(AGENT_SETTING_SUFFIXES)


LIMIT_KEYS = ("max_request_bytes", "max_patch_bytes", "max_file_bytes")
COUNT_LIMIT_KEYS = {"max_edits_per_patch": "edit operations", "max_view_lines": "lines"}


def path_within(path: str, prefix: str) -> bool:
    """Whether API path `path` is `prefix` itself or lies below it (both without slashes)."""
    return prefix == "" or path == prefix or path.startswith(prefix + "/")


def path_allowed(path: str, allowed: tuple[str, ...]) -> bool:
    """Whether `path` lies within one of the `allowed` prefixes (empty: everything)."""
    return not allowed or any(path_within(path, prefix) for prefix in allowed)


def _tighten_seen_lines(current: HashlineSettings, value: Any) -> HashlineSettings | str:
    try:
        wanted = SeenLinesPolicy(value)
    except ValueError:
        return f"must be one of {[p.value for p in SeenLinesPolicy]}, got {value!r}"
    if strictness(wanted) < strictness(current.seen_lines):
        return f"would loosen the seen-lines guard from {current.seen_lines.value!r}"
    return dataclasses.replace(current, seen_lines=wanted)


_SYNTAX_ORDER = (SyntaxCheck.OFF, SyntaxCheck.WARN, SyntaxCheck.STRICT)


def _tighten_syntax_check(current: HashlineSettings, value: Any) -> HashlineSettings | str:
    try:
        wanted = SyntaxCheck(value)
    except ValueError:
        return f"must be one of {[c.value for c in SyntaxCheck]}, got {value!r}"
    if _SYNTAX_ORDER.index(wanted) < _SYNTAX_ORDER.index(current.syntax_check):
        return f"would loosen the syntax check from {current.syntax_check.value!r}"
    return dataclasses.replace(current, syntax_check=wanted)


def _tighten_limit(
    key: str, unit: str = "bytes"
) -> Callable[[HashlineSettings, Any], HashlineSettings | str]:
    def tighten(current: HashlineSettings, value: Any) -> HashlineSettings | str:
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            return f"must be a positive integer number of {unit}, got {value!r}"
        now = getattr(current, key)
        if value > now:
            return f"would raise the limit from {now} to {value} {unit}"
        changes: dict[str, Any] = {key: value}
        return dataclasses.replace(current, **changes)

    return tighten


def _tighten_allowed_paths(current: HashlineSettings, value: Any) -> HashlineSettings | str:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return f"must be a list of path prefixes, got {value!r}"
    wanted = tuple(v.strip("/") for v in value)
    if not wanted:
        if current.allowed_paths:
            return "an empty list would allow the whole root again"
        return current
    outside = [w for w in wanted if not path_allowed(w, current.allowed_paths) or ".." in w]
    if outside:
        return f"would widen the allowed paths with {outside}"
    return dataclasses.replace(current, allowed_paths=wanted)


def _tighten_read_only(current: HashlineSettings, value: Any) -> HashlineSettings | str:
    if not isinstance(value, bool):
        return f"must be true or false, got {value!r}"
    if current.read_only and not value:
        return "would make a read-only server writable"
    return dataclasses.replace(current, read_only=value)


def _tighten_allow_run(current: HashlineSettings, value: Any) -> HashlineSettings | str:
    if not isinstance(value, bool):
        return f"must be true or false, got {value!r}"
    if value and not current.allow_run:
        return "would allow running cells on a server that does not allow it"
    return dataclasses.replace(current, allow_run=value)


def _tighten_allow_revert(current: HashlineSettings, value: Any) -> HashlineSettings | str:
    if not isinstance(value, bool):
        return f"must be true or false, got {value!r}"
    if value and not current.allow_revert:
        return "would allow undoing edits on a server that does not allow it"
    return dataclasses.replace(current, allow_revert=value)


def _tighten_allow_overwrite(current: HashlineSettings, value: Any) -> HashlineSettings | str:
    if not isinstance(value, bool):
        return f"must be true or false, got {value!r}"
    if value and not current.allow_overwrite:
        return "would allow whole-file writes without a tag on a server that does not allow it"
    return dataclasses.replace(current, allow_overwrite=value)


_TIGHTENERS: dict[str, Callable[[HashlineSettings, Any], HashlineSettings | str]] = {
    "seen_lines": _tighten_seen_lines,
    "syntax_check": _tighten_syntax_check,
    "allowed_paths": _tighten_allowed_paths,
    "read_only": _tighten_read_only,
    "allow_run": _tighten_allow_run,
    "allow_revert": _tighten_allow_revert,
    "allow_overwrite": _tighten_allow_overwrite,
    **{key: _tighten_limit(key) for key in LIMIT_KEYS},
    **{key: _tighten_limit(key, unit) for key, unit in COUNT_LIMIT_KEYS.items()},
}


OVERLAY_KEYS = frozenset(_TIGHTENERS)
"""The settings a workspace overlay may change (each only to tighten it)."""


def apply_workspace_overlay(
    settings: HashlineSettings, overlay: Mapping[str, Any]
) -> OverlayResult:
    """Merge a workspace overlay into `settings`, keeping only changes that tighten."""
    applied: list[str] = []
    refused: list[str] = []
    for key, value in overlay.items():
        tighten = _TIGHTENERS.get(key)
        if key in REDIRECTING_KEYS:
            refused.append(f"{key}: a workspace file may not redirect where data is stored")
            continue
        if is_agent_setting(key):
            refused.append(
                f"{key}: a workspace file may not set an agent's provider, model, base URL or "
                "API keys (they come from arguments, your Jupyter config, keyring or environment)"
            )
            continue
        if tighten is None:
            known = sorted(_TIGHTENERS)
            refused.append(f"{key}: not a setting a workspace may change (allowed: {known})")
            continue
        outcome = tighten(settings, value)
        if isinstance(outcome, str):
            refused.append(f"{key}: refused, {outcome}")
        else:
            settings = outcome
            applied.append(key)
    return OverlayResult(settings, tuple(applied), tuple(refused))
