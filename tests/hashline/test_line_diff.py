"""line_diff: difflib's opcodes, at the cost of what changed."""

from __future__ import annotations

import difflib
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_hashline.hashline.line_diff import SMALL_LINES, Opcode, line_opcodes


def replayed(a: list[str], b: list[str], codes: list[Opcode]) -> list[str]:
    """`a` turned by `codes` (taking inserted lines from `b`), checking their shape."""
    out: list[str] = []
    at_a = at_b = 0
    previous = None
    for tag, i1, i2, j1, j2 in codes:
        assert (i1, j1) == (at_a, at_b), codes  # consecutive
        assert not (tag == "equal" and previous == "equal"), codes
        if tag == "equal":
            assert a[i1:i2] == b[j1:j2]
            out.extend(a[i1:i2])
        else:
            assert tag in ("replace", "delete", "insert")
            out.extend(b[j1:j2])
        at_a, at_b, previous = i2, j2, tag
    assert (at_a, at_b) == (len(a), len(b)), codes  # covering both
    return out


lines = st.lists(st.sampled_from(["a", "b", "c", "x = 1", "", "    pass", "# %% [code]"]))


@settings(max_examples=300, deadline=None)
@given(lines, lines)
def test_small_texts_diff_exactly_as_difflib(a: list[str], b: list[str]) -> None:
    codes = line_opcodes(a, b)
    assert codes == difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes()
    assert replayed(a, b, codes) == b


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32), st.integers(1, 400), st.integers(0, 6))
def test_long_texts_replay_to_the_new_text(seed: int, changes: int, repeats: int) -> None:
    rng = random.Random(seed)
    a = [f"line {i}" for i in range(SMALL_LINES * 2)] + ["same"] * repeats
    b = list(a)
    for _ in range(changes):  # replacements, insertions and deletions anywhere
        at = rng.randrange(len(b) + 1)
        kind = rng.choice(("replace", "insert", "delete"))
        if kind == "insert" or not b or at == len(b):
            b.insert(at, rng.choice(("new", "same", f"line {rng.randrange(900)}")))
        elif kind == "replace":
            b[at] = f"changed {rng.randrange(5)}"
        else:
            del b[at]
    assert replayed(a, b, line_opcodes(a, b)) == b


def test_changes_spread_across_a_long_text_are_found_one_by_one() -> None:
    a = [f"v{i} = {i}" for i in range(12_000)]
    b = list(a)
    for i in range(5, 12_000, 12):
        b[i] = f"w = {i}"
    codes = line_opcodes(a, b)
    changed = [code for code in codes if code[0] != "equal"]
    assert changed == [("replace", i, i + 1, i, i + 1) for i in range(5, 12_000, 12)]
    assert replayed(a, b, codes) == b


def test_empty_sides() -> None:
    assert line_opcodes([], []) == []
    assert line_opcodes([], ["a"]) == [("insert", 0, 0, 0, 1)]
    assert line_opcodes(["a"] * 500, []) == [("delete", 0, 500, 0, 0)]
