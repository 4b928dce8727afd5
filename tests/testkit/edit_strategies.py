"""Hypothesis strategies for the engine's property tests (one module, as attrs keeps them).

Texts are drawn from a tiny alphabet so that repeated lines, echoes and ambiguous diffs are
common; edit scripts are always valid for the text they were drawn for.
"""

from __future__ import annotations

from hypothesis import strategies as st

from jupyter_hashline.hashline.edits import Edit, EditOp

FILE_LINES = st.sampled_from(["a", "b", "c", "", "  a", "x = 1", "b b"])
UPPER_ROWS = st.sampled_from(["A", "B", "", "  C", "D = 2"])


@st.composite
def texts(draw: st.DrawFn, lines: st.SearchStrategy[str] = FILE_LINES) -> str:
    """Normalized text (LF), with or without a final newline, sometimes empty."""
    rows = draw(st.lists(lines, max_size=12))
    if not rows:
        return ""
    final = draw(st.booleans())
    return "\n".join(rows) + ("\n" if final else "")


@st.composite
def raw_texts(draw: st.DrawFn) -> str:
    """Raw file text: optional BOM, one line ending used throughout, any final-newline state."""
    text = draw(texts())
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    bom = draw(st.booleans())
    return ("\ufeff" if bom else "") + text.replace("\n", eol)


@st.composite
def edit_scripts(
    draw: st.DrawFn,
    line_count: int,
    rows: st.SearchStrategy[str] = UPPER_ROWS,
    edge: bool = True,
) -> list[Edit]:
    """A valid list of edits for a text of `line_count` lines, in random patch order."""
    body = st.lists(rows, min_size=1, max_size=3).map(tuple)
    edits: list[Edit] = []
    line = 1
    while line <= line_count:
        choice = draw(st.sampled_from(["skip", "skip", "replace", "delete", "before", "after"]))
        if choice in ("replace", "delete"):
            end = draw(st.integers(line, min(line_count, line + 2)))
            lines = draw(body) if choice == "replace" else ()
            op = EditOp.REPLACE if choice == "replace" else EditOp.DELETE
            edits.append(Edit(op, line, end, lines))
            if draw(st.booleans()):
                edits.append(Edit.insert_after(end, draw(body)))
            line = end + 1
            continue
        if choice == "before":
            edits.append(Edit.insert_before(line, draw(body)))
        elif choice == "after":
            edits.append(Edit.insert_after(line, draw(body)))
        line += 1
    if edge:
        for op in (EditOp.INSERT_HEAD, EditOp.INSERT_TAIL):
            if draw(st.booleans()):
                edits.append(Edit(op, 0, 0, draw(body)))
    return draw(st.permutations(edits)) if edits else []


@st.composite
def line_changes(draw: st.DrawFn, lines: list[str]) -> list[str]:
    """`lines` after a few random insertions, deletions and replacements (another writer)."""
    result = list(lines)
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(st.sampled_from(["insert", "delete", "replace"]))
        if kind == "insert" or not result:
            where = draw(st.integers(0, len(result)))
            result.insert(where, draw(st.sampled_from(["new", "a", "zz"])))
        else:
            where = draw(st.integers(0, len(result) - 1))
            if kind == "delete":
                del result[where]
            else:
                result[where] = draw(st.sampled_from(["changed", "b", "c"]))
    return result
