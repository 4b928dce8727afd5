"""The byte-prefix invariant: a scripted 500-turn conversation, and breaks located to the byte."""

from __future__ import annotations

import itertools

import pytest
from testkit.zones import (
    SYSTEM,
    FakeClock,
    assistant,
    assistant_call,
    make_prefix,
    tool_result,
    user,
)

from jupyter_hashline.zones import (
    AppendLog,
    ByteInvariantError,
    PinnedPrefix,
    PrefixBreak,
    PrefixInvariantChecker,
    RebuildReason,
    RebuildRecord,
    ThreeZoneRequest,
    TurnScratch,
    Zone,
    ZoneSession,
    canonical_json,
    check_byte_prefix,
)

TURNS = 500
COMPACT_AT = 250


def notebook_view(turn: int) -> str:
    rows = "\n".join(f"{n}:value_{turn}_{n} = {n} * {turn}" for n in range(1, 9))
    return f"[analysis.ipynb#{turn % 65536:04X}]\n{rows}"


def test_500_turn_conversation_keeps_the_invariant_with_one_audited_compaction() -> None:
    clock = FakeClock()
    zs = ZoneSession(make_prefix(), clock=clock)  # strict: an unexcused break raises
    events: list[RebuildRecord] = []
    zs.log.subscribe(events.append)
    requests: list[ThreeZoneRequest] = []
    for turn in range(TURNS):
        zs.scratch.stage_user(f"Turn {turn}: tidy cell c{turn % 7}.")
        requests.append(zs.build_request(max_tokens=1024))
        zs.commit_user()
        zs.log.push(
            assistant_call(f"t{turn}", "notebook_read", "Reading first.", path="analysis.ipynb")
        )
        zs.log.push(tool_result(f"t{turn}", notebook_view(turn)))
        requests.append(zs.build_request(max_tokens=1024))
        zs.log.push(assistant(f"Cell c{turn % 7} tidied."))
        zs.end_turn()
        if turn == COMPACT_AT:
            kept = list(zs.log)[-4:]
            zs.log.rebuild(
                RebuildReason.AUTO_COMPACTION,
                [{"role": "user", "content": f"Summary of turns 0-{turn}."}, *kept],
                detail="context 80% full",
            )
    assert len(events) == 1 and zs.log.audit == (events[0],)
    assert events[0].reason is RebuildReason.AUTO_COMPACTION and events[0].after == 5
    inv = zs.invariant
    assert (inv.checks, inv.excused, inv.violations) == (2 * TURNS - 1, 1, 0)
    assert inv.last_excuse is not None and inv.last_excuse.startswith(
        "rebuild: automatic compaction"
    )

    breaks = [(i, check_byte_prefix(a, b)) for i, (a, b) in enumerate(itertools.pairwise(requests))]
    broken = [(i, brk) for i, brk in breaks if brk is not None]
    assert len(broken) == 1
    index, brk = broken[0]
    assert index == 2 * COMPACT_AT + 1  # the first request built after the rebuild
    assert brk.zone is Zone.LOG and brk.message_index == 0
    # the summary replaced the first message: the streams part just after its opening key
    assert brk.offset == requests[index].prefix_bytes + len(b'{"content":"')
    assert brk.earlier_excerpt.startswith('{"content":"Turn 0')
    assert all(brk is None for i, brk in breaks if i > index)  # it resumes after the compaction


@pytest.mark.parametrize("provider", ["openai", "deepseek"])
def test_wire_bytes_of_request_n_prefix_request_n_plus_1(provider: str) -> None:
    zs = ZoneSession(make_prefix())
    previous: bytes | None = None
    for turn in range(40):
        zs.scratch.stage_user(f"Turn {turn}")
        request = zs.build_request(max_tokens=64)
        wire = request.to_wire(provider)
        if previous is not None:
            assert wire.startswith(previous)
        zs.commit_user()
        zs.log.push(
            assistant_call(f"t{turn}", "notebook_edit", patch=f"[a#{turn:04X}]\ninsert tail:\n+x")
        )
        zs.log.push(tool_result(f"t{turn}", "updated"))
        zs.end_turn()
        after = zs.build_request(max_tokens=64)
        assert after.to_wire(provider).startswith(wire[: -len(request.tail())])
        previous = after.to_wire(provider)[: -len(after.tail())]


def test_anthropic_moves_the_breakpoint_but_keeps_the_message_bytes() -> None:
    log = AppendLog([user("one")])
    first = ThreeZoneRequest(make_prefix(), log).to_wire("anthropic")
    log.push(assistant("two"))
    second = ThreeZoneRequest(make_prefix(), log).to_wire("anthropic")
    assert b'"cache_control":{"type":"ephemeral"},"text":"one"' in first
    assert b'{"content":"one","role":"user"},' in second
    assert second.count(b"cache_control") == first.count(b"cache_control") == 3


