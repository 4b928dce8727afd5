"""`plan_run`: only code the agent saw at its tag runs; everything else is a clear refusal."""

from __future__ import annotations

import pytest

from jupyter_hashline.hashline import section_tag
from jupyter_hashline.hashline.errors import AnchorError, HashlineError, UnknownTagError
from jupyter_hashline.kernels import (
    CellToRun,
    NotRunnableError,
    StaleCellsError,
    UnseenCellsError,
    added_or_changed_cells,
    plan_run,
)

SNAPSHOT = (
    "# %% [markdown] id=intro\n"
    "# Sales\n"
    "# %% [code] id=load\n"
    "import math\n"
    "x = 6 * 7\n"
    "# %% [code] id=show\n"
    "print(x)\n"
    "# %% [raw] id=notes\n"
    "raw text\n"
)


def plan(live: str = SNAPSHOT, **kwargs: object) -> object:
    options: dict[str, object] = {"tag": section_tag(SNAPSHOT), "snapshot_text": SNAPSHOT}
    options.update(kwargs)
    return plan_run("nb.ipynb", live_text=live, **options)  # type: ignore[arg-type]


def test_named_cells_run_with_the_source_the_agent_saw_in_the_order_asked() -> None:
    result = plan(cells=["show", "load"])
    assert result.cells == (
        CellToRun("show", "print(x)"),
        CellToRun("load", "import math\nx = 6 * 7"),
    )
    assert result.notes == ()
    assert result.live_tag == section_tag(SNAPSHOT)


def test_a_change_to_another_cell_does_not_stop_the_run() -> None:
    live = SNAPSHOT.replace("# Sales\n", "# Sales, 2026\n").replace("print(x)", "print(x, 1)")
    result = plan(live, cells=["load"])
    assert [c.cell_id for c in result.cells] == ["load"]
    assert result.live_tag == section_tag(live)


def test_a_cell_a_person_changed_refuses_the_whole_call_showing_the_changed_line() -> None:
    live = SNAPSHOT.replace("x = 6 * 7", "x = 6 * 8  # person")
    with pytest.raises(StaleCellsError) as caught:
        plan(live, cells=["show", "load"])
    err = caught.value
    assert err.status == 409
    lines = err.message.splitlines()
    assert lines[0].startswith("Run refused: nb.ipynb changed since [nb.ipynb#")
    assert "cell load was edited" in lines[0] and "Nothing ran." in lines[0]
    assert lines[0].endswith(f"Current header: [nb.ipynb#{section_tag(live)}]")
    assert lines[1:4] == [" 3:# %% [code] id=load", " 4:import math", "*5:x = 6 * 8  # person"]
    assert lines[-1].startswith("(* = changed since your read) Read those cells again")
    assert err.live_text == live and err.shown_lines == (3, 4, 5)


def test_cells_added_deleted_or_retyped_since_the_tag_are_refused() -> None:
    live = SNAPSHOT.replace("# %% [code] id=show\nprint(x)\n", "# %% [code] id=new\n1 + 1\n")
    with pytest.raises(StaleCellsError) as caught:
        plan(live, cells=["show", "new"])
    assert "cell show was deleted" in caught.value.message
    assert "cell new was added after that read" in caught.value.message
    assert "*6:# %% [code] id=new" in caught.value.message.splitlines()
    retyped = SNAPSHOT.replace("[code] id=show", "[markdown] id=show")
    with pytest.raises(StaleCellsError, match="cell show changed from code to markdown"):
        plan(retyped, cells=["show"])


def test_a_removed_line_is_named_even_though_no_live_line_can_be_starred() -> None:
    live = SNAPSHOT.replace("import math\n", "")
    with pytest.raises(StaleCellsError) as caught:
        plan(live, cells=["load"])
    assert "cell load was edited" in caught.value.message
    assert "(* = changed" not in caught.value.message
    assert " 4:x = 6 * 7" in caught.value.message.splitlines()


