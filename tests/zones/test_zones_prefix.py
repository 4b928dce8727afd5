"""Frozen prefix fingerprints, drift classification, and the stability manager."""

from __future__ import annotations

import copy
import hashlib

import pytest
from testkit.zones import MODEL, SYSTEM, TOOLS, FakeClock, make_prefix, tool

from jupyter_hashline.zones import (
    DriftPart,
    FrozenPrefix,
    MessageFormatError,
    PinnedPrefix,
    PrefixStabilityManager,
    canonical_json,
)


def test_fingerprints_follow_the_documented_recipe() -> None:
    frozen = make_prefix().freeze()
    sha = lambda data: hashlib.sha256(data).hexdigest()  # noqa: E731
    tools_sha = sha(b"\n".join(canonical_json(t) for t in TOOLS))
    assert frozen.system_sha256 == sha(SYSTEM.encode())
    assert frozen.tools_sha256 == tools_sha
    assert frozen.model_sha256 == sha(MODEL.encode())
    combined = sha(
        f"model:{sha(MODEL.encode())}\nsystem:{sha(SYSTEM.encode())}\ntools:{tools_sha}".encode()
    )
    assert frozen.combined_sha256 == combined
    assert frozen.short_id == combined[:12] and len(frozen.short_id) == 12
    assert frozen.tool_names == ("notebook_read", "notebook_edit", "notebook_write")


def test_freeze_snapshots_the_tools() -> None:
    tools = copy.deepcopy(TOOLS)
    frozen = PinnedPrefix(SYSTEM, tools, MODEL).freeze()
    tools[0]["description"] = "changed after freezing"
    assert frozen.verify(SYSTEM, TOOLS, MODEL) is None
    with pytest.raises(TypeError):
        frozen.tools[0]["description"] = "x"


def test_verify_returns_none_for_the_same_prefix_and_key_order_does_not_matter() -> None:
    frozen = make_prefix().freeze()
    shuffled_keys = [dict(reversed(list(t.items()))) for t in TOOLS]
    assert frozen.verify(SYSTEM, shuffled_keys, MODEL) is None
    assert frozen == PinnedPrefix(SYSTEM, shuffled_keys, MODEL).freeze()


def test_openai_form_tools_freeze_to_the_same_fingerprint() -> None:
    openai_tools = [
        {
            "type": "function",
            "function": {
                "name": t["name"],
                "description": t["description"],
                "parameters": t["input_schema"],
            },
        }
        for t in TOOLS
    ]
    assert PinnedPrefix(SYSTEM, openai_tools, MODEL).freeze() == make_prefix().freeze()


def test_changed_description_is_tools_drift() -> None:
    frozen = make_prefix().freeze()
    tools = copy.deepcopy(TOOLS)
    tools[1]["description"] = "Apply a hashline patch (now with rebase)."
    drift = frozen.verify(SYSTEM, tools, MODEL)
    assert drift is not None
    assert drift.tools_changed and not drift.tools_reordered
    assert not drift.system_changed and not drift.model_changed
    assert drift.changed_tools == ("notebook_edit",)
    assert drift.parts == (DriftPart.TOOLS,)
    assert (
        drift.frozen_hash == frozen.combined_sha256 and drift.current_hash != frozen.combined_sha256
    )
    assert "tools changed (changed: notebook_edit)" in str(drift)


def test_changed_schema_is_tools_drift() -> None:
    frozen = make_prefix().freeze()
    tools = copy.deepcopy(TOOLS)
    tools[0]["input_schema"]["properties"]["offset"] = {"type": "integer"}
    drift = frozen.verify(SYSTEM, tools, MODEL)
    assert drift is not None and drift.tools_changed and not drift.tools_reordered
    assert drift.changed_tools == ("notebook_read",)


def test_added_and_removed_tools_are_tools_drift() -> None:
    frozen = make_prefix().freeze()
    tools = [*TOOLS[1:], tool("notebook_outputs", "Outputs.", cell="string")]
    drift = frozen.verify(SYSTEM, tools, MODEL)
    assert drift is not None and drift.tools_changed and not drift.tools_reordered
    assert drift.added_tools == ("notebook_outputs",) and drift.removed_tools == ("notebook_read",)