def test_log_break_names_offset_zone_and_bytes() -> None:
    prefix = make_prefix()
    a = AppendLog([user("alpha"), assistant("beta")])
    b = AppendLog([user("alpha"), assistant("bexa"), user("more")])
    earlier, later = ThreeZoneRequest(prefix, a), ThreeZoneRequest(prefix, b)
    brk = check_byte_prefix(earlier, later)
    assert isinstance(brk, PrefixBreak)
    first = canonical_json(user("alpha")) + b"\n"
    within = (canonical_json(assistant("beta")) + b"\n").index(b"beta") + 2
    assert brk.offset == len(prefix.freeze().stream_bytes) + len(first) + within
    assert (brk.zone, brk.later_zone, brk.message_index) == (Zone.LOG, Zone.LOG, 1)
    assert (brk.earlier_byte, brk.later_byte) == (ord("t"), ord("x"))
    assert "byte " + str(brk.offset) in str(brk) and "log zone (message 1)" in str(brk)
    with pytest.raises(ByteInvariantError) as info:
        checker = PrefixInvariantChecker()
        checker.observe(earlier)
        checker.observe(later)
    assert info.value.breach == brk and "log.rebuild" in str(info.value)


def test_prefix_break_is_located_in_the_prefix_and_excused() -> None:
    log = AppendLog([user("x")])
    earlier = ThreeZoneRequest(make_prefix(), log)
    later = ThreeZoneRequest(PinnedPrefix(SYSTEM + " Be brief.", make_prefix().tools, "m"), log)
    brk = check_byte_prefix(earlier, later)
    assert brk is not None and brk.zone is Zone.PREFIX and brk.later_zone is Zone.PREFIX
    assert brk.message_index is None
    assert earlier.prefix.stream_bytes[: brk.offset] == later.prefix.stream_bytes[: brk.offset]
    checker = PrefixInvariantChecker()
    checker.observe(earlier)
    assert checker.observe(later) == brk
    assert (checker.excused, checker.violations, checker.last_excuse) == (1, 0, "prefix change")


def test_shorter_later_stream_ends_inside_the_earlier_log() -> None:
    log = AppendLog([user("a"), assistant("b"), user("c")])
    earlier = ThreeZoneRequest(make_prefix(), log)
    log.rebuild(RebuildReason.EDIT_ROLLBACK, [user("a")])
    scratch = TurnScratch()
    scratch.stage_user("retry")
    later = ThreeZoneRequest(make_prefix(), log, scratch)
    brk = check_byte_prefix(earlier, later)
    assert brk is not None and brk.message_index == 1
    assert brk.zone is Zone.LOG and brk.later_zone is Zone.SCRATCH  # later's scratch sits there
    checker = PrefixInvariantChecker()
    checker.observe(earlier)
    checker.observe(later)
    assert checker.excused == 1 and "edit rollback" in (checker.last_excuse or "")


def test_scratch_is_checked_only_when_asked() -> None:
    log = AppendLog([user("start")])
    scratch = TurnScratch()
    scratch.stage_user("do it")
    scratch.add_note("volatile note")
    earlier = ThreeZoneRequest(make_prefix(), log, scratch)
    log.push(scratch.take_pending_user() or user("?"))
    scratch.clear()
    later = ThreeZoneRequest(make_prefix(), log, scratch)
    assert check_byte_prefix(earlier, later) is None
    brk = check_byte_prefix(earlier, later, include_scratch=True)
    assert brk is not None and brk.zone is Zone.SCRATCH and brk.later_zone is Zone.LOG

    plain = TurnScratch()
    plain.stage_user("again")
    carried = ThreeZoneRequest(make_prefix(), log, plain)
    log.push(user("again"))
    assert (
        check_byte_prefix(carried, ThreeZoneRequest(make_prefix(), log), include_scratch=True)
        is None
    )


def test_rebuild_keeping_the_head_costs_nothing_before_the_change() -> None:
    log = AppendLog([user(f"m{i}") if i % 2 == 0 else assistant(f"m{i}") for i in range(64)])
    earlier = ThreeZoneRequest(make_prefix(), log)
    kept = list(log)[:40]
    log.rebuild(RebuildReason.MICRO_COMPACTION, [*kept, user("tool outputs elided")])
    brk = check_byte_prefix(earlier, ThreeZoneRequest(make_prefix(), log))
    assert brk is not None and brk.message_index == 40 and brk.zone is Zone.LOG


def test_requests_without_messages_refuse_to_render() -> None:
    request = ThreeZoneRequest(make_prefix(), AppendLog())
    with pytest.raises(ValueError, match="stage_user"):
        request.to_wire("openai")
    with pytest.raises(ValueError, match="unknown provider"):
        ThreeZoneRequest(make_prefix(), AppendLog([user("x")])).to_wire("gemini")
    with pytest.raises(ValueError, match="params may not set"):
        ThreeZoneRequest(make_prefix(), AppendLog(), None, model="other")
