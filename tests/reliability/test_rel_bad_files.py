"""Invalid notebooks, binary files and unicode edge cases, on a real disk.

- Invalid notebooks: anything that is not a readable v4 notebook is refused with
  `InvalidNotebookError` (or, if it reads, cannot be written); the file is never touched.
- Binary files (random bytes, NULs, invalid UTF-8): `NotTextError`, never a write.
- Unicode: a BOM and CRLF survive an edit byte for byte; RTL marks and combining characters
  are ordinary text (edited exactly, tags stable); a lone surrogate or a NUL is never written.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import nbformat
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from testkit.faults import TALLY

from jupyter_hashline.hashline import (
    DiskFilesystem,
    HashlineError,
    InMemorySnapshotStore,
    NotTextError,
    Patcher,
    section_tag,
)
from jupyter_hashline.notebook import InvalidNotebookError, NotebookFilesystem


def engine(root: Path) -> Patcher:
    return Patcher(NotebookFilesystem(DiskFilesystem(root)), InMemorySnapshotStore())


def valid_cell() -> dict[str, object]:
    return {"cell_type": "code", "id": "c1", "metadata": {}, "source": "x = 1",
            "outputs": [], "execution_count": None}  # fmt: skip


def nb_text(**overrides: object) -> str:
    nb: dict[str, object] = {
        "cells": [valid_cell()],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    nb.update(overrides)
    return json.dumps(nb)


INVALID_NOTEBOOKS = {
    "not-json": "{ this is not json",
    "empty": "",
    "json-list": "[1, 2, 3]",
    "json-string": '"a notebook"',
    "no-cells": json.dumps({"metadata": {}, "nbformat": 4, "nbformat_minor": 5}),
    "cells-not-list": nb_text(cells={"a": 1}),
    "cell-not-object": nb_text(cells=["x = 1"]),
    "bad-cell-type": nb_text(cells=[{**valid_cell(), "cell_type": "spreadsheet"}]),
    "source-is-number": nb_text(cells=[{**valid_cell(), "source": 42}]),
    "outputs-not-list": nb_text(cells=[{**valid_cell(), "outputs": "none"}]),
    "nbformat-99": nb_text(nbformat=99),
    "nbformat-string": nb_text(nbformat="4"),
    "metadata-list": nb_text(metadata=[]),
    "truncated": nb_text()[:-7],
}


@pytest.mark.parametrize("name", sorted(INVALID_NOTEBOOKS))
async def test_invalid_notebooks_are_never_written(tmp_path: Path, name: str) -> None:
    path = tmp_path / "bad.ipynb"
    path.write_text(INVALID_NOTEBOOKS[name])
    before = path.read_bytes()
    patcher = engine(tmp_path)
    TALLY["inputs tried"] += 1
    try:
        view = await patcher.read("bad.ipynb")
    except HashlineError as err:
        assert isinstance(err, (InvalidNotebookError, NotTextError)) and err.message
        header = "[bad.ipynb#0000]"
    else:
        header = view.header
    for attempt in (
        lambda: patcher.apply(f"{header}\ninsert tail:\n+y = 2\n"),
        lambda: patcher.write("bad.ipynb", "# %% [code]\ny = 2\n"),
    ):
        with pytest.raises(HashlineError) as refused:
            await attempt()
        assert refused.value.message
        assert path.read_bytes() == before
    TALLY["inputs clean errors"] += 1


BINARY = [
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
    b"plain text then a NUL \x00 here\n",
    b"\xff\xfe\x00a\x00b",
    b"caf\xe9 latin-1\n",
    b"\xed\xa0\x80 encoded surrogate\n",
    b"\xc3",
]


@pytest.mark.parametrize("data", BINARY)
@pytest.mark.parametrize("name", ["blob.py", "blob.ipynb"])
async def test_binary_files_are_refused_and_untouched(
    tmp_path: Path, data: bytes, name: str
) -> None:
    (tmp_path / name).write_bytes(data)
    patcher = engine(tmp_path)
    TALLY["inputs tried"] += 3
    with pytest.raises(NotTextError) as refused:
        await patcher.read(name)
    assert "not" in refused.value.message and refused.value.status == 415
    for attempt in (
        lambda: patcher.apply(f"[{name}#{section_tag('')}]\ninsert tail:\n+x\n"),
        lambda: patcher.write(name, "# %% [code]\nx = 1\n"),
    ):
        with pytest.raises(HashlineError):
            await attempt()
    assert (tmp_path / name).read_bytes() == data
    TALLY["inputs clean errors"] += 3


@settings(max_examples=100, deadline=None, derandomize=True)
@given(st.binary(max_size=200))
def test_any_bytes_read_as_text_or_refused_cleanly(data: bytes) -> None:
    async def run(root: Path) -> None:
        (root / "f.py").write_bytes(data)
        TALLY["inputs tried"] += 1
        try:
            view = await engine(root).read("f.py")
        except NotTextError:
            TALLY["inputs clean errors"] += 1
            return
        assert "\x00" not in view.text
        data.decode("utf-8")  # only valid UTF-8 reads

    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(run(Path(folder)))


async def test_bom_and_crlf_survive_an_edit_byte_for_byte(tmp_path: Path) -> None:
    raw = "\ufeffa = 1\r\nb = 2\r\nc = 3\r\n".encode()
    (tmp_path / "w.py").write_bytes(raw)
    patcher = engine(tmp_path)
    view = await patcher.read("w.py")
    assert view.text == "a = 1\nb = 2\nc = 3\n"
    await patcher.apply(f"{view.header}\nreplace 2:\n+b = 20\n")
    assert (tmp_path / "w.py").read_bytes() == "\ufeffa = 1\r\nb = 20\r\nc = 3\r\n".encode()


UNICODE_ROWS = [
    "name = '\u05e9\u05dc\u05d5\u05dd'  # Hebrew, right to left",
    "label = '\u202eevil\u202c'  # RTL override",
    "accent = 'e\u0301'  # combining acute",
    "stack = 'a\u0300\u0301\u0302\u0303'",
    "emoji = '\U0001f600\u200d\U0001f4bb'",
    "zero_width = 'a\u200bb'",
    "bom_inside = '\ufeff'",
]


@pytest.mark.parametrize("name", ["u.py", "u.ipynb"])
async def test_rtl_and_combining_marks_are_edited_exactly(tmp_path: Path, name: str) -> None:
    patcher = engine(tmp_path)
    content = "x = 1\n" if name == "u.py" else "# %% [code] id=c1\nx = 1\n"
    await patcher.write(name, content)
    view = await patcher.read(name)
    body = "".join(f"+{row}\n" for row in UNICODE_ROWS)
    result = await patcher.apply(f"{view.header}\ninsert tail:\n{body}")
    again = await patcher.read(name)
    assert again.text.endswith("".join(f"{row}\n" for row in UNICODE_ROWS))
    assert again.tag == result.sections[0].tag == section_tag(again.text)
    if name == "u.ipynb":
        nb = nbformat.read(tmp_path / name, as_version=4)
        nbformat.validate(nb)
        assert nb.cells[0].source.split("\n")[1:] == UNICODE_ROWS
    TALLY["inputs tried"] += len(UNICODE_ROWS)


@pytest.mark.parametrize("bad", ["\x00", "\ud800", "\udfff", "ok \udc80 not"])
@pytest.mark.parametrize("name", ["u.py", "u.ipynb"])
async def test_nul_and_lone_surrogates_are_never_written(
    tmp_path: Path, bad: str, name: str
) -> None:
    patcher = engine(tmp_path)
    content = "x = 1\n" if name == "u.py" else "# %% [code] id=c1\nx = 1\n"
    await patcher.write(name, content)
    before = (tmp_path / name).read_bytes()
    view = await patcher.read(name)
    TALLY["inputs tried"] += 2
    for attempt in (
        lambda: patcher.apply(f"{view.header}\ninsert tail:\n+s = '{bad}'\n"),
        lambda: patcher.write(name, content + f"s = '{bad}'\n", tag=view.tag),
    ):
        with pytest.raises(NotTextError) as refused:
            await attempt()
        assert "Nothing was written" in refused.value.message or "Refused" in refused.value.message
        assert (tmp_path / name).read_bytes() == before
        TALLY["inputs clean errors"] += 1
