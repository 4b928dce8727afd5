"""Validation and application of one section's edits (DESIGN §2.3)."""

from __future__ import annotations

import pytest

from jupyter_hashline.hashline.apply import apply_edits
from jupyter_hashline.hashline.edits import Edit
from jupyter_hashline.hashline.errors import AnchorError

TEXT = "one\ntwo\nthree\nfour\nfive\n"


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (Edit.replace(2, 2, ["TWO"]), "one\nTWO\nthree\nfour\nfive\n"),
        (Edit.replace(2, 4, ["X"]), "one\nX\nfive\n"),
        (Edit.replace(5, 5, ["a", "b"]), "one\ntwo\nthree\nfour\na\nb\n"),
        (Edit.delete(1), "two\nthree\nfour\nfive\n"),
        (Edit.delete(1, 5), ""),
        (Edit.insert_before(1, ["zero"]), "zero\none\ntwo\nthree\nfour\nfive\n"),
        (Edit.insert_after(5, ["six"]), "one\ntwo\nthree\nfour\nfive\nsix\n"),
        (Edit.insert_after(2, ["2.5"]), "one\ntwo\n2.5\nthree\nfour\nfive\n"),
        (Edit.insert_head(["#!"]), "#!\none\ntwo\nthree\nfour\nfive\n"),
        (Edit.insert_tail(["end"]), "one\ntwo\nthree\nfour\nfive\nend\n"),
    ],
)
def test_every_verb(edit: Edit, expected: str) -> None:
    applied = apply_edits(TEXT, [edit])
    assert applied.text == expected
    assert applied.changed


def test_order_at_one_line_and_head_tail_last() -> None:
    edits = [
        Edit.insert_after(3, ["after-1"]),
        Edit.insert_tail(["tail-1"]),
        Edit.replace(3, 3, ["THREE"]),
        Edit.insert_before(3, ["before-1"]),
        Edit.insert_head(["head-1"]),
        Edit.insert_after(3, ["after-2"]),
        Edit.insert_before(3, ["before-2"]),
        Edit.insert_head(["head-2"]),
        Edit.insert_tail(["tail-2"]),
        Edit.insert_before(1, ["first"]),
        Edit.insert_after(5, ["last"]),
    ]
    applied = apply_edits(TEXT, edits)
    assert applied.text.split("\n") == [
        "head-1",
        "head-2",
        "first",
        "one",
        "two",
        "before-1",
        "before-2",
        "THREE",
        "after-1",
        "after-2",
        "four",
        "five",
        "last",
        "tail-1",
        "tail-2",
        "",
    ]


def test_line_numbers_never_shift_while_a_section_applies() -> None:
    edits = [Edit.insert_after(1, ["a", "b", "c"]), Edit.delete(2), Edit.replace(4, 4, ["FOUR"])]
    assert apply_edits(TEXT, edits).text == "one\na\nb\nc\nthree\nFOUR\nfive\n"


def test_inserts_around_the_ends_of_a_replaced_range() -> None:
    edits = [
        Edit.insert_after(4, ["after"]),
        Edit.replace(2, 4, ["R"]),
        Edit.insert_before(2, ["before"]),
    ]
    assert apply_edits(TEXT, edits).text == "one\nbefore\nR\nafter\nfive\n"


def test_inserts_around_a_deleted_line_land_where_it_was() -> None:
    edits = [Edit.delete(3), Edit.insert_before(3, ["b"]), Edit.insert_after(3, ["a"])]
    assert apply_edits(TEXT, edits).text == "one\ntwo\nb\na\nfour\nfive\n"


# -- validation: every problem at once ---------------------------------------------------------


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (Edit.replace(0, 0, ["x"]), "line numbers start at 1"),
        (Edit.insert_after(0, ["x"]), "line numbers start at 1"),
        (Edit.delete(4, 2), "the range is reversed; write `delete 2..4`"),
        (Edit.replace(5, 6, ["x"]), "line 6 is past the end (the file has 5 lines)"),
        (Edit.insert_before(9, ["x"]), "use `insert tail:`"),
    ],
)
def test_bad_anchors(edit: Edit, expected: str) -> None:
    with pytest.raises(AnchorError) as caught:
        apply_edits(TEXT, [edit], label="[f.py#ABCD]")
    message = str(caught.value)
    assert expected in message
    assert "[f.py#ABCD]" in message
    assert "Nothing was written" in message
    assert caught.value.status == 400


