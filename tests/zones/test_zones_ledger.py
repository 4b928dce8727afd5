"""CacheLedger: the three usage shapes, expected reuse, every miss cause, hit ratios."""

from __future__ import annotations

from typing import Any

import pytest
from testkit.zones import TOOLS, FakeClock, assistant, make_prefix, user

from jupyter_hashline.zones import (
    CacheLedger,
    MessageFormatError,
    MissCause,
    Provider,
    RebuildReason,
    Usage,
    ZoneSession,
    normalize_usage,
)

BIG = "notebook text " * 600  # ~8.4 KB: ~2,100 tokens at 4 bytes a token


def anthropic_usage(total: int, cached: int, written: int = 0) -> dict[str, Any]:
    return {
        "input_tokens": total - cached - written,
        "cache_read_input_tokens": cached,
        "cache_creation_input_tokens": written,
        "output_tokens": 12,
    }


def test_anthropic_usage_counts_all_three_input_parts() -> None:
    usage = normalize_usage(anthropic_usage(5000, 3000, 1500))
    assert usage == Usage(Provider.ANTHROPIC, 5000, 3000, 1500, 12)
    assert usage.uncached_tokens == 2000
    nulls = {
        "input_tokens": 7,
        "cache_read_input_tokens": None,
        "cache_creation_input_tokens": None,
    }
    assert normalize_usage(nulls) == Usage(Provider.ANTHROPIC, 7, 0, 0, 0)


def test_openai_usage_reads_cached_tokens_from_the_details() -> None:
    usage = {
        "prompt_tokens": 2048,
        "completion_tokens": 30,
        "prompt_tokens_details": {"cached_tokens": 1920},
    }
    assert normalize_usage(usage) == Usage(Provider.OPENAI, 2048, 1920, 0, 30)
    assert normalize_usage({"prompt_tokens": 10, "completion_tokens": 1}).cached_tokens == 0
    no_details = {"prompt_tokens": 10, "prompt_tokens_details": None}
    assert normalize_usage(no_details, "openai").cached_tokens == 0


def test_deepseek_usage_adds_hits_and_misses() -> None:
    usage = {
        "prompt_tokens": 1500,
        "prompt_cache_hit_tokens": 1280,
        "prompt_cache_miss_tokens": 220,
        "completion_tokens": 9,
    }
    assert normalize_usage(usage) == Usage(Provider.DEEPSEEK, 1500, 1280, 0, 9)
    assert normalize_usage(usage, provider="deepseek") == normalize_usage(usage)


def test_unrecognised_usage_asks_for_the_provider() -> None:
    with pytest.raises(MessageFormatError, match="provider="):
        normalize_usage({"tokens": 3})


def conversation(clock: FakeClock, **ledger: Any) -> ZoneSession:
    zs = ZoneSession(make_prefix(), clock=clock, ledger=CacheLedger(clock=clock, **ledger))
    zs.log.push(user(BIG))
    zs.log.push(assistant("Read it."))
    return zs


