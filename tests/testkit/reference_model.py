"""The engine's reference models for property tests: the spec as plain list slicing, and a
stale edit applied through a real Patcher (True when it landed, and the file afterwards)."""

from __future__ import annotations

from collections.abc import Sequence

from jupyter_hashline.hashline.edits import Edit, EditOp
from jupyter_hashline.hashline.errors import StaleTagError
from jupyter_hashline.hashline.memory_fs import InMemoryFilesystem
from jupyter_hashline.hashline.memory_store import InMemorySnapshotStore
from jupyter_hashline.hashline.patcher import Patcher


def reference(text: str, edits: Sequence[Edit]) -> str:
    """The spec, literally: bottom-up list slicing; at one line after-inserts, then the
    replacement, then before-inserts are spliced in; head and tail last."""
    lines = text.split("\n")
    final = text == "" or text.endswith("\n")
    if final:
        lines.pop()
    touched = sorted({e.start for e in edits if not e.op.at_edge}, reverse=True)
    for line in touched:
        at = [e for e in edits if e.start == line and not e.op.at_edge]
        afters = [r for e in at if e.op is EditOp.INSERT_AFTER for r in e.lines]
        lines[line:line] = afters
        for e in at:
            if e.op.consumes:
                lines[line - 1 : e.end] = list(e.lines)
        befores = [r for e in at if e.op is EditOp.INSERT_BEFORE for r in e.lines]
        lines[line - 1 : line - 1] = befores
    head = [r for e in edits if e.op is EditOp.INSERT_HEAD for r in e.lines]
    tail = [r for e in edits if e.op is EditOp.INSERT_TAIL for r in e.lines]
    lines = head + lines + tail
    return "\n".join(lines) + ("\n" if final and lines else "")


async def stale_apply(snapshot: str, live: str, edits: Sequence[Edit]) -> tuple[bool, str]:
    fs = InMemoryFilesystem({"f.txt": snapshot})
    patcher = Patcher(fs, InMemorySnapshotStore())
    read = await patcher.read("f.txt")
    fs.set("f.txt", live)
    body = "".join(edit_text(e) for e in edits)
    try:
        await patcher.apply(f"{read.header}\n{body}")
    except StaleTagError:
        return False, fs.get("f.txt")
    return True, fs.get("f.txt")


def edit_text(edit: Edit) -> str:
    rows = "".join(f"+{r}\n" for r in edit.lines)
    colon = "" if edit.op is EditOp.DELETE else ":"
    return f"{edit.describe()}{colon}\n{rows}"
