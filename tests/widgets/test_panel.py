"""The zones panel without a kernel: its synced state against `session.snapshot()`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from testkit.comms import RecordingComm
from testkit.widget_sessions import (
    EchoClient,
    done,
    edit_script,
    edit_turn,
    make_notebook,
    read_turn,
    run,
    run_turn,
    scripted_session,
)

from jupyter_hashline.agent import ProviderSimulator, Session
from jupyter_hashline.widgets import PanelLimits, ZonesPanel
from jupyter_hashline.zones import RebuildReason


def state(panel: ZonesPanel) -> dict[str, Any]:
    """The panel's state as a front end would receive it (JSON round trip)."""
    return json.loads(json.dumps(panel.get_state()))


def audit_rows(panel: ZonesPanel) -> int:
    return panel.audit.get_state()["value"].count('data-row="audit"')


def assert_matches_snapshot(summary: dict[str, Any], snap: dict[str, Any]) -> None:
    prefix, log = snap["zones"]["prefix"], snap["zones"]["log"]
    cache = snap["cache"]
    assert summary["prefix"]["short_id"] == prefix["short_id"]
    assert summary["prefix"]["model"] == prefix["model"]
    assert summary["prefix"]["system_chars"] == prefix["system_chars"]
    assert summary["prefix"]["tool_count"] == len(prefix["tool_names"])
    assert summary["prefix"]["status"] == prefix["status"]
    assert summary["prefix"]["checks"] == prefix["stability"]["checks"]
    assert summary["prefix"]["stability_ratio"] == prefix["stability"]["stability_ratio"]
    for key in ("messages", "bytes", "generation", "rebuilds"):
        assert summary["log"][key] == log[key], key
    for key in ("messages", "bytes", "pending_user", "working_set"):
        assert summary["scratch"][key] == snap["zones"]["scratch"][key], key
    for key in ("hit_ratio", "requests", "input_tokens", "cached_tokens", "misses"):
        assert summary["cache"][key] == cache[key], key
    assert summary["cache"]["miss_causes"] == cache["miss_causes"]
    chart = summary["cache"]["chart"]
    shown = cache["turns"][-len(chart["hit_ratio"]) :]
    assert chart["hit_ratio"] == [t["hit_ratio"] for t in shown]
    assert chart["cause"] == [t["cause"] for t in shown]
    assert chart["first_index"] == (shown[0]["index"] if shown else 0)
    assert summary["audit"] == snap["audit"][::-1]
    assert [e["id"] for e in summary["edits"]] == [e["id"] for e in snap["edits"]][:5]
    if snap["edits"]:
        assert summary["edits"][0]["diff"] == snap["edits"][0]["diff"]
    assert summary["session"] == {
        "label": summary["session"]["label"],
        **{k: snap["session"][k] for k in ("id", "provider", "model", "turns", "active")},
    }


def test_state_holds_the_snapshot_numbers_after_scripted_turns(
    tmp_path: Path, comms: list[RecordingComm]
) -> None:
    session, sim = scripted_session(tmp_path, edit_script(range(1, 7)))
    panel = ZonesPanel(session, min_interval_s=0)
    run(session, ["read"] + [f"set {v}" for v in range(1, 7)])
    assert sim.turns_left == 0
    snap = session.snapshot()
    got = state(panel)
    assert_matches_snapshot(got["summary"], snap)
    assert got["summary"]["cache"]["hit_ratio"] == pytest.approx(sim.hit_ratio)
    assert got["summary"]["status"] == "ok"
    # the visible widgets show the same numbers
    html = {name: getattr(panel, name).get_state()["value"] for name in ("prefix_zone", "cache")}
    assert snap["zones"]["prefix"]["short_id"] in html["prefix_zone"]
    assert f"{snap['cache']['hit_ratio']:.1%}" in html["cache"]
    assert f"{snap['cache']['requests']:,} requests" in html["cache"]
    edits = panel.edits.get_state()["value"]
    assert edits.count('data-row="edit"') == 5
    assert "+value = 6" in edits and "color:#1a7f37" in edits  # the added line, coloured
    assert snap["edits"][0]["header_after"] in edits
    # what a front end holds after every message the panel's comm sent (the opening state,
    # then each update folded in) is the panel's state: no update went missing
    front_end: dict[str, Any] = dict(panel.comm.opened_with.get("data", {}).get("state", {}))
    for message in panel.comm.messages:
        if message.get("method") == "update":
            front_end.update(message["state"])
    assert json.loads(json.dumps(front_end["summary"])) == got["summary"]
    assert sum(m.get("method") == "update" for m in panel.comm.messages) >= 7  # one per turn


