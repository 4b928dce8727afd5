"""The section tag test vectors of DESIGN §2.1, and what the tag ignores."""

from __future__ import annotations

import re

import pytest
import xxhash
from hypothesis import given
from hypothesis import strategies as st

from jupyter_hashline.hashline.text import section_tag

COLLIDING = ("line one 263\nline two 4471\n", "line one 410\nline two 6970\n")


@pytest.mark.parametrize(
    ("text", "tag"),
    [
        ("a \n b\t\r\nc", "80BA"),
        ("hello\n", "5BF9"),
        ("", "5D05"),
        (COLLIDING[0], "1D84"),
        (COLLIDING[1], "1D84"),
    ],
)
def test_design_vectors(text: str, tag: str) -> None:
    assert section_tag(text) == tag


def test_collision_pair_is_two_different_texts_with_one_tag() -> None:
    assert COLLIDING[0] != COLLIDING[1]
    assert section_tag(COLLIDING[0]) == section_tag(COLLIDING[1])


def test_trailing_whitespace_does_not_change_the_tag_but_content_does() -> None:
    assert section_tag("x = 1  \ny\t\n") == section_tag("x = 1\ny\n")
    assert section_tag("x = 1\n") != section_tag("x = 2\n")


@given(st.text(alphabet=st.sampled_from(list("ab \t\r\n#")), max_size=60))
def test_fast_path_equals_the_definition(text: str) -> None:
    """The tag's shortcut for texts without trailing whitespace never changes the result."""
    stripped = re.sub(r"[ \t\r]+$", "", text, flags=re.MULTILINE)
    expected = f"{xxhash.xxh32_intdigest(stripped.encode('utf-8')) & 0xFFFF:04X}"
    assert section_tag(text) == expected


@given(st.lists(st.text(alphabet="ab \t\r\n", max_size=12), min_size=1, max_size=12))
def test_remembered_tags_are_the_tags(texts: list[str]) -> None:
    """The last texts' tags are remembered by identity: asking again (the same object, an
    equal copy, or another text that happens to sit where it sat) gives the computed tag."""
    from jupyter_hashline.hashline.text import _section_tag

    for text in [*texts, *texts, *("".join([t]) + "" for t in texts)]:
        assert section_tag(text) == _section_tag(text)