def warm(zs: ZoneSession) -> int:
    """Record a cold first request; return its estimated stable tokens (prefix + log)."""
    first = zs.build_request(max_tokens=64)
    turn = zs.record_usage(
        first, anthropic_usage(first.stream_bytes // 4, 0, first.stream_bytes // 4)
    )
    assert turn.cold and not turn.miss and turn.cause is None
    assert turn.expected_reusable_tokens == 0
    zs.log.push(user("next question"))
    return (first.prefix_bytes + first.log_bytes) // 4


def test_a_full_hit_is_not_a_miss_and_expected_reuse_is_local() -> None:
    clock = FakeClock()
    zs = conversation(clock)
    stable = warm(zs)
    clock.advance(10)
    second = zs.build_request(max_tokens=64)
    turn = zs.record_usage(second, anthropic_usage(second.stream_bytes // 4, stable))
    assert not turn.miss and turn.cause is None and not turn.cold
    assert turn.potential_tokens == stable
    assert turn.expected_reusable_tokens == turn.shared_tokens >= stable
    assert turn.elapsed_s == 10


@pytest.mark.parametrize(
    ("change", "cause"),
    [
        ("system", MissCause.SYSTEM_CHANGED),
        ("tools", MissCause.TOOLS_CHANGED),
        ("reorder", MissCause.TOOLS_CHANGED),
        ("model", MissCause.MODEL_CHANGED),
        ("rebuild", MissCause.MESSAGES_REWRITTEN),
        ("ttl", MissCause.TTL_EXPIRED),
        ("nothing", MissCause.UNKNOWN),
    ],
)
def test_every_miss_gets_its_cause(change: str, cause: MissCause) -> None:
    clock = FakeClock()
    zs = conversation(clock)
    warm(zs)
    prefix = None
    if change == "system":
        prefix = make_prefix(system="You edit notebooks. Today is 2026-03-02.")
    elif change == "tools":
        prefix = make_prefix(tools=[{**TOOLS[0], "description": "Read (v2)."}, *TOOLS[1:]])
    elif change == "reorder":
        prefix = make_prefix(tools=list(reversed(TOOLS)))
    elif change == "model":
        prefix = make_prefix(model="claude-opus-4-1")
    elif change == "rebuild":
        zs.log.rebuild(RebuildReason.MANUAL_COMPACTION, [user("Summary."), user("next question")])
    elif change == "ttl":
        clock.advance(301)
    clock.advance(1)
    request = zs.build_request(prefix, max_tokens=64)
    turn = zs.record_usage(request, anthropic_usage(request.stream_bytes // 4, 0))
    assert turn.miss and turn.cause is cause
    assert turn.causes[0] is cause
    if change in ("ttl", "nothing"):
        assert turn.shared_tokens >= turn.potential_tokens  # locally the prefix was reusable
    if change == "ttl":
        assert turn.expected_reusable_tokens == 0
    if change in ("system", "tools", "model", "rebuild"):
        assert turn.shared_tokens < turn.potential_tokens


def test_below_minimum() -> None:
    clock = FakeClock()
    zs = ZoneSession(make_prefix(), clock=clock, ledger=CacheLedger(clock=clock, min_tokens=4096))
    zs.log.push(user(BIG))
    warm(zs)
    request = zs.build_request(max_tokens=64)
    turn = zs.record_usage(request, anthropic_usage(request.stream_bytes // 4, 0))
    assert turn.miss and turn.causes == (MissCause.BELOW_MINIMUM,)
    assert turn.expected_reusable_tokens == 0 < turn.shared_tokens < 4096


def test_drift_and_expiry_are_both_named_structural_first() -> None:
    clock = FakeClock()
    zs = conversation(clock)
    warm(zs)
    clock.advance(600)
    request = zs.build_request(make_prefix(model="other"), max_tokens=64)
    turn = zs.record_usage(request, anthropic_usage(request.stream_bytes // 4, 0))
    assert turn.causes == (MissCause.MODEL_CHANGED, MissCause.TTL_EXPIRED)


def test_hit_ratio_per_turn_and_per_session_counts_the_cold_request() -> None:
    clock = FakeClock()
    zs = conversation(clock)
    ledger = zs.ledger
    usages = [
        {"prompt_tokens": 4000, "prompt_tokens_details": {"cached_tokens": 0}},
        {"prompt_tokens": 4200, "prompt_tokens_details": {"cached_tokens": 3968}},
        {"prompt_tokens": 4400, "prompt_tokens_details": {"cached_tokens": 4096}},
    ]
    for usage in usages:
        zs.record_usage(zs.build_request(), usage)
        zs.log.push(user("more"))
    assert [turn.hit_ratio for turn in ledger.turns] == [0.0, 3968 / 4200, 4096 / 4400]
    assert ledger.hit_ratio() == pytest.approx((3968 + 4096) / (4000 + 4200 + 4400))
    assert [turn.provider for turn in ledger.turns] == [Provider.OPENAI] * 3
    data = ledger.to_json()
    assert data["requests"] == 3 and len(data["turns"]) == 3
    assert data["turns"][1]["hit_ratio"] == pytest.approx(3968 / 4200)


def test_miss_cause_counts() -> None:
    clock = FakeClock()
    zs = conversation(clock)
    warm(zs)
    for minute in range(3):
        clock.advance(60)
        request = zs.build_request(make_prefix(system=f"time {minute}"))
        zs.record_usage(request, anthropic_usage(request.stream_bytes // 4, 0))
    assert zs.ledger.miss_causes() == {"system_changed": 3}
    assert zs.ledger.to_json()["misses"] == 3