async def test_the_last_edits_show_a_run_with_each_cells_status_and_duration(
    tmp_path: Path, comms: list[RecordingComm]
) -> None:
    script = [read_turn(), done("read it"), edit_turn(42), run_turn(), done("it prints 42")]
    session, _ = scripted_session(tmp_path, script)
    panel = ZonesPanel(session, min_interval_s=0)
    async with session:
        await session.run_turn("read")
        await session.run_turn("set 42 and run it")
    [ran, edited] = state(panel)["summary"]["edits"][:2]
    assert (ran["op"], edited["op"]) == ("run", "update")
    assert [(r["cell"], r["status"], r["execution_count"]) for r in ran["runs"]] == [
        ("counter", "ok", 1)
    ]
    html = panel.edits.get_state()["value"]
    assert html.count('data-row="edit"') == 2 and html.count('data-row="run"') == 1
    assert "run: 1 of 1 cell ran" in html
    assert '<span style="color:#1a7f37">ok</span> counter · ' in html and " · [1]" in html
    assert ran["header_after"] in html


def test_http_simulator_session_matches_too(tmp_path: Path, comms: list[RecordingComm]) -> None:
    make_notebook(tmp_path)
    with ProviderSimulator(edit_script([1, 2]), min_tokens=256) as sim:
        session = Session(
            tmp_path, base_url=sim.base_url("openai"), provider="openai", api_key="k",
            register=False,
        )  # fmt: skip
        panel = session.panel()
        run(session, ["read", "set 1", "set 2"])
    assert isinstance(panel, ZonesPanel)
    assert_matches_snapshot(state(panel)["summary"], session.snapshot())


def test_a_rebuild_adds_exactly_one_audit_row(tmp_path: Path, comms: list[RecordingComm]) -> None:
    session, _ = scripted_session(tmp_path, edit_script(range(1, 5)))
    panel = ZonesPanel(session, min_interval_s=0)
    run(session, ["read", "set 1", "set 2"])
    assert audit_rows(panel) == 0
    assert state(panel)["summary"]["status"] == "ok"
    session.compact("The counter was set to 1 and 2.", keep_last_turns=1)
    assert audit_rows(panel) == 1
    summary = state(panel)["summary"]
    assert len(summary["audit"]) == 1
    assert summary["audit"][0]["reason"] == "manual_compaction"
    assert summary["status"] == "rebuilt"
    assert summary["log"]["last_rebuild"]["label"] == "manual compaction"
    # a rebuild made directly on the log (not through Session.compact) is heard too
    session.zones.log.rebuild(RebuildReason.PURGE, list(session.zones.log), detail="tool purge")
    assert audit_rows(panel) == 2
    run(session, ["set 3", "set 4"])
    assert audit_rows(panel) == 2  # turns add no audit rows
    assert_matches_snapshot(state(panel)["summary"], session.snapshot())
    assert "purge" in panel.audit.value.split('data-row="audit"')[1]  # newest first


def test_audit_is_bounded_to_the_newest_eight(tmp_path: Path, comms: list[RecordingComm]) -> None:
    session, _ = scripted_session(tmp_path, [])
    panel = ZonesPanel(session)
    for i in range(12):
        session.zones.log.rebuild(RebuildReason.RUNTIME, [], detail=f"reset {i}")
    assert audit_rows(panel) == 8
    assert "reset 11" in panel.audit.value and "reset 3" not in panel.audit.value
    assert "newest 8 of 12" in panel.audit.value


def test_a_drift_flips_the_status(tmp_path: Path, comms: list[RecordingComm]) -> None:
    stamp = ["09:00"]
    session, _ = scripted_session(
        tmp_path, edit_script(range(1, 4)), system=lambda: f"You edit notebooks. Time {stamp[0]}"
    )
    panel = ZonesPanel(session, min_interval_s=0)
    run(session, ["read", "set 1"])
    before = state(panel)["summary"]
    assert before["status"] == "ok" and before["drifts"] == []
    assert 'data-status="ok"' in panel.status.value
    first_id = before["prefix"]["short_id"]
    stamp[0] = "09:01"
    run(session, ["set 2"])
    after = state(panel)["summary"]
    assert after["status"] == "drifted"
    assert 'data-status="drifted"' in panel.status.value
    assert after["drifts"] == [
        {
            "from": first_id,
            "to": after["prefix"]["short_id"],
            "parts": ["system"],
            "declared": False,
            "reason": after["drifts"][0]["reason"],
            "at": after["drifts"][0]["at"],
        }
    ]
    assert after["prefix"]["short_id"] != first_id
    assert f"{first_id} → {after['prefix']['short_id']}" in panel.status.value
    assert after["cache"]["miss_causes"] == {"system_changed": 1}
    assert "system_changed × 1" in panel.cache.value
    assert_matches_snapshot(after, session.snapshot())


def test_the_panel_updates_during_a_turn_from_session_events(
    tmp_path: Path, comms: list[RecordingComm]
) -> None:
    session, _ = scripted_session(tmp_path, edit_script([1]))
    panel = ZonesPanel(session, min_interval_s=0)
    seen: list[tuple[str, bool, int, int]] = []

    def observe(event: str, _s: Session) -> None:  # runs after the panel's own observer
        summary = panel.summary
        seen.append(
            (event, summary["session"]["active"], summary["cache"]["requests"], panel.renders)
        )

    session.subscribe(observe)
    run(session, ["read"])
    events = [(event, active, requests) for event, active, requests, _ in seen]
    assert events == [
        ("request", True, 1),
        ("tool", True, 1),
        ("request", True, 2),
        ("turn", False, 2),
    ]
    renders = [r for *_, r in seen]
    assert renders == sorted(set(renders))  # one update per event
    assert "running a turn" not in panel.header.value and "idle" in panel.header.value


