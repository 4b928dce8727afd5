"""AppendLog: frozen messages, no mutation, audited rebuilds, one event per rebuild."""

from __future__ import annotations

import copy
import json
import pickle
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from testkit.zones import FakeClock, assistant, assistant_call, tool_result, user

from jupyter_hashline.zones import (
    AppendLog,
    FrozenDict,
    FrozenList,
    MessageFormatError,
    RebuildReason,
    RebuildRecord,
    canonical_json,
    freeze,
    thaw,
)


def filled_log() -> AppendLog:
    log = AppendLog()
    log.push(user("Please fix the plot."))
    log.push(
        assistant_call(
            "c1", "notebook_edit", "Editing.", patch="[a.ipynb#ABCD]\nreplace 2:\n+x = 1"
        )
    )
    log.push(tool_result("c1", "[a.ipynb#1D84] updated"))
    return log


def state(log: AppendLog) -> tuple[int, str, bytes]:
    return len(log), log.sha256, b"".join(canonical_json(m) for m in log)


LOG_ATTEMPTS: dict[str, Callable[[AppendLog], object]] = {
    "append": lambda log: log.append(user("x")),  # type: ignore[attr-defined]
    "extend": lambda log: log.extend([user("x")]),  # type: ignore[attr-defined]
    "insert": lambda log: log.insert(0, user("x")),  # type: ignore[attr-defined]
    "pop": lambda log: log.pop(),  # type: ignore[attr-defined]
    "remove": lambda log: log.remove(log[0]),  # type: ignore[attr-defined]
    "clear": lambda log: log.clear(),  # type: ignore[attr-defined]
    "sort": lambda log: log.sort(),  # type: ignore[attr-defined]
    "reverse": lambda log: log.reverse(),  # type: ignore[attr-defined]
    "__setitem__ call": lambda log: log.__setitem__(0, user("x")),  # type: ignore[index]
}


@pytest.mark.parametrize("name", sorted(LOG_ATTEMPTS))
def test_log_refuses_every_mutating_method(name: str) -> None:
    log = filled_log()
    before = state(log)
    with pytest.raises((AttributeError, TypeError)) as info:
        LOG_ATTEMPTS[name](log)
    assert state(log) == before
    if isinstance(info.value, AttributeError) and name != "__setitem__ call":
        assert "log.push(message)" in str(info.value)  # tells the caller what to do instead


def test_log_has_none_of_the_mutating_methods() -> None:
    log = filled_log()
    for name in ("append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse"):
        assert not hasattr(log, name), name
    assert not hasattr(log, "__setitem__")
    assert not hasattr(log, "__delitem__")


def test_log_refuses_item_assignment_deletion_and_inplace_ops() -> None:
    log = filled_log()
    before = state(log)
    with pytest.raises(TypeError):
        log[0] = user("x")  # type: ignore[index]
    with pytest.raises(TypeError):
        log[0:1] = [user("x")]  # type: ignore[index]
    with pytest.raises(TypeError):
        del log[0]  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        del log[:]  # type: ignore[attr-defined]
    alias = log
    with pytest.raises(TypeError):
        alias += [user("x")]  # type: ignore[operator]
    assert state(log) == before


MESSAGE_ATTEMPTS: dict[str, Callable[[Any], object]] = {
    "set key": lambda m: m.__setitem__("role", "assistant"),
    "del key": lambda m: m.__delitem__("role"),
    "update": lambda m: m.update(role="assistant"),
    "setdefault": lambda m: m.setdefault("extra", 1),
    "pop": lambda m: m.pop("role"),
    "popitem": lambda m: m.popitem(),
    "clear": lambda m: m.clear(),
    "ior": lambda m: m.__ior__({"role": "assistant"}),
    "content append": lambda m: m["content"].append({"type": "text", "text": "x"}),
    "content extend": lambda m: m["content"].extend([]),
    "content insert": lambda m: m["content"].insert(0, {}),
    "content pop": lambda m: m["content"].pop(),
    "content remove": lambda m: m["content"].remove(m["content"][0]),
    "content clear": lambda m: m["content"].clear(),
    "content sort": lambda m: m["content"].sort(),
    "content reverse": lambda m: m["content"].reverse(),
    "content setitem": lambda m: m["content"].__setitem__(0, {}),
    "content delitem": lambda m: m["content"].__delitem__(0),
    "content iadd": lambda m: m["content"].__iadd__([{}]),
    "content imul": lambda m: m["content"].__imul__(2),
    "block set key": lambda m: m["content"][1].__setitem__("name", "notebook_write"),
    "nested input set key": lambda m: m["content"][1]["input"].__setitem__("patch", "x"),
    "nested input update": lambda m: m["content"][1]["input"].update(patch="x"),
    "nested input del": lambda m: m["content"][1]["input"].__delitem__("patch"),
}


