"""`LiveOutputs`: a run's output changes mirrored into a live `YNotebook`, touching nothing
but the run cell's outputs, execution count and running state."""

from __future__ import annotations

from typing import Any

import nbformat
from jupyter_ydoc import YNotebook

from jupyter_hashline.kernels import CellRun, OutputCollector, RunStatus
from jupyter_hashline.server.adapters.run_live import LiveOutputs


def document(minor: int = 5) -> YNotebook:
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Title", id="intro"),
        nbformat.v4.new_code_cell("print(1)", id="run-me"),
    ]
    nb.cells[1].outputs = [nbformat.v4.new_output("stream", name="stdout", text="old\n")]
    nb.cells[1].execution_count = 3
    nb.nbformat_minor = minor
    if minor < 5:
        for cell in nb.cells:
            del cell["id"]
    doc = YNotebook()
    doc.set(nb)
    return doc


def msg(msg_type: str, **content: Any) -> dict[str, Any]:
    return {"header": {"msg_type": msg_type}, "content": content}


def stream(live: LiveOutputs, collector: OutputCollector, text: str) -> None:
    live.changed("run-me", collector.feed(msg("stream", name="stdout", text=text)))


def test_a_run_clears_streams_and_finishes_in_the_document() -> None:
    doc = document()
    live = LiveOutputs(doc)
    collector = OutputCollector()
    live.started("run-me")
    cell = doc.get_cell(1)
    assert cell["outputs"] == [] and cell["execution_count"] is None
    assert doc.ycells[1]["execution_state"] == "running"
    stream(live, collector, "é✓ first\n")
    stream(live, collector, "second\n")
    assert doc.get_cell(1)["outputs"] == [
        {"output_type": "stream", "name": "stdout", "text": "é✓ first\nsecond\n"}
    ]
    live.finished(CellRun("run-me", RunStatus.OK, execution_count=4))
    assert doc.get_cell(1)["execution_count"] == 4
    assert doc.ycells[1]["execution_state"] == "idle"
    assert doc.get_cell(1)["source"] == "print(1)"
    assert doc.get_cell(0) == {"cell_type": "markdown", "id": "intro", "metadata": {},
                               "source": "# Title"}  # fmt: skip


def test_display_updates_and_clears_are_mirrored() -> None:
    doc = document()
    live = LiveOutputs(doc)
    collector = OutputCollector()
    shown = {"display_id": "bar"}
    live.started("run-me")
    live.changed("run-me", collector.feed(msg("display_data", data={"text/plain": "0%"},
                                              metadata={}, transient=shown)))  # fmt: skip
    live.changed("run-me", collector.feed(msg("update_display_data", data={"text/plain": "90%"},
                                              metadata={}, transient=shown)))  # fmt: skip
    assert doc.get_cell(1)["outputs"] == collector.outputs
    assert collector.outputs[0]["data"] == {"text/plain": "90%"}
    live.changed("run-me", collector.feed(msg("clear_output", wait=False)))
    assert doc.get_cell(1)["outputs"] == []


def test_a_person_typing_in_the_cell_keeps_their_text() -> None:
    doc = document()
    live = LiveOutputs(doc)
    collector = OutputCollector()
    live.started("run-me")
    doc.ycells[1]["source"].insert(8, "  # typed")
    stream(live, collector, "1\n")
    assert doc.get_cell(1)["source"] == "print(1)  # typed"


def test_cells_are_found_by_the_ids_the_projection_shows_and_gone_cells_are_skipped() -> None:
    doc = document(minor=4)
    live = LiveOutputs(doc)
    live.write_all({"cell-2": ([{"output_type": "stream", "name": "stdout", "text": "x"}], 9)})
    assert doc.get_cell(1)["execution_count"] == 9
    live.started("cell-1")  # a markdown cell: nothing to do
    live.started("nope")
    live.changed("nope", ())
    live.finished(CellRun("nope", RunStatus.OK, execution_count=1))
    assert doc.get_cell(1)["outputs"] == [{"output_type": "stream", "name": "stdout", "text": "x"}]
