"""What each benchmark is given by `python -m bench --quick` (bench/__main__.py)."""

from __future__ import annotations

from bench.__main__ import QUICK_REPEATS, module_args


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
    assert module_args("safety", ["--repeats", "7"], quick=True) == ["--peer", "model"]
    assert module_args("server_room", ["--repeats", "7"], quick=False) == ["--repeats", "7"]


def test_a_quick_run_over_its_five_minutes_says_so() -> None:
    from bench.__main__ import QUICK_LIMIT_S, _over_quick

    assert QUICK_LIMIT_S == 300
    assert _over_quick(QUICK_LIMIT_S + 1, quick=True) == "; over the quick mode's 5 minutes"
    assert _over_quick(QUICK_LIMIT_S - 1, quick=True) == ""
    assert _over_quick(3 * QUICK_LIMIT_S, quick=False) == ""  # the full run promises no time