@pytest.mark.parametrize("name", sorted(MESSAGE_ATTEMPTS))
def test_pushed_messages_refuse_mutation_at_every_depth(name: str) -> None:
    log = filled_log()
    before = state(log)
    with pytest.raises(TypeError, match="frozen"):
        MESSAGE_ATTEMPTS[name](log[1])
    assert state(log) == before


def test_statement_forms_of_nested_mutation_raise() -> None:
    log = filled_log()
    before = state(log)
    message = log[1]
    with pytest.raises(TypeError):
        message["role"] = "user"
    with pytest.raises(TypeError):
        del message["content"]
    content = message["content"]
    with pytest.raises(TypeError):
        content += [{"type": "text", "text": "x"}]
    with pytest.raises(TypeError):
        content[0]["text"] = "changed"
    assert state(log) == before


def test_push_copies_so_the_callers_dict_stays_theirs() -> None:
    log = AppendLog()
    original = assistant_call("c1", "notebook_read", path="a.ipynb")
    frozen = log.push(original)
    original["content"][0]["input"]["path"] = "b.ipynb"
    original["role"] = "user"
    assert log[0]["content"][0]["input"]["path"] == "a.ipynb"
    assert frozen is log[0]
    assert frozen == assistant_call("c1", "notebook_read", path="a.ipynb")
    assert isinstance(frozen, dict) and isinstance(frozen["content"], FrozenList)


def test_frozen_values_copy_pickle_and_thaw() -> None:
    message = filled_log()[1]
    assert copy.copy(message) is message
    assert copy.deepcopy(message) is message
    assert pickle.loads(pickle.dumps(message)) == message
    plain = thaw(message)
    plain["content"].append({"type": "text", "text": "more"})
    assert type(plain) is dict and type(plain["content"]) is list
    assert len(message["content"]) == 2
    assert json.loads(canonical_json(message)) == thaw(message)


def test_log_reads_as_a_sequence() -> None:
    log = filled_log()
    assert len(log) == 3
    assert log[-1]["role"] == "user"
    assert log[0:2] == (log[0], log[1])
    assert list(log) == [log[0], log[1], log[2]]
    assert log.index(log[2]) == 2
    assert log[0] in log
    assert log.byte_length == sum(len(canonical_json(m)) + 1 for m in log)