def test_a_long_changed_cell_shows_a_window_around_the_change() -> None:
    body = "".join(f"v{n} = {n}\n" for n in range(100))
    snapshot = "# %% [code] id=big\n" + body
    live = snapshot.replace("v50 = 50\n", "v50 = 5000\n")
    with pytest.raises(StaleCellsError) as caught:
        plan_run(
            "nb.ipynb",
            tag=section_tag(snapshot),
            snapshot_text=snapshot,
            live_text=live,
            cells=["big"],
        )
    rows = caught.value.message.splitlines()[1:-1]
    assert rows[0] == " 1:# %% [code] id=big" and rows[1] == " ..."
    assert "*52:v50 = 5000" in rows and len(rows) == 9


def test_markdown_or_raw_named_explicitly_is_a_clear_error() -> None:
    with pytest.raises(NotRunnableError) as caught:
        plan(cells=["load", "intro", "notes"])
    assert caught.value.status == 400
    assert "cell intro (markdown), notes (raw) of nb.ipynb is not code" in caught.value.message


def test_unknown_and_ambiguous_ids_are_errors_naming_the_known_ones() -> None:
    with pytest.raises(AnchorError, match=r"no cell with id nope, gone\. Its cell ids are: intro"):
        plan(cells=["nope", "load", "gone"])
    twice = SNAPSHOT + "# %% [code] id=load\nprint(2)\n"
    with pytest.raises(AnchorError, match="cell id load occurs more than once"):
        plan(twice, snapshot_text=twice, tag=section_tag(twice), cells=["load"])


def test_defaults_are_the_touched_code_cells_with_markdown_skipped_with_a_note() -> None:
    result = plan(touched=["intro", "show"])
    assert result.cells == (CellToRun("show", "print(x)"),)
    assert result.notes == ("skipped cell intro (markdown): only code cells run",)
    with pytest.raises(NotRunnableError, match=r"touched \(intro \(markdown\)\) are not code"):
        plan(touched=["intro"])
    with pytest.raises(NotRunnableError, match=r"no default\. Name the cells"):
        plan()
    with pytest.raises(NotRunnableError, match="`cells` is empty"):
        plan(cells=[])


def test_a_touched_cell_deleted_since_is_an_error() -> None:
    live = SNAPSHOT.replace("# %% [code] id=show\nprint(x)\n", "")
    with pytest.raises(StaleCellsError, match="cell show was deleted"):
        plan(live, touched=["show"])


def test_an_evicted_or_foreign_tag_is_refused_asking_for_a_new_read() -> None:
    with pytest.raises(UnknownTagError) as caught:
        plan(snapshot_text=None, tag="ABCD", cells=["load"])
    assert "hash #ABCD is not from this session" in caught.value.message
    assert f"Current header: [nb.ipynb#{section_tag(SNAPSHOT)}]" in caught.value.message
    assert caught.value.status == 409


def test_with_seen_lines_unseen_source_lines_are_revealed_and_refused() -> None:
    with pytest.raises(UnseenCellsError) as caught:
        plan(cells=["load", "show"], seen_lines={1, 2, 3, 4, 6})
    err = caught.value
    assert "line(s) 5, 7 of nb.ipynb that you were never shown" in err.message
    assert "5:x = 6 * 7" in err.message.splitlines() and "7:print(x)" in err.message.splitlines()
    assert err.revealed_lines == (5, 7) and err.complete
    assert plan(cells=["load"], seen_lines={4, 5}).cells[0].cell_id == "load"


def test_added_or_changed_cells_are_in_notebook_order() -> None:
    after = (
        SNAPSHOT.replace("print(x)", "print(x * 2)")
        .replace("# Sales\n", "# Sales!\n")
        .replace("# %% [raw] id=notes\nraw text\n", "# %% [code] id=fresh\ny = 1\n")
    )
    assert added_or_changed_cells(SNAPSHOT, after) == ("intro", "show", "fresh")
    assert added_or_changed_cells(SNAPSHOT, SNAPSHOT) == ()


def test_refusals_are_engine_errors() -> None:
    for error in (NotRunnableError, StaleCellsError, UnseenCellsError):
        assert issubclass(error, HashlineError)