def test_all_problems_are_reported_at_once() -> None:
    edits = [Edit.replace(0, 0, ["x"]), Edit.delete(3, 1), Edit.insert_after(77, ["y"])]
    with pytest.raises(AnchorError) as caught:
        apply_edits(TEXT, edits)
    message = str(caught.value)
    assert "3 problem(s)" in message
    assert "`replace 0`" in message
    assert "`delete 3..1`" in message
    assert "`insert after 77`" in message


@pytest.mark.parametrize(
    ("edits", "expected"),
    [
        ([Edit.delete(2, 4), Edit.replace(4, 5, ["x"])], "both consume line 4"),
        ([Edit.replace(2, 2, ["a"]), Edit.replace(2, 2, ["b"])], "both consume line 2"),
        ([Edit.delete(1, 5), Edit.delete(2, 3)], "both consume line 2..3"),
        ([Edit.replace(2, 4, ["a"]), Edit.insert_after(3, ["b"])], "falls inside `replace 2..4`"),
        ([Edit.delete(2, 4), Edit.insert_before(4, ["b"])], "falls inside `delete 2..4`"),
    ],
)
def test_overlapping_edits(edits: list[Edit], expected: str) -> None:
    with pytest.raises(AnchorError, match="problem") as caught:
        apply_edits(TEXT, edits)
    assert expected in str(caught.value)


def test_empty_file_only_takes_head_and_tail() -> None:
    with pytest.raises(AnchorError, match="the file is empty"):
        apply_edits("", [Edit.replace(1, 1, ["x"])])
    assert apply_edits("", [Edit.insert_tail(["x"])]).text == "x\n"
    assert apply_edits("", [Edit.insert_head(["x"]), Edit.insert_tail(["y"])]).text == "x\ny\n"


# -- final newline -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "edit", "expected"),
    [
        ("a\nb", Edit.insert_tail(["c"]), "a\nb\nc"),
        ("a\nb", Edit.replace(2, 2, ["B"]), "a\nB"),
        ("a\nb", Edit.delete(2), "a"),
        ("a\nb", Edit.delete(1, 2), ""),
        ("a\nb", Edit.insert_head(["z"]), "z\na\nb"),
        ("a\nb\n", Edit.insert_tail(["c"]), "a\nb\nc\n"),
        ("a\nb\n", Edit.delete(1, 2), ""),
        ("a\n\n", Edit.replace(2, 2, ["x"]), "a\nx\n"),
        ("a", Edit.insert_after(1, ["b"]), "a\nb"),
    ],
)
def test_final_newline_state_is_kept(text: str, edit: Edit, expected: str) -> None:
    assert apply_edits(text, [edit]).text == expected


# -- repairs -----------------------------------------------------------------------------------

CODE = "def f():\n    x = 1\n    return x\n\nprint(f())\n"


def test_leading_echo_is_dropped_with_a_warning() -> None:
    applied = apply_edits(CODE, [Edit.replace(2, 2, ["def f():", "    x = 2"])])
    assert applied.text == "def f():\n    x = 2\n    return x\n\nprint(f())\n"
    [warning] = applied.warnings
    assert "`replace 2`" in warning and "line 1 just above" in warning and "dropped" in warning


def test_trailing_echo_of_two_lines_is_dropped() -> None:
    text = "a = 1\nb = 2\nc = 3\nd = 4\n"
    applied = apply_edits(text, [Edit.replace(1, 2, ["A = 1", "B = 2", "c = 3", "d = 4"])])
    assert applied.text == "A = 1\nB = 2\nc = 3\nd = 4\n"
    assert "lines 3..4 just below" in applied.warnings[0]


def test_insert_after_echoing_its_anchor_is_repaired() -> None:
    applied = apply_edits(CODE, [Edit.insert_after(2, ["    x = 1", "    y = 2"])])
    assert applied.text == "def f():\n    x = 1\n    y = 2\n    return x\n\nprint(f())\n"
    assert "dropped" in applied.warnings[0]


