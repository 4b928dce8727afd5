"""The model-mistake repairs and refusals of forgive.py, through `apply_edits`.

Each repair must show: the text as meant, and a note naming it. Each refusal: the error kind,
a message that says what to resend. Without a finder (not Python), no indentation claim.
"""

from __future__ import annotations

import pytest

from jupyter_hashline.hashline import AmbiguousEditError, finder_for_path
from jupyter_hashline.hashline.apply import apply_edits
from jupyter_hashline.hashline.edits import Edit

SOURCE = "def f(x):\n    if x:\n        return 1\n    return 0\n"
PY = finder_for_path("m.py")


def applied(edits: list[Edit], text: str = SOURCE) -> tuple[str, tuple[str, ...]]:
    result = apply_edits(text, edits, finder=PY)
    return result.text, result.warnings


def test_a_body_whose_indentation_was_dropped_is_re_indented_with_a_note() -> None:
    text, warnings = applied([Edit.replace(3, 3, ["return 2"])])
    assert text == SOURCE.replace("return 1", "return 2")
    assert any("re-indented" in w and "column 8" in w for w in warnings)


def test_a_multi_row_body_keeps_its_own_relative_indentation() -> None:
    text, warnings = applied([Edit.replace(3, 3, ["for i in x:", "    print(i)"])])
    assert text == (
        "def f(x):\n    if x:\n        for i in x:\n            print(i)\n    return 0\n"
    )
    assert any("re-indented" in w for w in warnings)


def test_extra_indentation_that_cannot_parse_is_removed() -> None:
    text, warnings = applied([Edit.replace(2, 2, ["        if not x:"])])
    assert text == SOURCE.replace("if x:", "if not x:")
    assert any("re-indented" in w and "column 4" in w for w in warnings)


def test_an_insert_mid_block_takes_the_block_indentation() -> None:
    text, warnings = applied([Edit.insert_after(2, ["print(x)"])])
    assert text.splitlines()[2] == "        print(x)"
    assert any("re-indented" in w for w in warnings)


def test_an_insert_after_a_block_may_start_a_new_statement_at_column_0() -> None:
    text, warnings = applied([Edit.insert_after(4, ["", "print(f(1))"])])
    assert text.endswith("    return 0\n\nprint(f(1))\n")
    assert warnings == ()


def test_indentation_that_parses_both_ways_is_refused_with_what_to_resend() -> None:
    source = "def f(x):\n    y = 1\n    z = 2\nw = 3\n"
    with pytest.raises(AmbiguousEditError) as caught:
        applied([Edit.replace(3, 3, ["z = 9"])], source)
    message = str(caught.value)
    assert "column 0" in message and "column 4" in message
    assert "Nothing was written" in message and "include the unchanged line above" in message


def test_the_escape_of_an_ambiguous_dedent_works() -> None:
    """Including the line above keeps the first row's indentation as written: a deliberate
    move out of the block goes through."""
    source = "def f(x):\n    y = 1\n    z = 2\nw = 3\n"
    text, warnings = applied([Edit.replace(2, 3, ["    y = 1", "z = 9"])], source)
    assert text == "def f(x):\n    y = 1\nz = 9\nw = 3\n"
    assert warnings == ()


def test_tabs_in_a_space_indented_file_are_converted() -> None:
    text, warnings = applied([Edit.replace(3, 3, ["\t\treturn 2"])])
    assert text == SOURCE.replace("return 1", "return 2")
    assert any("tab" in w for w in warnings)


def test_spaces_in_a_tab_indented_file_are_converted() -> None:
    source = "def f(x):\n\tif x:\n\t\treturn 1\n\treturn 0\n"
    rows = ["        if y:", "            return 2"]
    text, warnings = applied([Edit.replace(3, 3, rows)], source)
    assert text == source.replace("return 1", "if y:\n\t\t\treturn 2")
    assert any("tabs" in w for w in warnings)


