"""What each benchmark is given by `python -m bench --quick` (bench/__main__.py)."""

from __future__ import annotations

from bench.__main__ import QUICK_REPEATS, QUICK_SAFETY_SAMPLE, module_args


def test_quick_runs_give_each_benchmark_its_own_repeats() -> None:
    assert module_args("cold", [], quick=True) == ["--repeats", QUICK_REPEATS]
    assert module_args("cold", ["--repeats", "9"], quick=True) == ["--repeats", "9"]
    # the room row keeps 15 repeats, whatever was asked, and keeps the other arguments; only
    # its row with targets runs
    assert module_args("server_room", ["--repeats", "7", "--smoke"], quick=True) == [
        "--smoke",
        "--repeats",
        "15",
        "--targeted",
    ]
    # the stale-edit table: hashline's columns on its declared sample (bench/safety.py)
    assert module_args("safety", ["--repeats", "7"], quick=True) == [
        "--peer", "model", "--sample", QUICK_SAFETY_SAMPLE,
    ]  # fmt: skip
    assert module_args("safety", [], quick=False) == []  # the full run judges every scenario
    assert module_args("server_room", ["--repeats", "7"], quick=False) == ["--repeats", "7"]


def test_a_quick_run_over_its_five_minutes_says_so() -> None:
    from bench.__main__ import QUICK_LIMIT_S, _over_quick

    assert QUICK_LIMIT_S == 300
    assert _over_quick(QUICK_LIMIT_S + 1, quick=True) == "; over the quick mode's 5 minutes"
    assert _over_quick(QUICK_LIMIT_S - 1, quick=True) == ""
    assert _over_quick(3 * QUICK_LIMIT_S, quick=False) == ""  # the full run promises no time


def test_the_quick_safety_sample_is_declared_deterministic_and_covers_every_kind() -> None:
    """The sample a quick run judges (bench/safety.py `quick_sample`): the same every time,
    half generated and half corpus, and every class, agent edit and person change of the
    smoke set's scenarios in it."""
    from bench.safety import build_scenarios, quick_sample

    scenarios, _ = build_scenarios(smoke=True)
    size = len(scenarios) // 3
    picked = quick_sample(scenarios, size)
    assert picked == quick_sample(scenarios, size) and len(picked) == size
    corpus = sum(s.label.startswith("corpus") for s in scenarios)
    assert sum(s.label.startswith("corpus") for s in picked) == min(corpus, size - size // 2)
    for kind in (lambda s: s.conflict, lambda s: s.agent.kind, lambda s: s.person_kind):
        assert {kind(s) for s in picked} == {kind(s) for s in scenarios}
