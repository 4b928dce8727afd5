"""Read-view rows: `N:text` per shown line, each line's annotation rows right after it."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from jupyter_hashline.hashline.messages import view_rows


def by_definition(
    lines: list[str], shown: list[int], notes: dict[int, tuple[str, ...]]
) -> list[str]:
    rows = []
    for number in shown:
        rows.append(f"{number}:{lines[number - 1]}")
        rows.extend(notes.get(number, ()))
    return rows


@given(st.data())
def test_rows_follow_the_definition_for_ranges_and_selections(data: st.DataObject) -> None:
    lines = data.draw(st.lists(st.text(max_size=5), max_size=30))
    first = data.draw(st.integers(1, len(lines) + 1))
    last = data.draw(st.integers(first - 1, len(lines)))
    notes = data.draw(
        st.dictionaries(st.integers(0, len(lines) + 2), st.tuples(st.text(max_size=4)), max_size=6)
    )
    shown = range(first, last + 1)
    assert view_rows(lines, shown, notes) == by_definition(lines, list(shown), notes)
    picked = sorted(data.draw(st.sets(st.integers(1, max(1, len(lines))))) & set(shown))
    assert view_rows(lines, picked, notes) == by_definition(lines, picked, notes)
