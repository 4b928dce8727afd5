"""IOPub messages to notebook outputs, as a Jupyter front end builds them."""

from __future__ import annotations

from typing import Any

import nbformat

from jupyter_hashline.kernels import OutputCollector, OutputEvent


def msg(msg_type: str, **content: Any) -> dict[str, Any]:
    return {"header": {"msg_type": msg_type}, "parent_header": {}, "content": content}


def feed(collector: OutputCollector, *messages: dict[str, Any]) -> list[OutputEvent]:
    return [event for m in messages for event in collector.feed(m)]


def test_streams_of_one_name_merge_and_interleaved_names_do_not() -> None:
    collector = OutputCollector()
    events = feed(
        collector,
        msg("execute_input", code="x", execution_count=4),
        msg("stream", name="stdout", text="a\n"),
        msg("stream", name="stdout", text="b\n"),
        msg("stream", name="stderr", text="warn\n"),
        msg("stream", name="stdout", text="c\n"),
    )
    assert collector.execution_count == 4
    assert collector.outputs == [
        {"output_type": "stream", "name": "stdout", "text": "a\nb\n"},
        {"output_type": "stream", "name": "stderr", "text": "warn\n"},
        {"output_type": "stream", "name": "stdout", "text": "c\n"},
    ]
    assert [(e.kind, e.index) for e in events] == [
        ("append", 0),
        ("extend", 0),
        ("append", 1),
        ("append", 2),
    ]
    assert events[1].text == "b\n"


def test_results_displays_and_errors_are_valid_nbformat_outputs() -> None:
    collector = OutputCollector()
    feed(
        collector,
        msg("display_data", data={"text/plain": "fig"}, metadata={}, transient={}),
        msg("execute_result", data={"text/plain": "42"}, metadata={}, execution_count=7),
        msg("error", ename="ValueError", evalue="bad", traceback=["line 1", "line 2"]),
        msg("status", execution_state="idle"),
    )
    assert collector.execution_count == 7
    assert [o["output_type"] for o in collector.outputs] == [
        "display_data",
        "execute_result",
        "error",
    ]
    cell = nbformat.v4.new_code_cell("x", outputs=collector.outputs, execution_count=7)
    nb = nbformat.v4.new_notebook(cells=[cell])
    nbformat.validate(nb)


def test_clear_output_clears_now_or_just_before_the_next_output_with_wait() -> None:
    collector = OutputCollector()
    feed(collector, msg("stream", name="stdout", text="10%"))
    assert feed(collector, msg("clear_output", wait=True)) == []
    assert collector.outputs == [{"output_type": "stream", "name": "stdout", "text": "10%"}]
    events = feed(collector, msg("stream", name="stdout", text="20%"))
    assert [e.kind for e in events] == ["clear", "append"]
    assert collector.outputs == [{"output_type": "stream", "name": "stdout", "text": "20%"}]
    assert [e.kind for e in feed(collector, msg("clear_output", wait=False))] == ["clear"]
    assert collector.outputs == []


def test_update_display_data_replaces_every_output_with_that_display_id() -> None:
    collector = OutputCollector()
    shown = {"display_id": "progress"}
    feed(
        collector,
        msg("display_data", data={"text/plain": "0/2"}, metadata={}, transient=shown),
        msg("stream", name="stdout", text="working\n"),
        msg("display_data", data={"text/plain": "0/2"}, metadata={}, transient=shown),
    )
    events = feed(
        collector,
        msg("update_display_data", data={"text/plain": "2/2"}, metadata={}, transient=shown),
        msg("update_display_data", data={"text/plain": "?"}, metadata={}, transient={"x": 1}),
    )
    assert [(e.kind, e.index) for e in events] == [("replace", 0), ("replace", 2)]
    assert [o.get("data", {}).get("text/plain") for o in collector.outputs] == [
        "2/2",
        None,
        "2/2",
    ]


def test_other_messages_change_nothing() -> None:
    collector = OutputCollector()
    assert feed(collector, msg("status", execution_state="busy"), msg("comm_open")) == []
    assert collector.outputs == [] and collector.execution_count is None
