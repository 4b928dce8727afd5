"""ZoneSession, the scratch, the wire conversions, the reports and the JSON snapshot."""

from __future__ import annotations

import json

import pytest
from testkit.zones import (
    TOOLS,
    FakeClock,
    assistant,
    assistant_call,
    make_prefix,
    tool_result,
    user,
)

from jupyter_hashline.zones import (
    AppendLog,
    MessageFormatError,
    PinnedPrefix,
    RebuildReason,
    ThreeZoneRequest,
    TurnScratch,
    ZoneSession,
    report_cache,
    report_zones,
    zones_snapshot,
)


def run_session(clock: FakeClock) -> ZoneSession:
    zs = ZoneSession(make_prefix(), clock=clock)
    for turn in range(3):
        zs.scratch.stage_user(f"turn {turn}")
        zs.scratch.set_working_set(["analysis.ipynb"])
        request = zs.build_request(max_tokens=256)
        zs.record_usage(request, {"input_tokens": 900, "cache_read_input_tokens": 300 * turn})
        zs.commit_user()
        zs.log.push(assistant_call(f"c{turn}", "notebook_read", path="analysis.ipynb"))
        zs.log.push(tool_result(f"c{turn}", "[analysis.ipynb#5BF9]\n1:hello"))
        zs.log.push(assistant("done"))
        zs.end_turn()
        clock.advance(30)
    zs.log.rebuild(RebuildReason.MANUAL_COMPACTION, [user("summary")], detail="/compact")
    zs.set_prefix(make_prefix(model="claude-opus-4-1"), reason="model switch")
    zs.scratch.stage_user("after compaction")
    zs.scratch.add_note("plot is cell c3")
    request = zs.build_request(max_tokens=256)
    zs.record_usage(request, {"input_tokens": 900})
    return zs


def test_snapshot_has_the_design_shape_and_is_json() -> None:
    clock = FakeClock()
    snap = run_session(clock).snapshot()
    assert json.loads(json.dumps(snap)) == snap
    assert set(snap) >= {"zones", "cache", "audit"}
    assert set(snap["zones"]) == {"prefix", "log", "scratch"}
    prefix = snap["zones"]["prefix"]
    assert prefix["short_id"] == make_prefix(model="claude-opus-4-1").freeze().short_id
    assert prefix["status"] == "changed (declared)"
    assert prefix["stability"]["declared_changes"] == 1
    assert [p["reason"] for p in prefix["stability"]["pins"]] == ["initial pin", "model switch"]
    log = snap["zones"]["log"]
    assert (log["messages"], log["rebuilds"], log["contract_status"]) == (1, 1, "holds")
    scratch = snap["zones"]["scratch"]
    assert scratch["pending_user"] and scratch["notes"] == ["plot is cell c3"]
    assert isinstance(snap["cache"]["hit_ratio"], float)
    assert len(snap["cache"]["turns"]) == 4
    # Anthropic input_tokens exclude cache reads: all input = 900 * 4 + 300 + 600
    assert snap["cache"]["hit_ratio"] == pytest.approx((300 + 600) / 4500)
    assert [a["reason"] for a in snap["audit"]] == ["manual_compaction"]
    assert snap["audit"][0]["detail"] == "/compact"
    assert snap["invariant"]["excused"] == 1 and snap["invariant"]["violations"] == 0
    assert zones_snapshot(run_session(FakeClock())) == snap


def test_reports_name_each_zone_contract_and_audit() -> None:
    clock = FakeClock()
    zs = run_session(clock)
    text = zs.report_zones()
    assert text == report_zones(zs)
    assert "[prefix]  changed (declared)" in text
    assert "changes: 1 declared, 0 undeclared" in text
    assert "[log]     append-only: 1 message" in text and "1 rebuild" in text
    assert "byte prefix holds" in text and "1 excused, 0 violations" in text
    assert "[scratch] per-turn, staged: pending user message yes; working set empty; 1 note" in text
    assert "Rebuild audit (oldest first; 1 of 1 kept):" in text
    assert "manual compaction (/compact): 12 -> 1 messages" in text
    assert "2023-11-14" in text  # the injected clock, rendered in UTC

    cache = zs.report_cache()
    assert cache == report_cache(zs)
    assert cache.startswith(
        "Cache: hit ratio 20.0% (900 of 4,500 input tokens cached over 4 requests)"
    )
    assert "#0 anthropic: in 900, cached 0 (0.0%), reusable 0 - cold" in cache


