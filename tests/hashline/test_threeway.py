"""The three-way line merge: exact facts about every minimal diff, and the merge rule.

`align` is checked against a brute-force enumeration of every longest common subsequence
alignment (testkit/lcs_reference.py); `merge_lines` through its rules, one case each, and
through the patcher as a property: a stale edit that lands put every named line where every
minimal diff puts it, and never inserted into a gap the person's change filled."""

from __future__ import annotations

import asyncio

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from testkit.edit_strategies import FILE_LINES, edit_scripts, line_changes
from testkit.lcs_reference import Pairs, all_alignments, fates
from testkit.reference_model import reference, stale_apply

from jupyter_hashline.hashline.edits import Edit, EditOp
from jupyter_hashline.hashline.filesystem import Footprint, LineRebase, RebaseRefusal
from jupyter_hashline.hashline.threeway import align, merge_lines

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SMALL = st.lists(st.sampled_from(["a", "b", "c", ""]), max_size=9)


@SETTINGS
@given(SMALL, SMALL)
def test_align_states_exactly_what_every_minimal_diff_agrees_on(
    snap: list[str], live: list[str]
) -> None:
    alignment = align(snap, live)
    assert alignment is not None
    every = all_alignments(snap, live)
    for index in range(len(snap)):
        seen = fates(every, index)
        if alignment.partner[index] is not None:
            assert seen == {alignment.partner[index]}
        elif alignment.deleted[index]:
            assert seen == {None}
        else:
            assert len(seen) > 1


def lines(text: str) -> list[str]:
    return list(text)


def merged(snap: str, live: str, footprint: Footprint) -> LineRebase | RebaseRefusal:
    outcome = merge_lines(lines(snap), lines(live), footprint, context_rows=2)
    assert outcome is not None
    return outcome


def named(*numbers: int, after: tuple[int, ...] = (), before: tuple[int, ...] = ()) -> Footprint:
    return Footprint(frozenset(numbers), frozenset(after), frozenset(before))


def test_a_change_on_the_next_line_does_not_conflict_but_the_same_line_does() -> None:
    applied = merged("abcde", "abXde", named(2))
    assert isinstance(applied, LineRebase) and dict(applied.mapping) == {2: 2}
    refused = merged("abcde", "abXde", named(3))
    assert isinstance(refused, RebaseRefusal)
    assert refused.reason == "line 3 itself was edited" and refused.changed_live_lines == (3,)


def test_two_insertions_into_one_gap_overlap() -> None:
    refused = merged("abcde", "abcXde", named(3, after=(3,)))
    assert isinstance(refused, RebaseRefusal)
    assert "lines were added between lines 3 and 4" in refused.reason
    before_next = merged("abcde", "abcXde", named(4, before=(4,)))
    assert isinstance(before_next, RebaseRefusal)
    elsewhere = merged("abcde", "abcXde", named(2, after=(2,)))
    assert isinstance(elsewhere, LineRebase)


def test_inserting_next_to_a_line_the_person_replaced_or_deleted_lands_beside_it() -> None:
    replaced = merged("abcde", "abcYe", named(3, after=(3,)))
    assert isinstance(replaced, LineRebase) and dict(replaced.mapping) == {3: 3}
    deleted = merged("abcde", "abde", named(4, before=(4,)))
    assert isinstance(deleted, LineRebase) and dict(deleted.mapping) == {4: 3}


def test_repeated_lines_that_align_two_ways_are_refused() -> None:
    refused = merged("aab", "ab", named(1))
    assert isinstance(refused, RebaseRefusal)
    assert "repeats nearby and the changes around it align more than one way" in refused.reason


def test_a_moved_line_next_to_the_edit_is_refused_and_far_from_it_is_not() -> None:
    refused = merged("abcd", "bcda", named(2, before=(2,)))
    assert isinstance(refused, RebaseRefusal)
    assert "lines right next to line 2 were moved" in refused.reason
    far = merged("abcdefg", "bcdefga", named(5))
    assert isinstance(far, LineRebase) and dict(far.mapping) == {5: 4}


