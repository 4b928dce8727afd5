"""The plain text rule for stale edits: one uniform offset, or a refusal (DESIGN §2.5)."""

from __future__ import annotations

from jupyter_hashline.hashline.filesystem import LineRebase, RebaseRefusal
from jupyter_hashline.hashline.recovery import rebase_by_text

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


def test_a_changed_neighbour_is_refused() -> None:
    live = SNAPSHOT.replace("line 4\n", "line 4 changed\n")
    outcome = rebase_by_text(SNAPSHOT, live, {5})
    assert isinstance(outcome, RebaseRefusal)
    assert "the line next to line 5 (line 4) changed" in outcome.reason
    assert outcome.changed_live_lines == (4,)


def test_anchors_that_moved_by_different_amounts_are_refused() -> None:
    live = SNAPSHOT.replace("line 5\n", "line 5\ninserted\n")
    outcome = rebase_by_text(SNAPSHOT, live, {2, 8})
    assert isinstance(outcome, RebaseRefusal)
    assert "moved by different amounts (line 2 by +0, line 8 by +1)" in outcome.reason
    assert outcome.changed_live_lines == (6,)


def test_an_anchor_at_the_file_edge_needs_the_edge_unchanged() -> None:
    outcome = rebase_by_text(SNAPSHOT, "header\n" + SNAPSHOT, {1})
    assert isinstance(outcome, RebaseRefusal)
    assert "added above line 1" in outcome.reason
    at_end = rebase_by_text(SNAPSHOT, SNAPSHOT + "footer\n", {10})
    assert isinstance(at_end, RebaseRefusal)
    tail_ok = rebase_by_text(SNAPSHOT, "header\n" + SNAPSHOT, {10})
    assert isinstance(tail_ok, LineRebase)
    assert dict(tail_ok.mapping) == {10: 11}


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