def test_trailing_spaces_are_removed_when_the_code_means_the_same() -> None:
    text, warnings = applied([Edit.replace(3, 3, ["        return 2   "])])
    assert text == SOURCE.replace("return 1", "return 2")
    assert any("trailing" in w for w in warnings)


def test_trailing_spaces_inside_a_string_are_content() -> None:
    source = 's = """\na\n"""\n'
    text, warnings = applied([Edit.replace(2, 2, ["b  "])], source)
    assert text == 's = """\nb  \n"""\n'
    assert warnings == ()


def test_line_numbers_counted_after_the_calls_own_insert_are_refused() -> None:
    with pytest.raises(AmbiguousEditError) as caught:
        applied([Edit.insert_after(1, ["    # note"]), Edit.replace(4, 4, ["        return 2"])])
    message = str(caught.value)
    assert "replace 3:" in message and "do not shift" in message


def test_rows_as_like_the_line_above_as_the_line_named_are_refused() -> None:
    """`self.x = x  # changed` for line 5 (`self.y = y`), after an insert above: it is the
    edited line 4 (`self.x = x`) counted one too far as likely as an edit of line 5."""
    source = "class P:\n    def __init__(self, x, y):\n        self.x = x\n        self.y = y\n"
    edits = [Edit.insert_after(1, ["    # note"]), Edit.replace(4, 4, ["        self.x = x  # c"])]
    with pytest.raises(AmbiguousEditError) as caught:
        applied(edits, source)
    assert "replace 3:" in str(caught.value)


def test_numbers_that_fit_their_own_lines_are_not_second_guessed() -> None:
    text, _ = applied([Edit.insert_after(1, ["    # note"]), Edit.replace(4, 4, ["    return -1"])])
    assert text.endswith("    return -1\n")


def test_an_elision_marker_in_a_multi_line_replace_is_refused() -> None:
    with pytest.raises(AmbiguousEditError) as caught:
        applied([Edit.replace(2, 4, ["    if x:", "        # ... existing code ..."])])
    assert "elision" in str(caught.value)


def test_a_comment_the_replaced_lines_already_hold_is_not_an_elision() -> None:
    source = "x = 1\n# ... rest unchanged\ny = 2\n"
    text, _ = apply_edits(source, [Edit.replace(1, 2, ["x = 3", "# ... rest unchanged"])]).text, ()
    assert text == "x = 3\n# ... rest unchanged\ny = 2\n"


def test_no_claim_without_a_finder_or_for_other_languages() -> None:
    text = apply_edits(SOURCE, [Edit.replace(3, 3, ["return 2"])]).text
    assert "\nreturn 2\n" in text
    assert finder_for_path("notes.md") is None
    assert apply_edits("a:\n  b: 1\n", [Edit.replace(2, 2, ["b: 2"])]).text == "a:\nb: 2\n"


def test_a_file_that_did_not_parse_before_gets_no_indentation_claim() -> None:
    broken = "def f(:\n    if x:\n        return 1\n"
    result = apply_edits(broken, [Edit.replace(3, 3, ["return 2"])], finder=PY)
    assert result.text == "def f(:\n    if x:\nreturn 2\n"
    assert not any("re-indented" in w for w in result.warnings)
    assert result.parse_problems == ()  # it did not parse before: not this edit's doing


def test_an_edit_that_breaks_parsing_is_reported_with_its_line() -> None:
    result = apply_edits(SOURCE, [Edit.replace(3, 3, ["        return (1"])], finder=PY)
    assert [(p.line, "never closed" in p.message) for p in result.parse_problems] == [(3, True)]


def test_exact_edits_are_taken_as_they_are() -> None:
    result = apply_edits(SOURCE, [Edit.replace(3, 3, ["return 2"])], finder=PY, exact=True)
    assert "\nreturn 2\n" in result.text and result.parse_problems == ()
