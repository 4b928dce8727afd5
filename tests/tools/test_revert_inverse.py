"""The inverse of an edit (tools/revert.py): applied exactly to the text an edit produced, it
gives back the text before, whatever the edit was; and it only names what changed."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_hashline.hashline.apply import apply_edits
from jupyter_hashline.tools.revert import inverse_edits

LINES = st.lists(st.sampled_from(["a", "b", "c", "", "# %% [code] id=x", "12:pasted", "  b"]))


def text_of(lines: list[str], final_newline: bool) -> str:
    return "\n".join(lines) + ("\n" if final_newline and lines else "")


@settings(max_examples=400, deadline=None)
@given(before=LINES, after=LINES, final_newline=st.booleans())
def test_the_inverse_gives_back_the_text_before(
    before: list[str], after: list[str], final_newline: bool
) -> None:
    old, new = text_of(before, final_newline), text_of(after, final_newline)
    if (new and old and old.endswith("\n") != new.endswith("\n")) or (old and not new):
        return  # a changed final newline is refused before anything is written (check_inverse)
    undone = apply_edits(new, inverse_edits(old, new), exact=True).text
    assert undone == old


def test_only_the_changed_lines_are_named() -> None:
    before = "".join(f"line {n}\n" for n in range(1, 200_001))
    after = before.replace("line 100000\n", "line 100000 changed\nextra\n")
    (edit,) = inverse_edits(before, after)
    assert (edit.op.value, edit.start, edit.end, edit.lines) == (
        "replace",
        100_000,
        100_001,
        ("line 100000",),
    )