def test_events_inside_a_turn_are_coalesced_but_turn_ends_always_render(
    tmp_path: Path, comms: list[RecordingComm]
) -> None:
    session, _ = scripted_session(tmp_path, edit_script([1, 2]))
    now = [0.0]
    panel = ZonesPanel(session, min_interval_s=10.0, clock=lambda: now[0])
    start = panel.renders
    run(session, ["read", "set 1", "set 2"])  # 9 events, the clock never moves
    assert panel.renders - start == 3  # only the three turn ends
    assert_matches_snapshot(panel.summary, session.snapshot())  # never stale after a turn
    now[0] = 100.0  # time passes: the next event inside a turn renders again
    session.zones.scratch.add_note("checking")
    panel._on_session_event("tool", session)
    assert panel.renders - start == 4
    assert panel.summary["scratch"]["notes"] == ["checking"]


def test_log_growth_is_per_turn(tmp_path: Path, comms: list[RecordingComm]) -> None:
    session, _ = scripted_session(tmp_path, edit_script([1, 2]))
    panel = ZonesPanel(session, min_interval_s=0)
    sizes = []
    for prompt in ("read", "set 1", "set 2"):
        before = session.zones.log.byte_length, len(session.zones.log)
        run(session, [prompt])
        after = session.zones.log.byte_length, len(session.zones.log)
        sizes.append((after[0] - before[0], after[1] - before[1]))
        log = panel.summary["log"]
        assert (log["growth_bytes"], log["growth_messages"]) == sizes[-1]
    assert all(messages == 4 for _, messages in sizes)  # user, tool call, result, answer
    assert f"{sizes[-1][0]:+,} bytes" in panel.log_zone.value


def test_close_unsubscribes(tmp_path: Path, comms: list[RecordingComm]) -> None:
    session, _ = scripted_session(tmp_path, edit_script([1]))
    panel = ZonesPanel(session, min_interval_s=0)
    panel.close()
    renders = panel.renders
    run(session, ["read"])
    session.compact("summary")
    assert panel.renders == renders
    assert session._observers == []


def test_a_failing_panel_never_breaks_the_turn(
    tmp_path: Path, comms: list[RecordingComm], caplog: pytest.LogCaptureFixture
) -> None:
    session, _ = scripted_session(tmp_path, edit_script([1]))
    panel = ZonesPanel(session, min_interval_s=0)

    def broken() -> dict[str, Any]:
        raise RuntimeError("renderer bug")

    panel._tracker.summary = broken  # type: ignore[method-assign]
    assert asyncio_run(session.run_turn("read")) == "read it"
    assert "could not update" in caplog.text


def asyncio_run(coro: Any) -> Any:
    import asyncio

    return asyncio.run(coro)


def test_text_from_the_session_is_escaped(tmp_path: Path, comms: list[RecordingComm]) -> None:
    session, _ = scripted_session(tmp_path, [])
    panel = ZonesPanel(session)
    session.zones.scratch.stage_user("<script>alert('x')</script>")
    session.zones.log.rebuild(RebuildReason.RUNTIME, [], detail="<b>bold</b>")
    panel.refresh()
    assert "<script>" not in panel.scratch_zone.value
    assert "&lt;script&gt;" in panel.scratch_zone.value
    assert "<b>bold</b>" not in panel.audit.value


def test_thousands_of_turns_render_in_bounded_size(
    tmp_path: Path, comms: list[RecordingComm]
) -> None:
    """2,000 turns: the summary and the HTML stop growing once the histories are full, and
    each request is summed once (not re-walked per update)."""
    turns = 2_000
    make_notebook(tmp_path)
    session = Session(tmp_path, client=EchoClient(), register=False)
    panel = ZonesPanel(session, min_interval_s=0, limits=PanelLimits(chart_requests=100))
    sizes: dict[int, int] = {}

    def measure(event: str, _s: Session) -> None:
        if event == "turn" and session.turns in (200, turns):
            sizes[session.turns] = len(json.dumps(panel.get_state()))

    session.subscribe(measure)
    run(session, [f"say {i}" for i in range(turns)])
    assert panel.renders == 2 * turns + 1  # one per request and turn end, plus the first
    assert panel.summary["cache"]["requests"] == turns
    assert len(panel.summary["cache"]["chart"]["hit_ratio"]) == 100
    assert panel.cache.value.count("<rect") == 100
    assert abs(sizes[turns] - sizes[200]) < 200  # the numbers gain a few digits, nothing else
    assert panel._tracker._totals.consumed == turns
    assert_matches_snapshot(panel.summary, session.snapshot())