@pytest.mark.parametrize(
    ("message", "fragment"),
    [
        ({"role": "system", "content": "x"}, "PinnedPrefix"),
        ({"role": "tool", "content": "x"}, "role 'user' or 'assistant'"),
        ({"role": "user", "content": ""}, "empty content"),
        ({"role": "user", "content": []}, "non-empty"),
        ({"role": "user", "content": [{"text": "no type"}]}, "string 'type'"),
        (
            {
                "role": "user",
                "content": [{"type": "tool_use", "id": "a", "name": "b", "input": {}}],
            },
            "assistant",
        ),
        ({"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "b"}]}, "input"),
        (
            {"role": "assistant", "content": [{"type": "tool_result", "tool_use_id": "a"}]},
            "user messages",
        ),
        ({"role": "user", "content": "x", "reasoning_content": "y"}, "reasoning_content"),
        ({"role": "user", "content": float("nan")}, "NaN"),
        ({"role": "user", "content": [{"type": "text", "text": b"bytes"}]}, "JSON cannot carry"),
        ({"role": "user", "content": "x", 3: "int key"}, "non-string key"),
    ],
)
def test_bad_messages_are_refused_and_the_log_is_untouched(message: Any, fragment: str) -> None:
    log = filled_log()
    before = state(log)
    with pytest.raises((MessageFormatError, TypeError, ValueError), match=fragment):
        log.push(message)
    assert state(log) == before


def test_rebuild_records_audits_and_fires_exactly_one_event() -> None:
    clock = FakeClock()
    log = AppendLog(audit_size=8, clock=clock)
    for i in range(6):
        log.push(user(f"u{i}") if i % 2 == 0 else assistant(f"a{i}"))
    events: list[RebuildRecord] = []
    other: list[RebuildRecord] = []
    log.subscribe(events.append)
    unsubscribe = log.subscribe(other.append)
    before_sha = log.sha256
    record = log.rebuild(
        RebuildReason.AUTO_COMPACTION,
        [user("Summary of 6 messages."), assistant("ok")],
        detail="85% full",
    )
    assert events == [record] and other == [record]
    assert record == RebuildRecord(
        RebuildReason.AUTO_COMPACTION, "85% full", 6, 2, clock.now, before_sha, log.sha256
    )
    assert log.audit == (record,)
    assert log.rebuild_count == 1
    assert [m["content"] for m in log] == [
        "Summary of 6 messages.",
        [{"type": "text", "text": "ok"}],
    ]
    unsubscribe()
    log.rebuild("purge", [user("x")])
    assert len(events) == 2 and len(other) == 1
    assert log.audit[-1].reason is RebuildReason.PURGE
    assert "automatic compaction (85% full): 6 -> 2 messages" in str(record)


def test_audit_is_bounded_oldest_first() -> None:
    log = AppendLog(audit_size=3)
    for i in range(5):
        log.rebuild(RebuildReason.MICRO_COMPACTION, [user(f"state {i}")], detail=f"step {i}")
    assert [r.detail for r in log.audit] == ["step 2", "step 3", "step 4"]
    assert log.rebuild_count == 5
    assert len(AppendLog().audit) == 0
    default = AppendLog()
    for i in range(10):
        default.rebuild(RebuildReason.FRONT_TRIM, [user(str(i))])
    assert len(default.audit) == 8


def test_failed_rebuild_changes_nothing_and_fires_nothing() -> None:
    log = filled_log()
    before = state(log)
    events: list[RebuildRecord] = []
    log.subscribe(events.append)
    with pytest.raises(MessageFormatError):
        log.rebuild(RebuildReason.PURGE, [user("fine"), {"role": "system", "content": "no"}])
    with pytest.raises(MessageFormatError, match="detail"):
        log.rebuild(RebuildReason.RUNTIME, [user("x")])
    with pytest.raises(MessageFormatError, match="unknown rebuild reason"):
        log.rebuild("tidy", [user("x")])
    assert state(log) == before and events == [] and log.audit == ()


def test_a_failing_subscriber_does_not_stop_the_others() -> None:
    log = filled_log()
    seen: list[RebuildRecord] = []

    def broken(record: RebuildRecord) -> None:
        raise RuntimeError("panel crashed")

    log.subscribe(broken)
    log.subscribe(seen.append)
    with pytest.raises(RuntimeError, match="panel crashed"):
        log.rebuild(RebuildReason.HISTORY_CLEAR, [user("fresh start")])
    assert len(seen) == 1 and len(log) == 1 and len(log.audit) == 1


def test_every_reason_has_a_readable_label() -> None:
    names = {reason.name for reason in RebuildReason}
    assert names == {
        "MANUAL_COMPACTION", "AUTO_COMPACTION", "PURGE", "MICRO_COMPACTION",
        "CONTEXT_OVERFLOW_RECOVERY", "FRONT_TRIM", "VERIFY_AND_REPLAN_RESET", "EDIT_ROLLBACK",
        "SESSION_SYNC", "CYCLE_RESET", "HISTORY_CLEAR", "RUNTIME",
    }  # fmt: skip
    labels = [reason.label for reason in RebuildReason]
    assert all(label and "_" not in label for label in labels)
    assert len(set(labels)) == len(labels)
    assert "kernel restart" in RebuildReason.SESSION_SYNC.label


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_freeze_keeps_canonical_bytes_and_thaw_round_trips(value: Any) -> None:
    frozen = freeze(value)
    assert canonical_json(frozen) == canonical_json(value)
    assert thaw(frozen) == thaw(value)
    if isinstance(value, dict):
        assert isinstance(frozen, FrozenDict)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["push", "rebuild"]), max_size=30))
def test_log_only_grows_between_rebuilds(ops: list[str]) -> None:
    log = AppendLog(audit_size=4)
    expected: list[bytes] = []
    for i, op in enumerate(ops):
        if op == "push":
            log.push(user(f"message {i}"))
            expected.append(canonical_json(user(f"message {i}")))
        else:
            log.rebuild(RebuildReason.CYCLE_RESET, [user("reset")])
            expected = [canonical_json(user("reset"))]
        assert [canonical_json(m) for m in log] == expected
    assert len(log.audit) == min(4, ops.count("rebuild"))
