"""The plain text rule for stale edits: a three-way line merge that fails closed, and the
stricter neighbour rule it falls back to when the texts are too different to align exactly."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_hashline.hashline import threeway
from jupyter_hashline.hashline.filesystem import Footprint, LineRebase, RebaseRefusal
from jupyter_hashline.hashline.recovery import aligned_pairs, carry_lines, rebase_by_text

SNAPSHOT = "".join(f"line {n}\n" for n in range(1, 11))


def lines_of(text: str) -> list[str]:
    return text.splitlines()


def test_lines_added_above_move_every_anchor_by_one_offset() -> None:
    live = "new a\nnew b\n" + SNAPSHOT
    outcome = rebase_by_text(SNAPSHOT, live, {4, 5, 6})
    assert isinstance(outcome, LineRebase)
    assert dict(outcome.mapping) == {4: 6, 5: 7, 6: 8}
    assert outcome.notes == ("lines 4..6 moved to 6..8 since your read",)


def test_changes_elsewhere_keep_offset_zero() -> None:
    live = SNAPSHOT.replace("line 9\n", "line nine\n")
    outcome = rebase_by_text(SNAPSHOT, live, {2})
    assert isinstance(outcome, LineRebase)
    assert dict(outcome.mapping) == {2: 2}
    assert "did not move" in outcome.notes[0]


def test_removed_lines_above_move_anchors_up() -> None:
    live = SNAPSHOT.replace("line 1\nline 2\n", "")
    outcome = rebase_by_text(SNAPSHOT, live, {7})
    assert isinstance(outcome, LineRebase)
    assert dict(outcome.mapping) == {7: 5}


def test_an_edited_anchor_is_refused_and_the_change_is_marked() -> None:
    live = "top\n" + SNAPSHOT.replace("line 5\n", "line FIVE\n")
    outcome = rebase_by_text(SNAPSHOT, live, {5})
    assert isinstance(outcome, RebaseRefusal)
    assert "line 5 itself was edited" in outcome.reason
    assert 6 in outcome.changed_live_lines and 1 in outcome.changed_live_lines
    assert 6 in outcome.context_live_lines
    assert set(outcome.context_live_lines) <= set(range(1, 12))


def test_a_deleted_anchor_is_refused() -> None:
    live = SNAPSHOT.replace("line 5\n", "")
    outcome = rebase_by_text(SNAPSHOT, live, {5})
    assert isinstance(outcome, RebaseRefusal)
    assert "line 5 itself was deleted" in outcome.reason


def test_a_changed_neighbour_does_not_conflict() -> None:
    live = SNAPSHOT.replace("line 4\n", "line 4 changed\n")
    outcome = rebase_by_text(SNAPSHOT, live, Footprint(frozenset({5})))
    assert isinstance(outcome, LineRebase)
    assert dict(outcome.mapping) == {5: 5}


def test_plain_line_numbers_guard_both_gaps() -> None:
    """Without a footprint, a line is read as if the edit inserted on both sides of it."""
    live = SNAPSHOT.replace("line 5\n", "line 5\nbetween\n")
    outcome = rebase_by_text(SNAPSHOT, live, {5})
    assert isinstance(outcome, RebaseRefusal)
    assert "lines were added between lines 5 and 6, where your edit inserts" in outcome.reason
    replaced_only = rebase_by_text(SNAPSHOT, live, Footprint(frozenset({5})))
    assert isinstance(replaced_only, LineRebase)


def test_anchors_that_moved_by_different_amounts_each_map() -> None:
    live = SNAPSHOT.replace("line 5\n", "line 5\ninserted\n")
    outcome = rebase_by_text(SNAPSHOT, live, Footprint(frozenset({2, 8})))
    assert isinstance(outcome, LineRebase)
    assert dict(outcome.mapping) == {2: 2, 8: 9}
    assert "each was found unchanged" in outcome.notes[0]


def test_inserts_at_the_file_edge_need_the_edge_unchanged() -> None:
    at_top = Footprint(frozenset({1}), before=frozenset({1}))
    outcome = rebase_by_text(SNAPSHOT, "header\n" + SNAPSHOT, at_top)
    assert isinstance(outcome, RebaseRefusal)
    assert "lines were added before line 1 (the start)" in outcome.reason
    at_end = Footprint(frozenset({10}), after=frozenset({10}))
    refused = rebase_by_text(SNAPSHOT, SNAPSHOT + "footer\n", at_end)
    assert isinstance(refused, RebaseRefusal)
    assert "lines were added after line 10 (the end)" in refused.reason
    tail_ok = rebase_by_text(SNAPSHOT, "header\n" + SNAPSHOT, at_end)
    assert isinstance(tail_ok, LineRebase)
    assert dict(tail_ok.mapping) == {10: 11}
    replace_first = rebase_by_text(SNAPSHOT, "header\n" + SNAPSHOT, Footprint(frozenset({1})))
    assert isinstance(replace_first, LineRebase)


def test_texts_too_different_to_align_fall_back_to_the_neighbour_rule() -> None:
    """Past the alignment budget, the stricter rule: neighbours unchanged, one offset."""
    snapshot = "".join(f"keep {n}\n" for n in range(400))
    live = "".join(f"new {n}\n" for n in range(5000)) + snapshot.replace("keep 7\n", "k7\n")
    assert threeway.align(snapshot.splitlines(), live.splitlines()) is None
    far = rebase_by_text(snapshot, live, Footprint(frozenset({300})))
    assert isinstance(far, LineRebase) and dict(far.mapping) == {300: 5300}
    near = rebase_by_text(snapshot, live, Footprint(frozenset({9})))
    assert isinstance(near, RebaseRefusal)
    assert "the line next to line 9 (line 8) changed" in near.reason


def test_repeated_lines_map_only_by_their_surroundings() -> None:
    snapshot = "x\ny\nx\ny\nx\n"
    live = "x\ny\nx\ny\nx\ny\nx\n"
    outcome = rebase_by_text(snapshot, live, {3})
    if isinstance(outcome, LineRebase):
        target = outcome.mapping[3]
        live_lines = lines_of(live)
        assert live_lines[target - 2 : target + 1] == ["y", "x", "y"]
    else:
        assert outcome.reason


def test_no_anchors_is_a_trivial_rebase() -> None:
    outcome = rebase_by_text(SNAPSHOT, "other\n", set())
    assert isinstance(outcome, LineRebase)
    assert dict(outcome.mapping) == {}


_LINE_POOL = st.sampled_from(["a", "b", "c", "x = 1", "", "def f():", "    return 1"])


@given(
    old=st.lists(_LINE_POOL, max_size=40),
    new=st.lists(_LINE_POOL, max_size=40),
    seen=st.sets(st.integers(1, 40)),
)
def test_carried_lines_pair_equal_text_in_order(
    old: list[str], new: list[str], seen: set[int]
) -> None:
    pairs = aligned_pairs(old, new)
    assert all(old[i] == new[j] for i, j in pairs)
    assert pairs == sorted(pairs) and len({j for _, j in pairs}) == len(pairs)
    assert all(b[0] > a[0] and b[1] > a[1] for a, b in itertools.pairwise(pairs))
    before, after = "".join(f"{x}\n" for x in old), "".join(f"{x}\n" for x in new)
    carried = carry_lines(before, after, seen)
    if before == after:
        assert carried == frozenset(seen)
    else:
        assert carried == {j + 1 for i, j in pairs if i + 1 in seen}


@settings(max_examples=500)  # a shortcut's bugs hide in rare shapes (this found one at 100)
@given(
    old=st.lists(_LINE_POOL, max_size=40),
    new=st.lists(_LINE_POOL, max_size=40),
    ends=st.tuples(st.booleans(), st.booleans()),
    seen=st.sets(st.integers(-1, 42), max_size=6),
)
def test_lines_in_the_equal_ends_carry_as_the_alignment_carries_them(
    old: list[str], new: list[str], ends: tuple[bool, bool], seen: set[int]
) -> None:
    """Lines in the texts' equal head and tail are carried without aligning the middle (the
    shortcut compares characters); the answer is the alignment's, with or without a final
    line break, for lines in range or not."""
    before = "\n".join(old) + ("\n" if ends[0] and old else "")
    after = "\n".join(new) + ("\n" if ends[1] and new else "")
    carried = carry_lines(before, after, seen)
    if before == after:
        assert carried == frozenset(seen)
    else:
        pairs = aligned_pairs(lines_of(before), lines_of(after))
        assert carried == {j + 1 for i, j in pairs if i + 1 in seen}


@pytest.mark.parametrize(
    ("before", "after", "seen"),
    [
        ("x\n", "yx\n", {1}),  # the equal tail starts a line in one text only
        ("a\na\na\n\na", "b\na", {4}),  # an empty line's break is the end of another line
    ],
)
def test_a_line_the_equal_tail_cuts_into_is_not_carried(
    before: str, after: str, seen: set[int]
) -> None:
    """Found by the property below: a line counted whole in the equal tail of one text was
    part of a changed line in the other, and was carried onto it."""
    assert carry_lines(before, after, seen) == frozenset()


def test_a_far_change_carries_the_seen_lines_by_the_equal_ends() -> None:
    before = "".join(f"row {n}\n" for n in range(1, 2_001))
    after = before.replace("row 3\n", "row 3\ntyped\n").replace("row 1999\n", "")
    assert carry_lines(before, after, {1, 2, 3, 2000, 2001}) == {1, 2, 3, 2000}  # the ends
    assert carry_lines(before, after, {4, 1000, 1998}) == {5, 1001, 1999}  # the middle too


@given(lines=st.lists(st.text("abc", min_size=1, max_size=3), max_size=30), at=st.integers(0, 30))
def test_an_insertion_carries_every_line_around_it(lines: list[str], at: int) -> None:
    before = "".join(f"{x} {n}\n" for n, x in enumerate(lines))  # unique lines
    rows = before.splitlines(keepends=True)
    at = min(at, len(rows))
    after = "".join([*rows[:at], "inserted\n", *rows[at:]])
    carried = carry_lines(before, after, range(1, len(rows) + 1))
    assert carried == {n if n <= at else n + 1 for n in range(1, len(rows) + 1)}
