"""Line runs: the one form of a set of lines the SQLite store keeps seen lines in."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import given
from hypothesis import strategies as st

from jupyter_hashline.hashline.line_runs import lines_of, merge_runs, runs_of

LINES = st.lists(st.integers(min_value=1, max_value=200), max_size=80)


def canonical(runs: list[tuple[int, int]]) -> bool:
    """Sorted, each first <= last, and a gap of at least one line between two runs."""
    return all(a <= b for a, b in runs) and all(a[1] + 1 < b[0] for a, b in pairwise(runs))


def test_a_whole_range_is_one_run_without_listing_it() -> None:
    assert runs_of(range(1, 100_001)) == [(1, 100_000)]
    assert runs_of(range(5, 5)) == []
    assert runs_of(range(1, 10, 2)) == [(1, 1), (3, 3), (5, 5), (7, 7), (9, 9)]


def test_runs_of_joins_consecutive_lines_in_any_order() -> None:
    assert runs_of([7, 3, 4, 3, 5, 9, 10]) == [(3, 5), (7, 7), (9, 10)]
    assert runs_of([]) == []


@given(LINES)
def test_runs_keep_exactly_the_lines(lines: list[int]) -> None:
    runs = runs_of(lines)
    assert canonical(runs)
    assert lines_of(runs) == frozenset(lines)


@given(LINES, LINES)
def test_merging_runs_is_the_union_in_its_one_form(a: list[int], b: list[int]) -> None:
    merged = merge_runs(runs_of(a), runs_of(b))
    assert merged == runs_of(a + b)
    assert canonical(merged)


def test_merging_joins_overlapping_and_adjacent_runs() -> None:
    assert merge_runs([(1, 3), (10, 12)], [(4, 6), (11, 20)]) == [(1, 6), (10, 20)]
    assert merge_runs([(1, 10)], [(2, 3)]) == [(1, 10)]


@given(st.sets(st.integers(min_value=1, max_value=2_000), max_size=1_500))
def test_runs_of_a_large_set_split_in_halves_keep_exactly_the_lines(lines: set[int]) -> None:
    runs = runs_of(lines)
    assert canonical(runs)
    assert lines_of(runs) == frozenset(lines)


def test_almost_every_line_is_a_few_runs() -> None:
    lines = set(range(1, 110_001)) - {500, 501, 90_000}
    assert runs_of(lines) == [(1, 499), (502, 89_999), (90_001, 110_000)]
