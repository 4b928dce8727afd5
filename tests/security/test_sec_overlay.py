"""A workspace overlay can only tighten: whatever JSON a workspace file holds, every setting
ends at least as strict as configured, and data is never redirected (Hypothesis)."""

from __future__ import annotations

import dataclasses
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from testkit.faults import TALLY

from jupyter_hashline.server.config import (
    LIMIT_KEYS,
    HashlineSettings,
    SeenLinesPolicy,
    apply_workspace_overlay,
    path_allowed,
    strictness,
)

POLICIES = st.sampled_from(list(SeenLinesPolicy))
PREFIXES = st.sampled_from(["", "work", "work/sub", "other", "../up", "/abs", "work/../x", "w"])
CONFIGURED = st.builds(
    HashlineSettings,
    seen_lines=POLICIES,
    max_request_bytes=st.integers(1, 2**30),
    max_patch_bytes=st.integers(1, 2**30),
    max_file_bytes=st.integers(1, 2**30),
    allowed_paths=st.lists(PREFIXES.filter(lambda p: ".." not in p), max_size=2).map(
        lambda ps: tuple(p.strip("/") for p in ps if p.strip("/"))
    ),
    read_only=st.booleans(),
    store_path=st.just("/data/store.sqlite3"),
)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=6,
)
VALUES = st.one_of(
    POLICIES.map(lambda p: p.value),
    st.integers(-5, 2**31),
    st.lists(PREFIXES, max_size=3),
    st.booleans(),
    JSON,
)
KEYS = st.sampled_from(
    ["seen_lines", "read_only", "allowed_paths", *LIMIT_KEYS, "store_class", "store_path",
     "projection", "activity_limit", "max_versions_per_path", "unknown", "base_url", "api_key",
     "provider", "HashlineSession"]
)  # fmt: skip


@settings(max_examples=400, deadline=None, derandomize=True)
@given(CONFIGURED, st.dictionaries(KEYS, VALUES, max_size=6))
def test_any_overlay_only_tightens(configured: HashlineSettings, overlay: dict[str, Any]) -> None:
    TALLY["inputs tried"] += 1
    merged = apply_workspace_overlay(configured, overlay)
    after = merged.settings
    assert strictness(after.seen_lines) >= strictness(configured.seen_lines)
    for key in LIMIT_KEYS:
        assert 0 < getattr(after, key) <= getattr(configured, key)
    assert after.read_only or not configured.read_only
    for prefix in after.allowed_paths:
        assert ".." not in prefix.split("/")
        assert path_allowed(prefix, configured.allowed_paths)
    if configured.allowed_paths:
        assert after.allowed_paths
    untouched = ("store_class", "store_path", "projection", "activity_limit",
                 "max_versions_per_path", "max_sessions")  # fmt: skip
    for key in untouched:
        assert getattr(after, key) == getattr(configured, key)
    changed = {f.name for f in dataclasses.fields(after)
               if getattr(after, f.name) != getattr(configured, f.name)}  # fmt: skip
    assert changed <= set(merged.applied)
    assert len(merged.applied) + len(merged.refused) == len(overlay)
    if merged.refused:
        TALLY["inputs clean errors"] += 1
