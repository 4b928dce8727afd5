"""Granular edits into a live YNotebook (server/live_apply.py), without a server.

The shared documents here are real pycrdt documents (jupyter_ydoc's YNotebook); a "person" is a
second replica whose concurrent updates are exchanged with the agent's, as a room would.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jupyter_ydoc import YNotebook
from pycrdt import Doc, Text

from jupyter_hashline.notebook import merge_projection, project_notebook
from jupyter_hashline.server.adapters.live_apply import (
    ORIGIN,
    LiveDocumentChanged,
    _stable_positions,
    apply_text_ops,
    apply_to_live,
    plan_by_ids,
    plan_changes,
    text_ops,
)

LINE = st.text(alphabet="ab é🙂\r\t", max_size=6)
SOURCE = st.lists(LINE, max_size=6).map("\n".join)


def code(cid: str, source: str, **extra: Any) -> dict[str, Any]:
    cell: dict[str, Any] = {
        "cell_type": "code",
        "id": cid,
        "source": source,
        "metadata": {},
        "outputs": [],
        "execution_count": None,
    }
    cell.update(extra)
    return cell


def markdown(cid: str, source: str) -> dict[str, Any]:
    return {"cell_type": "markdown", "id": cid, "source": source, "metadata": {}}


def notebook(*cells: dict[str, Any], minor: int = 5) -> dict[str, Any]:
    return {
        "cells": list(cells),
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3"}},
        "nbformat": 4,
        "nbformat_minor": minor,
    }


def live(nb: dict[str, Any]) -> YNotebook:
    document = YNotebook()
    document.set(copy.deepcopy(nb))
    return document


def cells_of(document: YNotebook) -> list[dict[str, Any]]:
    return [
        {k: v for k, v in cell.items() if k != "execution_state"}
        for cell in document.get(deduplicate=False)["cells"]
    ]


@settings(max_examples=200, deadline=None)
@given(old=SOURCE, new=SOURCE)
def test_text_ops_turn_old_into_new_in_utf8_offsets(old: str, new: str) -> None:
    doc: Doc = Doc()
    text = doc.get("t", type=Text)
    text += old
    with doc.transaction():
        apply_text_ops(text, text_ops(old, new))
    assert str(text) == new


def test_text_ops_touch_only_the_changed_characters() -> None:
    old = "import pandas as pd\ndf = load('a.csv')\nprint(df)\n"
    new = "import pandas as pd\ndf = load('b.csv')\nprint(df)\n"
    [op] = text_ops(old, new)
    assert old.encode()[op.start : op.end] == b"a"
    assert op.insert == "b"


def test_concurrent_typing_on_other_lines_survives_the_agent_edit() -> None:
    """Not clear-and-replace: a person's keystroke on line 1 merges with the agent's line 3."""
    base = notebook(code("c1", "x = 1\ny = 2\nz = 3\n"))
    agent = live(base)
    person = YNotebook(Doc())
    person.ydoc.apply_update(agent.ydoc.get_update())
    person.ycells[0]["source"].insert(5, "  # person")
    target = copy.deepcopy(base)
    target["cells"][0]["source"] = "x = 1\ny = 2\nz = 30\n"
    apply_to_live(agent, agent.get(), target, "nb.ipynb")
    agent.ydoc.apply_update(person.ydoc.get_update())
    person.ydoc.apply_update(agent.ydoc.get_update())
    expected = "x = 1  # person\ny = 2\nz = 30\n"
    assert str(agent.ycells[0]["source"]) == expected
    assert str(person.ycells[0]["source"]) == expected


def test_a_cell_with_outputs_is_never_recreated_for_an_edit_of_another_cell() -> None:
    """The live document holds a stream's text as one string, the file as a list of lines:
    the same outputs. Seeing them as changed recreated the cell on every agent edit of any
    other cell, and a person's typing in it at that moment was lost."""
    stream = {"output_type": "stream", "name": "stdout", "text": "hello\nworld\n"}
    png = {"output_type": "display_data", "metadata": {},
           "data": {"text/plain": "<Figure>", "image/png": "iVBORw0KGgo="}}  # fmt: skip
    base = notebook(
        code("out", "print(1)", outputs=[stream, png], execution_count=1), code("b", "2")
    )
    document = live(base)
    person = YNotebook(Doc())
    person.ydoc.apply_update(document.ydoc.get_update())
    person.ycells[0]["source"].insert(8, "\n# the person types here")
    target = copy.deepcopy(base)
    target["cells"][0]["outputs"][0]["text"] = ["hello\n", "world\n"]  # as a file holds it
    target["cells"][0]["outputs"][1]["data"]["text/plain"] = ["<Figure>"]
    target["cells"][1]["source"] = "2 + 2"
    plan = plan_changes(document.get(), target)
    assert (plan.deletes, plan.inserts, [u.index for u in plan.updates]) == ((), (), [1])
    apply_to_live(document, document.get(), target, "nb.ipynb")
    document.ydoc.apply_update(person.ydoc.get_update())
    assert str(document.ycells[0]["source"]) == "print(1)\n# the person types here"
    changed = copy.deepcopy(target)
    changed["cells"][0]["outputs"][0]["text"] = ["other\n"]  # a real change still replaces it
    assert plan_changes(document.get(), changed).deletes == (0,)


