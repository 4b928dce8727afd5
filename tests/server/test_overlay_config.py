"""The workspace overlay may only tighten the server's settings."""

from __future__ import annotations

import pytest

from jupyter_hashline.server.config import (
    HashlineSettings,
    SeenLinesPolicy,
    apply_workspace_overlay,
    path_allowed,
)

BASE = HashlineSettings(seen_lines=SeenLinesPolicy.WARN, allowed_paths=("work",))


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("seen_lines", "reject", SeenLinesPolicy.REJECT),
        ("seen_lines", "warn", SeenLinesPolicy.WARN),
        ("max_request_bytes", 1024, 1024),
        ("max_patch_bytes", 10, 10),
        ("max_file_bytes", 1, 1),
        ("allowed_paths", ["work/agent", "/work/data/"], ("work/agent", "work/data")),
        ("read_only", True, True),
        ("allow_run", False, False),
        ("allow_run", True, True),  # already allowed: nothing loosens
        ("allow_overwrite", False, False),
        ("max_edits_per_patch", 100, 100),
        ("max_view_lines", 1000, 1000),
    ],
)
def test_tightening_keys_apply(key: str, value: object, expected: object) -> None:
    merged = apply_workspace_overlay(BASE, {key: value})
    assert merged.refused == ()
    assert merged.applied == (key,)
    assert getattr(merged.settings, key) == expected


@pytest.mark.parametrize(
    ("key", "value", "reason"),
    [
        ("seen_lines", "off", "loosen"),
        ("seen_lines", "sometimes", "must be one of"),
        ("max_request_bytes", 32 * 1024 * 1024, "raise the limit"),
        ("max_file_bytes", -5, "positive integer"),
        ("max_patch_bytes", True, "positive integer"),
        ("max_patch_bytes", "10", "positive integer"),
        ("max_edits_per_patch", 10**6, "raise the limit"),
        ("max_view_lines", 0, "positive integer number of lines"),
        ("allowed_paths", ["elsewhere"], "widen"),
        ("allowed_paths", ["work/../etc"], "widen"),
        ("allowed_paths", [], "whole root"),
        ("allowed_paths", "work", "list of path prefixes"),
        ("store_path", "/tmp/elsewhere.sqlite3", "redirect"),
        ("store_class", "x.Y", "redirect"),
        ("projection", "md", "not a setting a workspace may change"),
        ("max_versions_per_path", 1, "not a setting a workspace may change"),
        ("base_url", "https://api.anthropic.com.look-alike.test", "base URL or API keys"),
        ("api_key", "sk-planted", "base URL or API keys"),
        ("provider", "openai", "base URL or API keys"),
        ("model", "gpt-x", "base URL or API keys"),
        ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9", "base URL or API keys"),
        ("openai_api_key", "sk-planted", "base URL or API keys"),
        ("HashlineSession", {"base_url": "http://127.0.0.1:9"}, "base URL or API keys"),
    ],
)
def test_loosening_and_redirecting_keys_are_refused(key: str, value: object, reason: str) -> None:
    merged = apply_workspace_overlay(BASE, {key: value})
    assert merged.settings == BASE
    assert merged.applied == ()
    assert len(merged.refused) == 1
    assert merged.refused[0].startswith(key)
    assert reason in merged.refused[0]


def test_read_only_cannot_be_turned_off() -> None:
    locked = HashlineSettings(read_only=True)
    merged = apply_workspace_overlay(locked, {"read_only": False})
    assert merged.settings.read_only is True
    assert "writable" in merged.refused[0]


def test_running_cells_can_be_turned_off_never_on() -> None:
    off = HashlineSettings(allow_run=False)
    merged = apply_workspace_overlay(off, {"allow_run": True})
    assert merged.settings.allow_run is False and merged.applied == ()
    assert merged.refused == (
        "allow_run: refused, would allow running cells on a server that does not allow it",
    )
    wrong = apply_workspace_overlay(HashlineSettings(), {"allow_run": "no"})
    assert wrong.settings.allow_run is True and "true or false" in wrong.refused[0]


def test_overwriting_without_a_tag_can_be_forbidden_never_allowed() -> None:
    off = HashlineSettings(allow_overwrite=False)
    merged = apply_workspace_overlay(off, {"allow_overwrite": True})
    assert merged.settings.allow_overwrite is False and merged.applied == ()
    assert "without a tag" in merged.refused[0]
    wrong = apply_workspace_overlay(HashlineSettings(), {"allow_overwrite": "no"})
    assert wrong.settings.allow_overwrite is True and "true or false" in wrong.refused[0]


def test_mixed_overlay_keeps_good_keys_and_reports_each_bad_one() -> None:
    overlay = {
        "seen_lines": "reject",
        "store_path": "/elsewhere",
        "max_file_bytes": 2048,
        "max_request_bytes": 10**12,
        "nonsense": 1,
    }
    merged = apply_workspace_overlay(BASE, overlay)
    assert merged.settings.seen_lines is SeenLinesPolicy.REJECT
    assert merged.settings.max_file_bytes == 2048
    assert merged.settings.max_request_bytes == BASE.max_request_bytes
    assert merged.settings.store_path == BASE.store_path
    assert merged.applied == ("seen_lines", "max_file_bytes")
    assert [r.split(":")[0] for r in merged.refused] == [
        "store_path",
        "max_request_bytes",
        "nonsense",
    ]


def test_an_open_root_can_be_narrowed_once_then_only_further() -> None:
    open_root = HashlineSettings()
    narrowed = apply_workspace_overlay(open_root, {"allowed_paths": ["a", "b/c"]}).settings
    assert narrowed.allowed_paths == ("a", "b/c")
    again = apply_workspace_overlay(narrowed, {"allowed_paths": ["b"]})
    assert again.settings.allowed_paths == ("a", "b/c")
    assert again.refused


@pytest.mark.parametrize(
    ("path", "allowed", "expected"),
    [
        ("x.ipynb", (), True),
        ("work/x.ipynb", ("work",), True),
        ("work", ("work",), True),
        ("workshop/x.ipynb", ("work",), False),
        ("other/x.ipynb", ("work", "data"), False),
        ("data/x.ipynb", ("work", "data"), True),
    ],
)
def test_path_allowed_matches_whole_segments(
    path: str, allowed: tuple[str, ...], expected: bool
) -> None:
    assert path_allowed(path, allowed) is expected