def test_reordered_tools_are_reorder_drift_only() -> None:
    frozen = make_prefix().freeze()
    drift = frozen.verify(SYSTEM, list(reversed(TOOLS)), MODEL)
    assert drift is not None
    assert drift.tools_reordered and not drift.tools_changed
    assert not drift.system_changed and not drift.model_changed
    assert drift.parts == (DriftPart.TOOLS_REORDERED,)
    assert "reordered" in str(drift)


def test_changed_model_is_model_drift() -> None:
    drift = make_prefix().freeze().verify(SYSTEM, TOOLS, "claude-opus-4-1")
    assert drift is not None and drift.model_changed
    assert drift.parts == (DriftPart.MODEL,)
    assert drift.frozen_model == MODEL and drift.current_model == "claude-opus-4-1"
    assert f"'{MODEL}' -> 'claude-opus-4-1'" in str(drift)


def test_timestamp_in_system_prompt_drifts_on_every_turn() -> None:
    clock = FakeClock()
    manager = PrefixStabilityManager(make_prefix(), clock=clock)
    for turn in range(5):
        clock.advance(61)
        system = f"{SYSTEM}\nCurrent time: {clock.now:.0f}"
        check = manager.check(PinnedPrefix(system, TOOLS, MODEL))
        assert not check.stable and not check.declared
        assert check.drift is not None and check.drift.parts == (DriftPart.SYSTEM,)
        assert manager.undeclared_changes == turn + 1
    assert manager.declared_changes == 0
    assert manager.stability_ratio() == 0.0
    assert manager.pins[-1].reason.startswith("undeclared drift: prefix drift")


def test_stable_prefix_counts_checks_not_changes() -> None:
    manager = PrefixStabilityManager()
    for _ in range(4):
        assert manager.check(make_prefix()).stable
    assert (manager.checks, manager.changes, manager.stability_ratio()) == (4, 0, 1.0)
    assert len(manager.pins) == 1 and manager.pins[0].reason == "first request"


def test_declared_changes_are_told_apart_from_drift() -> None:
    manager = PrefixStabilityManager(make_prefix())
    manager.check(make_prefix())
    manager.declare("model switch to opus")
    switched = manager.check(make_prefix(model="claude-opus-4-1"))
    assert not switched.stable and switched.declared
    added = manager.check(
        make_prefix(model="claude-opus-4-1", tools=[*TOOLS, tool("x", "y")]),
        declared="tool added: x",
    )
    assert added.declared
    drifted = manager.check(
        make_prefix(system="other", model="claude-opus-4-1", tools=[*TOOLS, tool("x", "y")])
    )
    assert not drifted.declared
    assert (manager.checks, manager.declared_changes, manager.undeclared_changes) == (4, 2, 1)
    assert manager.stability_ratio() == pytest.approx(1 / 4)
    assert [p.reason for p in manager.pins][:3] == [
        "initial pin",
        "model switch to opus",
        "tool added: x",
    ]
    assert [p.declared for p in manager.pins] == [True, True, True, False]


def test_pin_history_is_bounded() -> None:
    manager = PrefixStabilityManager(history=3)
    for i in range(6):
        manager.check(make_prefix(system=f"v{i}"))
    assert len(manager.pins) == 3
    assert manager.pins[-1].short_id == make_prefix(system="v5").freeze().short_id
    assert manager.changes == 5


def test_duplicate_or_nameless_tools_are_refused() -> None:
    with pytest.raises(MessageFormatError, match="duplicate"):
        PinnedPrefix(SYSTEM, [TOOLS[0], TOOLS[0]], MODEL).freeze()
    with pytest.raises(MessageFormatError, match="name"):
        PinnedPrefix(SYSTEM, [{"description": "no name"}], MODEL).freeze()


def test_frozen_prefix_json() -> None:
    data = make_prefix().freeze().to_json()
    assert data["tool_names"] == ["notebook_read", "notebook_edit", "notebook_write"]
    assert data["short_id"] == data["combined_sha256"][:12]
    assert isinstance(FrozenPrefix.of(SYSTEM, TOOLS, MODEL), FrozenPrefix)
