"""The projection: format, escaping, determinism, losslessness, and parse errors."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from testkit.nb_strategies import LINE_PIECES, notebooks

from jupyter_hashline.notebook import merge_projection, parse_projection, project_notebook
from jupyter_hashline.notebook.errors import InvalidNotebookError
from jupyter_hashline.notebook.ids import display_ids, ids_of
from jupyter_hashline.notebook.projection import cell_source, escape_source, unescape_source


def nb_of(*cells: dict, minor: int = 5) -> dict:
    return {"cells": list(cells), "metadata": {}, "nbformat": 4, "nbformat_minor": minor}


def code(source: str, cid: str | None = None, **extra: object) -> dict:
    cell = {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": []}
    cell.update(source=source, **extra)
    if cid is not None:
        cell["id"] = cid
    return cell


def markdown(source: str, cid: str | None = None) -> dict:
    cell = {"cell_type": "markdown", "metadata": {}, "source": source}
    if cid is not None:
        cell["id"] = cid
    return cell


def test_projection_shows_a_marker_then_the_source_of_each_cell() -> None:
    nb = nb_of(markdown("# Sales analysis", "intro"), code("import pandas as pd\ndf = 1", "load"))
    assert project_notebook(nb) == (
        "# %% [markdown] id=intro\n"
        "# Sales analysis\n"
        "# %% [code] id=load\n"
        "import pandas as pd\n"
        "df = 1\n"
    )


@pytest.mark.parametrize(
    ("source", "shown"),
    [
        ("", []),
        ("x", ["x"]),
        ("x\n", ["x", ""]),
        ("\n", ["", ""]),
        ("a\r\nb", ["a\r", "b"]),
        ("# %% not a marker", ["\\# %% not a marker"]),
        ("\\# %% once", ["\\\\# %% once"]),
        ("#%% fine\n # %% fine", ["#%% fine", " # %% fine"]),
    ],
)
def test_sources_split_on_lf_only_with_marker_lines_escaped(source: str, shown: list[str]) -> None:
    text = project_notebook(nb_of(code(source, "c")))
    assert text.split("\n")[1:-1] == shown
    (cell,) = parse_projection(text)
    assert cell.source == source
    assert cell.line_count == len(shown)


def test_legacy_notebooks_show_ids_derived_from_position_deterministically() -> None:
    nb = nb_of(code("a"), markdown("b"), code("c"), minor=4)
    first = project_notebook(nb)
    assert [c.cell_id for c in parse_projection(first)] == ["cell-1", "cell-2", "cell-3"]
    assert project_notebook(copy.deepcopy(nb)) == first


def test_derived_ids_never_collide_with_real_ones() -> None:
    shown = display_ids([code("a", "cell-2"), code("b"), {"cell_type": "code", "source": ""}])
    assert shown.ids == ("cell-2", "cell-2-2", "cell-3")
    assert shown.derived == frozenset({1, 2})


def test_unknown_cell_types_are_shown_and_kept() -> None:
    nb = nb_of({"cell_type": "future cell", "id": "f", "metadata": {}, "source": "?"})
    text = project_notebook(nb)
    assert text.startswith("# %% [future cell] id=f\n")
    assert merge_projection(nb, text)[0] is nb


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("stray text\n# %% [code] id=a\n", 1),
        ("# %% [code] id=a\nx\n# %% cell title\ny\n", 3),
        ("# %% [code] id=a\n# %%%\n", 2),
        ("\n# %% [code] id=a\n", 1),
    ],
)
def test_unreadable_text_is_a_clear_error_naming_the_line(text: str, line: int) -> None:
    with pytest.raises(InvalidNotebookError, match=rf"^line {line}: .*marker") as info:
        parse_projection(text)
    assert "# %% [code] id=<id>" in str(info.value)


def test_loose_markers_are_read() -> None:
    cells = parse_projection("# %%\na\n# %%[markdown]\nb\n# %% [raw]   id=r  \nc")
    assert [(c.cell_type, c.cell_id, c.source) for c in cells] == [
        ("code", None, "a"),
        ("markdown", None, "b"),
        ("raw", "r", "c"),
    ]


def test_a_missing_final_newline_is_tolerated() -> None:
    (cell,) = parse_projection("# %% [code] id=a\nx = 1")
    assert cell.source == "x = 1"


@given(st.lists(st.sampled_from([*LINE_PIECES, "\\\\\\# %%"]), max_size=8))
def test_escaping_is_reversible_and_leaves_no_marker(pieces: list[str]) -> None:
    source = "\n".join(pieces)
    escaped = escape_source(source)
    assert unescape_source(escaped) == source
    assert not any(line.startswith("# %%") for line in escaped.split("\n"))


@settings(max_examples=150, deadline=None)
@given(notebooks())
def test_projection_is_lossless_for_every_source(nb: dict) -> None:
    text = project_notebook(nb)
    cells = parse_projection(text)
    assert [c.source for c in cells] == [cell["source"] for cell in nb["cells"]]
    assert [c.cell_type for c in cells] == [cell["cell_type"] for cell in nb["cells"]]
    assert [c.cell_id for c in cells] == list(display_ids(nb["cells"]).ids)
    merged, warnings = merge_projection(nb, text)
    assert merged is nb and warnings == []
    assert project_notebook(merged) == text


def test_a_source_list_with_non_text_items_reads_as_its_text_parts() -> None:
    # an invalid file (a fuzzer found it): reading shows what text there is instead of crashing
    cell = {"cell_type": "code", "id": "x", "source": ["a = 1\n", None, "b = 2"]}
    assert cell_source(cell) == "a = 1\nb = 2"


ID_VALUES = st.one_of(
    st.none(),
    st.sampled_from(["a", "b", "cell-1", "cell-2", "x y", "", " a", "a\n", "é", "b-2"]),
    st.integers(0, 3),
    st.text(max_size=4),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(ID_VALUES, max_size=8))
def test_the_shortcuts_for_display_ids_give_what_the_general_rule_gives(own: list[object]) -> None:
    cells = [{} if cid is None else {"id": cid} for cid in own]
    assert display_ids(cells) == ids_of([cell.get("id") for cell in cells])


def test_the_shortcuts_cover_distinct_ids_and_no_ids() -> None:
    distinct = display_ids([{"id": "a"}, {"id": "b"}])
    assert distinct.ids == ("a", "b") and not distinct.derived and not distinct.copies
    legacy = display_ids([{}, {}, {}])
    assert legacy.ids == ("cell-1", "cell-2", "cell-3") and legacy.derived == {0, 1, 2}


def test_paused_gc_restores_the_collector_and_nests() -> None:
    import gc

    from jupyter_hashline.notebook.loading import paused_gc

    assert gc.isenabled()
    with paused_gc():
        assert not gc.isenabled()
        with paused_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner one found it paused: it leaves it so
    assert gc.isenabled()
    try:
        with paused_gc():
            raise KeyError("inside")
    except KeyError:
        pass
    assert gc.isenabled()
    gc.disable()
    try:
        with paused_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()  # paused before: still paused after
    finally:
        gc.enable()