def test_one_transaction_with_the_extension_origin() -> None:
    base = notebook(code("c1", "a\n"), code("c2", "b\n"), markdown("m", "# t"))
    document = live(base)
    origins: list[Any] = []
    document.ycells.observe_deep(lambda events: origins.append(events[0].transaction.origin))
    target = notebook(markdown("m", "# title"), code("c2", "b\n"), code("new", "c"))
    apply_to_live(document, document.get(), target, "nb.ipynb")
    assert origins == [ORIGIN]
    assert cells_of(document) == target["cells"]


def test_structure_changes_keep_untouched_cells_in_place() -> None:
    """Cells around inserts, deletes and moves are edited in place, so a person's concurrent
    typing in them merges (a recreated cell would drop it)."""
    base = notebook(code("a", "1"), code("b", "2", outputs=[], execution_count=3), code("c", "3"))
    document = live(base)
    person = YNotebook(Doc())
    person.ydoc.apply_update(document.ydoc.get_update())
    person.ycells[1]["source"].insert(0, "# person\n")
    target = notebook(code("c", "3"), code("b", "2 + 2", execution_count=3), markdown("a", "1"))
    plan = plan_changes(document.get(), target)
    apply_to_live(document, document.get(), target, "nb.ipynb")
    assert cells_of(document) == target["cells"]
    assert [u.index for u in plan.updates] == [1]  # only b is edited in place
    document.ydoc.apply_update(person.ydoc.get_update())
    assert str(document.ycells[1]["source"]) == "# person\n2 + 2"


def test_retype_replaces_the_cell_and_outputs_clear_in_place() -> None:
    stream = {"output_type": "stream", "name": "stdout", "text": "hi\n"}
    base = notebook(code("a", "print('hi')", outputs=[stream], execution_count=1), code("b", "x"))
    document = live(base)
    target = notebook(markdown("a", "print('hi')"), code("b", "y", outputs=[], execution_count=1))
    base["cells"][1]["execution_count"] = 1
    apply_to_live(document, document.get(), target, "nb.ipynb")
    assert cells_of(document) == target["cells"]


def test_legacy_notebook_keeps_its_version_and_the_ids_the_projection_showed() -> None:
    base = notebook(code("ignored", "a = 1"), code("ignored2", "b = 2"), minor=4)
    for cell in base["cells"]:
        del cell["id"]
    document = live(base)
    shown = project_notebook(document.get())
    assert "id=cell-1" in shown and "id=cell-2" in shown
    merged, _ = merge_projection(document.get(), shown.replace("b = 2", "b = 3"))
    apply_to_live(document, document.get(), merged, "nb.ipynb")
    after = document.get()
    assert after["nbformat_minor"] == 4  # minimal diffs: no upgrade, ids stay derived
    assert project_notebook(after) == shown.replace("b = 2", "b = 3")


def test_a_changed_source_refuses_everything() -> None:
    base = notebook(code("a", "1"), code("b", "2"))
    document = live(base)
    snapshot = document.get()
    document.ycells[1]["source"].insert(0, "#")
    target = notebook(code("x", "new"), code("a", "1"), code("b", "20"))
    with pytest.raises(LiveDocumentChanged) as err:
        apply_to_live(document, snapshot, target, "nb.ipynb")
    assert "Read it again" in err.value.message and err.value.status == 409
    assert [str(c["source"]) for c in document.ycells] == ["1", "#2"]


CELLS = st.lists(
    st.tuples(st.sampled_from(["code", "markdown"]), SOURCE), min_size=0, max_size=5
).map(
    lambda specs: [
        (code if kind == "code" else markdown)(f"c{i}", src) for i, (kind, src) in enumerate(specs)
    ]
)


