"""`LiveMirror` (server/live_mirror.py) is the shared document's notebook, whatever happens to it.

Real pycrdt documents (jupyter_ydoc's YNotebook), changed the ways a room changes them: typing
into a cell, a person's replica merging in, fields and outputs set, cells added, deleted and
moved, metadata and version changes. After every step the mirror's notebook must equal a whole
conversion of the document, and cells nobody changed must be the very objects it returned
before (that is what makes it cheap).
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from jupyter_ydoc import YNotebook
from pycrdt import Doc, Map

from jupyter_hashline.server.adapters.live_mirror import LiveMirror, full_notebook

STEPS = ("type", "person", "count", "outputs", "tags", "insert", "delete", "move", "meta",
         "erase")  # fmt: skip


def cell(n: int) -> dict[str, Any]:
    return {
        "cell_type": "code",
        "id": f"c{n}",
        "source": f"x = {n}\nprint(x)",
        "metadata": {},
        "outputs": [],
        "execution_count": None,
    }


def document(cells: int) -> YNotebook:
    doc = YNotebook()
    doc.set({"cells": [cell(n) for n in range(cells)], "metadata": {}, "nbformat": 4,
             "nbformat_minor": 5})  # fmt: skip
    return doc


def step(doc: YNotebook, kind: str, at: int, data: st.DataObject) -> None:
    cells = doc.ycells
    index = at % len(cells)
    if kind == "type":
        cells[index]["source"].insert(0, data.draw(st.text(alphabet="ab é\n", max_size=4)))
    elif kind == "person":  # a second replica's keystrokes, merged as a room merges them
        person = YNotebook(Doc())
        person.ydoc.apply_update(doc.ydoc.get_update())
        person.ycells[index]["source"].insert(0, "# person\n")
        doc.ydoc.apply_update(person.ydoc.get_update(doc.ydoc.get_state()))
    elif kind == "count":
        cells[index]["execution_count"] = data.draw(st.integers(1, 9))
    elif kind == "outputs":
        cells[index]["outputs"].append({"output_type": "stream", "name": "stdout", "text": "hi"})
    elif kind == "tags":
        cells[index]["metadata"]["tags"] = ["t"]
    elif kind == "insert":
        cells.insert(index, doc.create_ycell(cell(100 + at)))
    elif kind == "delete" and len(cells) > 1:
        del cells[index]
    elif kind == "move" and len(cells) > 1:
        moved = doc.get_cell(index)
        del cells[index]
        cells.insert(0, doc.create_ycell(moved))
    elif kind == "meta":
        doc.ydoc.get("meta", type=Map)["metadata"]["x"] = at
    elif kind == "erase":  # a pure deletion: the state vector stays as it was
        del cells[index]["source"][0:1]


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_the_mirror_is_the_document_after_any_changes(data: st.DataObject) -> None:
    doc = document(data.draw(st.integers(1, 6)))
    mirror = LiveMirror(doc)
    assert mirror.notebook() == full_notebook(doc)
    for _ in range(data.draw(st.integers(1, 6))):
        kind = data.draw(st.sampled_from(STEPS))
        version, update = mirror.version, doc.ydoc.get_update()
        step(doc, kind, data.draw(st.integers(0, 50)), data)
        assert mirror.notebook() == full_notebook(doc), kind
        changed = doc.ydoc.get_update() != update
        assert (mirror.version != version) == changed, kind  # counted when, and only when
    mirror.close()


def test_two_mirrors_of_one_document_never_share_a_version() -> None:
    doc = document(3)
    first = LiveMirror(doc)
    first.close()  # evicted: a newer mirror counts from the start again
    second = LiveMirror(doc)
    for n in range(3):
        assert second.version != first.version
        doc.ycells[0]["source"].insert(0, str(n))
    second.close()


def test_only_the_cell_that_changed_is_converted_again() -> None:
    doc = document(50)
    mirror = LiveMirror(doc)
    before = mirror.notebook()["cells"]
    doc.ycells[20]["source"].insert(0, "# typed\n")
    after = mirror.notebook()["cells"]
    kept = [n for n in range(50) if after[n] is before[n]]
    assert kept == [n for n in range(50) if n != 20]
    assert after[20]["source"].startswith("# typed\n")
    mirror.close()
    doc.ycells[3]["source"].insert(0, "z")  # after close: no observer left to call
    assert mirror.notebook()["cells"][3] is after[3]
