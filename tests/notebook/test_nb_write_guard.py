"""The `WriteGuard` seam of `NotebookFilesystem`: it sees every notebook read and may refuse a
notebook write before anything is written."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest
from testkit.nb_files import analysis, dumps

from jupyter_hashline.hashline import HashlineError, InMemoryFilesystem
from jupyter_hashline.notebook import NotebookFilesystem, WriteGuard, project_notebook


class Refused(HashlineError):
    pass


class RecordingGuard:
    def __init__(self, refuse: bool = False) -> None:
        self.refuse = refuse
        self.shown_texts: list[tuple[str, str]] = []
        self.asked: list[tuple[str, str]] = []

    def shown(self, path: str, text: str) -> None:
        self.shown_texts.append((path, text))

    async def before_write(self, path: str, read_now: Callable[[], Awaitable[str]]) -> None:
        self.asked.append((path, await read_now()))
        if self.refuse:
            raise Refused(f"{path} changed")


def notebooks(guard: RecordingGuard) -> tuple[InMemoryFilesystem, NotebookFilesystem]:
    inner = InMemoryFilesystem({"a.ipynb": dumps(analysis()), "notes.txt": "plain\n"})
    checked: WriteGuard = guard  # the recording guard is a WriteGuard
    return inner, NotebookFilesystem(inner, guard=checked)


async def test_the_guard_sees_notebook_reads_and_is_asked_before_notebook_writes() -> None:
    guard = RecordingGuard()
    inner, fs = notebooks(guard)
    view = await fs.read_text("a.ipynb")
    await fs.read_text("notes.txt")
    assert guard.shown_texts == [("a.ipynb", view)]  # notebooks only
    edited = view.replace("# Sales analysis", "# Sales analysis, 2024")
    await fs.write_text("a.ipynb", edited)
    await fs.write_text("notes.txt", "other\n")
    assert guard.asked == [("a.ipynb", view)]  # read_now: the notebook before the write
    assert guard.shown_texts == [("a.ipynb", view)]  # read_now is not a read it is shown
    assert await fs.read_text("a.ipynb") == edited
    assert inner.get("notes.txt") == "other\n"


async def test_a_refused_write_writes_nothing() -> None:
    guard = RecordingGuard(refuse=True)
    inner, fs = notebooks(guard)
    before = inner.get("a.ipynb")
    view = await fs.read_text("a.ipynb")
    with pytest.raises(Refused, match=r"a\.ipynb changed"):
        await fs.write_text("a.ipynb", view.replace("# Sales analysis", "# Changed"))
    assert inner.get("a.ipynb") == before
    assert await fs.read_text("a.ipynb") == project_notebook(analysis())