def test_numbers_follow_the_slice_and_the_window_stays_inside_it() -> None:
    source = [f"row {n}" for n in range(200)]
    live = list(source)
    live[150] = "row 150 changed"
    refused = merge_lines(source, live, named(161), context_rows=20, snap_first=11, live_first=31)
    assert isinstance(refused, RebaseRefusal)
    assert refused.reason == "line 161 itself was edited"
    assert refused.changed_live_lines == (181,)
    assert refused.context_live_lines == tuple(range(161, 202))
    edge = merge_lines(source, live, named(11 + 150, 12), context_rows=20, snap_first=11)
    assert isinstance(edge, RebaseRefusal)
    assert min(edge.context_live_lines) >= 1


def test_over_budget_returns_none_for_the_caller_to_decide() -> None:
    assert merge_lines(list("abc"), list("xyzabc"), named(1), context_rows=2, budget=5) is None


# -- the property, through the patcher ---------------------------------------------------------


@st.composite
def stale_cases(draw: st.DrawFn) -> tuple[list[str], list[str], list[Edit]]:
    snap = draw(st.lists(FILE_LINES, min_size=1, max_size=9))
    if draw(st.booleans()):
        live = draw(line_changes(snap))
    else:  # another writer added lines above and/or below
        above = draw(st.lists(FILE_LINES, max_size=3))
        live = above + snap + draw(st.lists(FILE_LINES, max_size=3))
    assume(live != snap)
    script = draw(edit_scripts(len(snap), edge=False).filter(bool))
    return snap, live, script


def _allowed_results(snap: list[str], live: list[str], script: list[Edit]) -> set[str] | None:
    """What a landed edit may produce: the edit moved by the one mapping every minimal diff
    agrees on; None when no such mapping exists (then the edit must not land)."""
    try:
        every = all_alignments(snap, live)
    except OverflowError:
        return None
    mapping: dict[int, int] = {}
    for line in {n for e in script for n in e.anchors}:
        seen = fates(every, line - 1)
        if len(seen) != 1 or None in seen:
            return None
        mapping[line] = next(iter(seen)) + 1  # type: ignore[operator]
    sides = {EditOp.INSERT_AFTER: +1, EditOp.INSERT_BEFORE: -1}
    for edit in script:
        step = sides.get(edit.op)
        if step and not _gap_free(every, edit.start, mapping, (len(snap), len(live)), step):
            return None
    if any(mapping[e.end] - mapping[e.start] != e.end - e.start for e in script):
        return None  # a range the person split apart
    moved = [e.with_lines(mapping[e.start], mapping[e.end]) for e in script]
    return {reference(as_text(live), moved)}


def as_text(rows: list[str]) -> str:
    return "".join(f"{row}\n" for row in rows)


def _gap_free(
    every: set[Pairs], line: int, mapping: dict[int, int], sizes: tuple[int, int], step: int
) -> bool:
    """No person's insertion between `line` and its neighbour on the `step` side, in any
    minimal diff (the neighbour stays next to it, or is deleted by every minimal diff)."""
    n, m = sizes
    target = mapping[line] - 1
    neighbour = line - 1 + step
    if not 0 <= neighbour < n:
        return target + step in (-1, m)
    seen = fates(every, neighbour)
    return seen in ({target + step}, {None})


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stale_cases())
def test_a_stale_edit_lands_only_where_every_minimal_diff_agrees(
    case: tuple[list[str], list[str], list[Edit]],
) -> None:
    snap, live, script = case
    snapshot_text, live_text = as_text(snap), as_text(live)
    landed, result = asyncio.run(stale_apply(snapshot_text, live_text, script))
    if not landed:
        assert result == live_text
        return
    allowed = _allowed_results(snap, live, script)
    assert allowed is not None, "landed although some named line is not provably the same line"
    assert result in allowed