def test_undeclared_drift_shows_in_status() -> None:
    clock = FakeClock()
    zs = ZoneSession(make_prefix(), clock=clock)
    zs.log.push(user("hi"))
    zs.build_request()
    zs.build_request(PinnedPrefix("now 12:01", TOOLS, "m"))
    assert zs.snapshot()["zones"]["prefix"]["status"] == "drifted (undeclared)"
    assert "0 declared, 1 undeclared" in zs.report_zones()
    assert "last change: undeclared drift" in zs.report_zones()


def test_scratch_renders_the_tail_and_clears() -> None:
    scratch = TurnScratch()
    assert not scratch and scratch.messages() == ()
    scratch.add_note("n1")
    assert scratch.messages() == (
        {"role": "user", "content": [{"type": "text", "text": "Notes:\n- n1"}]},
    )
    scratch.stage_user({"role": "user", "content": [{"type": "text", "text": "hi"}]})
    scratch.set_working_set(["a.ipynb", "b.ipynb"])
    (message,) = scratch.messages()
    assert message["content"][-1]["text"] == "Working set: a.ipynb, b.ipynb\nNotes:\n- n1"
    assert scratch.entries() is scratch.entries()  # serialized once per change
    assert scratch.take_pending_user() == {
        "role": "user",
        "content": [{"type": "text", "text": "hi"}],
    }
    scratch.clear()
    assert not scratch and len(scratch) == 0 and scratch.to_json()["bytes"] == 0
    with pytest.raises(MessageFormatError, match="user message"):
        scratch.stage_user(assistant("no"))


def test_openai_splits_tool_results_and_keeps_text_after_them() -> None:
    log = AppendLog(
        [
            user("go"),
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "a",
                        "name": "notebook_read",
                        "input": {"path": "x"},
                    },
                    {
                        "type": "tool_use",
                        "id": "b",
                        "name": "notebook_read",
                        "input": {"path": "y"},
                    },
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "a", "content": "X"},
                    {"type": "tool_result", "tool_use_id": "b", "content": "Y", "is_error": True},
                    {"type": "text", "text": "and also"},
                ],
            },
        ]
    )
    request = ThreeZoneRequest(make_prefix(), log)
    messages = request.wire_messages("openai")
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "tool", "user"]
    assert [c["id"] for c in messages[2]["tool_calls"]] == ["a", "b"]
    assert messages[2]["content"] is None
    assert messages[3:5] == [
        {"role": "tool", "tool_call_id": "a", "content": "X"},
        {"role": "tool", "tool_call_id": "b", "content": "Y"},
    ]
    assert messages[5] == {"role": "user", "content": [{"type": "text", "text": "and also"}]}
    assert request.wire_messages() == list(log)
    assert len(request.wire_messages("anthropic")) == 3


def test_anthropic_breakpoint_skips_thinking_and_empty_prefix_parts_are_omitted() -> None:
    log = AppendLog(
        [
            user("q"),
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "answer"},
                    {"type": "thinking", "thinking": "hm", "signature": "s"},
                ],
            },
        ]
    )
    body = json.loads(ThreeZoneRequest(PinnedPrefix("", [], "m"), log).to_wire("anthropic"))
    assert list(body) == ["model", "messages"]
    blocks = body["messages"][-1]["content"]
    assert blocks[0]["cache_control"] == {"type": "ephemeral"} and "cache_control" not in blocks[1]
    openai = json.loads(ThreeZoneRequest(PinnedPrefix("", [], "m"), log).to_wire("openai"))
    assert list(openai) == ["model", "messages"] and openai["messages"][0]["role"] == "user"


def test_tools_without_schema_cannot_be_sent_in_openai_shape() -> None:
    prefix = PinnedPrefix("s", [{"name": "web_search", "type": "web_search_20250305"}], "m")
    request = ThreeZoneRequest(prefix, AppendLog([user("x")]))
    assert b'"name":"web_search"' in request.to_wire("anthropic")
    with pytest.raises(MessageFormatError, match="input_schema"):
        request.to_wire("openai")


def test_request_is_a_snapshot_of_the_zones() -> None:
    log = AppendLog([user("one")])
    scratch = TurnScratch()
    scratch.stage_user("pending")
    request = ThreeZoneRequest(make_prefix(), log, scratch, max_tokens=8)
    body = request.to_wire("anthropic")
    log.push(assistant("later"))
    scratch.clear()
    assert request.to_wire("anthropic") is body
    assert len(request) == 2 and request.fingerprint().log_messages == 1
    fresh = ThreeZoneRequest(make_prefix(), log, scratch, max_tokens=8)
    assert fresh.fingerprint().log_sha256 == log.sha256
    assert fresh.fingerprint().stream_bytes == fresh.stream_bytes
    assert request.fingerprint().log_sha256 != fresh.fingerprint().log_sha256