def test_echo_repair_can_be_turned_off_but_still_warns() -> None:
    applied = apply_edits(CODE, [Edit.replace(2, 2, ["def f():", "    x = 2"])], repair_echo=False)
    assert applied.text == "def f():\ndef f():\n    x = 2\n    return x\n\nprint(f())\n"
    assert "kept as written" in applied.warnings[0]


def test_whole_body_echo_is_ambiguous_and_kept() -> None:
    applied = apply_edits(CODE, [Edit.insert_after(2, ["    x = 1"])])
    assert applied.text.count("    x = 1") == 2
    assert "kept as written" in applied.warnings[0]


def test_echo_that_equals_the_replaced_lines_is_ambiguous() -> None:
    text = "x\nx\ny\n"
    applied = apply_edits(text, [Edit.replace(2, 3, ["x", "z"])])
    assert applied.text == "x\nx\nz\n"
    assert "kept as written" in applied.warnings[0]


def test_punctuation_echo_is_kept_and_blank_echo_is_silent() -> None:
    text = "if x {\n  a()\n}\n\nnext()\n"
    braces = apply_edits(text, [Edit.replace(2, 2, ["  b()", "}"])])
    assert braces.text == "if x {\n  b()\n}\n}\n\nnext()\n"
    assert "kept as written" in braces.warnings[0]
    blank = apply_edits("a\nb\n\nc\n", [Edit.replace(2, 2, ["B", ""])])
    assert blank.text == "a\nB\n\n\nc\n"
    assert blank.warnings == ()


def test_echo_of_a_line_another_edit_replaces_is_not_an_echo() -> None:
    applied = apply_edits(
        CODE, [Edit.replace(1, 1, ["def g():"]), Edit.replace(2, 2, ["def f():", "    y"])]
    )
    assert applied.text.startswith("def g():\ndef f():\n    y\n")
    assert applied.warnings == ()


def test_pasted_read_prefixes_are_stripped_only_when_every_row_has_one() -> None:
    stripped = apply_edits(TEXT, [Edit.replace(2, 3, ["2:TWO", "3:THREE"])])
    assert stripped.text == "one\nTWO\nTHREE\nfour\nfive\n"
    assert "read-view prefix like `2:`" in stripped.warnings[0]
    kept = apply_edits(TEXT, [Edit.replace(2, 3, ["2:TWO", "THREE"])])
    assert kept.text == "one\n2:TWO\nTHREE\nfour\nfive\n"
    assert kept.warnings == ()


# -- no-ops and bookkeeping --------------------------------------------------------------------


def test_noop_is_detected() -> None:
    applied = apply_edits(TEXT, [Edit.replace(2, 3, ["two", "three"])])
    assert not applied.changed
    assert applied.text == TEXT
    assert applied.first_changed_line is None


def test_an_unchanged_edit_among_real_changes_is_noted() -> None:
    applied = apply_edits(TEXT, [Edit.replace(2, 2, ["two"]), Edit.delete(5)])
    assert applied.changed
    assert applied.warnings == ("`replace 2` changed nothing: its rows equal the current lines.",)


def test_regions_first_changed_line_and_line_map() -> None:
    applied = apply_edits(
        TEXT, [Edit.insert_head(["h"]), Edit.delete(3), Edit.insert_after(4, ["x", "y"])]
    )
    assert applied.text == "h\none\ntwo\nfour\nx\ny\nfive\n"
    assert applied.regions == ((1, 1), (4, 3), (5, 6))
    assert applied.first_changed_line == 1
    assert [applied.map_line(n) for n in range(1, 6)] == [2, 3, None, 4, 7]


def test_lines_are_the_new_texts_lines_when_a_row_holds_a_newline() -> None:
    """A computed edit may carry a newline inside a row: `lines` then come from the text,
    never from the rows as given (the rows alone are checked, not the whole text)."""
    applied = apply_edits(TEXT, [Edit.replace(2, 2, ["a\nb"])])
    assert applied.text == "one\na\nb\nthree\nfour\nfive\n"
    assert list(applied.lines) == ["one", "a", "b", "three", "four", "five"]


def test_an_empty_last_row_without_a_final_newline_is_no_line() -> None:
    applied = apply_edits("x\ny", [Edit.replace(2, 2, [""])])
    assert applied.text == "x\n"
    assert list(applied.lines) == ["x"]
