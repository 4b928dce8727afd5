"""Kernel messages of one execution turned into notebook outputs, as Jupyter front ends do.

`OutputCollector.feed(msg)` takes the IOPub messages of one execution request (the caller
filters them by parent message id) and keeps the cell's outputs as nbformat v4 dicts; it
returns the changes as `OutputEvent`s, so a live view (a collaborative document) can mirror
them one by one instead of rewriting every output on every message.

Invariants:
- `stream` text is appended to the previous output when that is a stream of the same name
  (stdout and stderr interleave as separate outputs), as JupyterLab shows and saves them.
- `clear_output` empties the outputs; with `wait=True` the clearing happens just before the
  next output arrives (so a redrawn progress display does not flicker).
- `update_display_data` replaces, in place, every earlier output of this execution that
  carries the same `display_id`; an update for an unknown id changes nothing.
- `execute_input` and `execute_result` give the execution count.
- Pure: plain dicts in, plain dicts out; messages of other types are ignored.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

Output = dict[str, Any]


@dataclass(frozen=True, slots=True)
class OutputEvent:
    """One change to a cell's outputs.

    `kind` is `append` (a new output at `index`), `extend` (`text` appended to the stream at
    `index`), `replace` (the output at `index` replaced by `output`) or `clear`.
    """

    kind: str
    index: int = -1
    output: Output | None = None
    text: str = ""


CLEAR = OutputEvent("clear")


def output_from_message(msg_type: str, content: Mapping[str, Any]) -> Output | None:
    """The nbformat v4 output for an IOPub output message, or None for other messages."""
    if msg_type == "stream":
        return {
            "output_type": "stream",
            "name": str(content.get("name", "stdout")),
            "text": str(content.get("text", "")),
        }
    if msg_type in ("display_data", "update_display_data"):
        return {
            "output_type": "display_data",
            "data": dict(content.get("data") or {}),
            "metadata": dict(content.get("metadata") or {}),
        }
    if msg_type == "execute_result":
        return {
            "output_type": "execute_result",
            "data": dict(content.get("data") or {}),
            "metadata": dict(content.get("metadata") or {}),
            "execution_count": content.get("execution_count"),
        }
    if msg_type == "error":
        return {
            "output_type": "error",
            "ename": str(content.get("ename", "")),
            "evalue": str(content.get("evalue", "")),
            "traceback": [str(line) for line in content.get("traceback") or []],
        }
    return None


class OutputCollector:
    """The outputs of one execution, built from its IOPub messages (see the module docstring)."""

    def __init__(self) -> None:
        self.outputs: list[Output] = []
        self.execution_count: int | None = None
        self._clear_on_next = False
        self._display_ids: dict[str, list[int]] = {}

    def feed(self, msg: Mapping[str, Any]) -> tuple[OutputEvent, ...]:
        """Take one IOPub message of this execution; return how the outputs changed."""
        msg_type = str(msg.get("header", {}).get("msg_type", msg.get("msg_type", "")))
        content: Mapping[str, Any] = msg.get("content") or {}
        if msg_type == "execute_input":
            self._count(content.get("execution_count"))
            return ()
        if msg_type == "clear_output":
            return self._clear(wait=bool(content.get("wait")))
        output = output_from_message(msg_type, content)
        if output is None:
            return ()
        if msg_type == "update_display_data":
            return self._update(content, output)
        if msg_type == "execute_result":
            self._count(content.get("execution_count"))
        events = self._clear_now() if self._clear_on_next else ()
        return events + self._add(output, content)

    def _count(self, value: Any) -> None:
        if isinstance(value, int) and not isinstance(value, bool):
            self.execution_count = value

    def _clear(self, *, wait: bool) -> tuple[OutputEvent, ...]:
        if wait:
            self._clear_on_next = True
            return ()
        return self._clear_now()

    def _clear_now(self) -> tuple[OutputEvent, ...]:
        self._clear_on_next = False
        self.outputs = []
        self._display_ids = {}
        return (CLEAR,)

    def _add(self, output: Output, content: Mapping[str, Any]) -> tuple[OutputEvent, ...]:
        last = self.outputs[-1] if self.outputs else None
        if (
            output["output_type"] == "stream"
            and last is not None
            and last.get("output_type") == "stream"
            and last.get("name") == output["name"]
        ):
            last["text"] = str(last.get("text", "")) + output["text"]
            return (OutputEvent("extend", len(self.outputs) - 1, text=output["text"]),)
        self.outputs.append(output)
        display_id = _display_id(content)
        if display_id is not None:
            self._display_ids.setdefault(display_id, []).append(len(self.outputs) - 1)
        return (OutputEvent("append", len(self.outputs) - 1, output=output),)

    def _update(self, content: Mapping[str, Any], output: Output) -> tuple[OutputEvent, ...]:
        display_id = _display_id(content)
        events = []
        for index in self._display_ids.get(display_id or "", []):
            kept = self.outputs[index]
            replaced = {**kept, "data": output["data"], "metadata": output["metadata"]}
            self.outputs[index] = replaced
            events.append(OutputEvent("replace", index, output=replaced))
        return tuple(events)


def _display_id(content: Mapping[str, Any]) -> str | None:
    transient = content.get("transient")
    if isinstance(transient, Mapping):
        value = transient.get("display_id")
        if isinstance(value, str) and value:
            return value
    return None