@settings(max_examples=60, deadline=None)
@given(before=CELLS, data=st.data())
def test_any_reshuffle_and_edit_lands_exactly(before: list[dict[str, Any]], data: Any) -> None:
    after = data.draw(st.permutations(before)) if before else []
    after = [dict(c) for c in after if data.draw(st.booleans())]
    for cell in after:
        if data.draw(st.booleans()):
            cell["source"] = data.draw(SOURCE)
    after += [code(f"n{i}", data.draw(SOURCE)) for i in range(data.draw(st.integers(0, 2)))]
    base = notebook(*copy.deepcopy(before))
    document = live(base)
    apply_to_live(document, document.get(), notebook(*after), "nb.ipynb")
    assert cells_of(document) == after


@settings(max_examples=200, deadline=None)
@given(before=CELLS, data=st.data())
def test_cells_kept_in_place_plan_as_matching_by_ids_does(
    before: list[dict[str, Any]], data: Any
) -> None:
    """The in-place shortcut (same length, each changed cell keeps its id) gives the very plan
    matching by shown ids gives: edited sources, retyped cells, cells whose id changed or was
    dropped, repeated ids, and the same lists over again."""
    base = notebook(*before)
    after = list(before)
    for index, cell in enumerate(before):
        change = data.draw(st.sampled_from(["keep", "keep", "source", "retype", "id", "no id"]))
        if change == "source":
            after[index] = {**cell, "source": data.draw(SOURCE)}
        elif change == "retype":
            kind = "markdown" if cell["cell_type"] == "code" else "code"
            after[index] = (code if kind == "code" else markdown)(cell["id"], cell["source"])
        elif change == "id":
            after[index] = {**cell, "id": data.draw(st.sampled_from(["c0", "c1", "other"]))}
        elif change == "no id":
            after[index] = {k: v for k, v in cell.items() if k != "id"}
    target = {**base, "cells": after}
    assert plan_changes(base, target) == plan_by_ids(base, target)
    document = live(base)
    apply_to_live(document, document.get(), target, "nb.ipynb")
    assert cells_of(document) == [
        {**cell, "id": cell.get("id") or shown}
        for cell, shown in zip(after, [c["id"] for c in cells_of(document)], strict=True)
    ]


def test_outputs_stored_as_line_lists_are_the_live_outputs_and_stay_in_place() -> None:
    """A notebook file stores multi-line output text as a list of lines; the shared document
    holds one string. An edit of one cell's source replaces no cell, whatever its outputs."""
    stream = {"output_type": "stream", "name": "stdout", "text": "one\ntwo\nthree\n"}
    image = {"output_type": "display_data", "metadata": {}, "data": {"text/plain": "a\nb"}}
    live_cells = [code(f"c{n}", f"x = {n}\ny = {n}", outputs=[stream, image]) for n in range(4)]
    doc = YNotebook()
    doc.set({"cells": copy.deepcopy(live_cells), "metadata": {}, "nbformat": 4,
             "nbformat_minor": 5})  # fmt: skip
    base = doc.get()
    as_stored = copy.deepcopy(base)
    for cell in as_stored["cells"]:
        cell["outputs"][0]["text"] = ["one\n", "two\n", "three\n"]
        cell["outputs"][1]["data"]["text/plain"] = ["a\n", "b"]
    as_stored["cells"][2]["source"] = "x = 20\ny = 2"
    plan = apply_to_live(doc, base, as_stored, "nb.ipynb")
    assert (plan.deletes, plan.inserts) == ((), ())
    assert [u.index for u in plan.updates] == [2]
    assert doc.get()["cells"][2]["source"] == "x = 20\ny = 2"
    assert doc.get()["cells"][0]["outputs"] == base["cells"][0]["outputs"]


@given(st.permutations(range(12)), st.integers(0, 12))
def test_cells_that_need_not_move_are_a_longest_increasing_run(order: list[int], cut: int) -> None:
    """`_stable_positions` keeps an increasing subsequence as long as any (a quadratic
    reference counts it), and all of an already increasing order."""
    order = order[:cut] + sorted(order[cut:])  # a sorted tail: now and then all increasing
    stable = _stable_positions(order)
    kept = [value for value in order if value in stable]
    assert kept == sorted(kept)
    longest = [1] * len(order)
    for j in range(len(order)):
        for i in range(j):
            if order[i] < order[j]:
                longest[j] = max(longest[j], longest[i] + 1)
    assert len(stable) == max(longest, default=0)
    if order == sorted(order):
        assert stable == set(order)
