"""Enormous inputs: limits answer 413, memory stays bounded, big-but-allowed work still lands.

- Engine: a patch, a file or a write over its limit is a `TooLargeError` before any parsing,
  and refusing it allocates little beyond the input itself (tracemalloc peak).
- REST: request bodies, patches and files over the configured limits get 413 with the file
  untouched; the default 16 MiB body limit holds for a body just over it.
- Allowed extremes work: a 1 MiB single line, 5,000 edits in one patch, a 3,000-cell notebook.
"""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any

import nbformat
import pytest
from testkit.faults import TALLY
from testkit.rest import Api, write_notebook

from jupyter_hashline.hashline import (
    InMemoryFilesystem,
    InMemorySnapshotStore,
    Patcher,
    TooLargeError,
)
from jupyter_hashline.notebook import NotebookFilesystem

MIB = 1024 * 1024


async def peak_bytes(work: Callable[[], Awaitable[Any]]) -> int:
    """Peak memory traced while `work` runs (it must raise TooLargeError)."""
    tracemalloc.start()
    try:
        with pytest.raises(TooLargeError):
            await work()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def small_engine(fs: InMemoryFilesystem) -> Patcher:
    return Patcher(
        NotebookFilesystem(fs), InMemorySnapshotStore(), max_patch_bytes=MIB, max_file_bytes=2 * MIB
    )


async def test_oversized_patches_are_refused_with_bounded_memory() -> None:
    fs = InMemoryFilesystem({"a.py": "a = 1\n"})
    patcher = small_engine(fs)
    view = await patcher.read("a.py")
    rows = "+" + "x" * 99 + "\n"
    text_patch = f"{view.header}\ninsert tail:\n" + rows * (4 * MIB // 100)  # ~4 MiB, 40k rows
    tail = {"op": "insert_tail", "lines": ["x" * 99] * (4 * MIB // 100)}
    json_patch = {"path": "a.py", "tag": view.tag, "edits": [tail]}
    patches: list[Any] = [text_patch, json_patch]
    for patch in patches:
        size = len(json.dumps(patch)) if isinstance(patch, dict) else len(patch)
        peak = await peak_bytes(partial(patcher.apply, patch))
        # Refused before parsing: no per-row objects, at most a copy or two of the input.
        assert peak < 3 * size, (peak, size)
        TALLY["inputs tried"] += 1
        TALLY["inputs clean errors"] += 1
    assert fs.get("a.py") == "a = 1\n"


async def test_oversized_files_and_writes_are_refused_with_bounded_memory() -> None:
    big = "y = 1\n" * (3 * MIB // 6)
    fs = InMemoryFilesystem({"big.py": big})
    patcher = small_engine(fs)
    peak = await peak_bytes(lambda: patcher.read("big.py"))
    assert peak < 2 * len(big)
    peak = await peak_bytes(lambda: patcher.write("new.py", big))
    assert peak < 2 * len(big)
    assert not await fs.exists("new.py")
    TALLY["inputs tried"] += 2
    TALLY["inputs clean errors"] += 2


async def test_big_but_allowed_work_lands() -> None:
    line = "s = '" + "z" * MIB + "'"
    lines = "".join(f"v{n} = {n}\n" for n in range(10_000))
    fs = InMemoryFilesystem({"wide.py": line + "\n", "long.py": lines})
    patcher = Patcher(NotebookFilesystem(fs), InMemorySnapshotStore())
    wide = await patcher.read("wide.py")
    await patcher.apply(f"{wide.header}\nreplace 1:\n+{line[:-1]}!'\n")
    assert fs.get("wide.py").endswith("z!'\n")
    long = await patcher.read("long.py")
    edits = "".join(f"replace {n}:\n+v{n} = -{n}\n" for n in range(1, 10_001, 2))
    result = await patcher.apply(f"{long.header}\n{edits}")
    assert result.sections[0].written
    assert fs.get("long.py").count(" = -") == 5_000


@pytest.mark.parametrize(
    "hashline_config",
    [{"max_request_bytes": 64 * 1024, "max_patch_bytes": 16 * 1024, "max_file_bytes": 32 * 1024}],
    indirect=True,
)
async def test_rest_limits_answer_413_and_touch_nothing(api: Api, jp_root_dir: Path) -> None:
    write_notebook(jp_root_dir / "nb.ipynb", "a = 1")
    (jp_root_dir / "huge.py").write_text("h = 1\n" * 10_000)
    before = (jp_root_dir / "nb.ipynb").read_bytes()
    _, read = await api("read", params={"path": "nb.ipynb"})
    rows = "".join(f"+row_{n} = {n}\n" for n in range(2_000))
    cells = "".join(f"# %% [code]\nc{n} = {n}\n" for n in range(3_000))
    cases: list[tuple[str, dict[str, Any]]] = [
        ("read", {"params": {"path": "huge.py"}}),
        ("patch", {"method": "POST", "body": {"patch": f"{read['header']}\ninsert tail:\n{rows}"}}),
        ("patch", {"method": "POST", "raw_body": b'{"patch": "' + b"x" * 70_000 + b'"}'}),
        ("write", {"method": "POST", "body": {"path": "nb.ipynb", "content": cells}}),
        ("write", {"method": "POST", "body": {"path": "line.py", "content": "w" * 40_000}}),
    ]
    for route, kwargs in cases:
        status, body = await api(route, **kwargs)
        assert (status, body["error"]) == (413, "too_large"), (route, body)
        assert "limit" in body["message"] or "at most" in body["message"]
    assert (jp_root_dir / "nb.ipynb").read_bytes() == before
    assert not (jp_root_dir / "line.py").exists()


async def test_default_body_limit_holds_just_over_16_mib(api: Api, jp_root_dir: Path) -> None:
    (jp_root_dir / "a.py").write_text("a = 1\n")
    body = json.dumps({"path": "a.py", "content": "q" * (16 * MIB)}).encode()
    status, payload = await api("write", method="POST", raw_body=body)
    assert (status, payload["error"]) == (413, "too_large")
    assert (jp_root_dir / "a.py").read_text() == "a = 1\n"


async def test_a_3000_cell_notebook_reads_and_takes_a_one_line_edit(
    api: Api, jp_root_dir: Path
) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(f"x_{n} = {n}", id=f"c{n}") for n in range(3_000)]
    nbformat.write(nb, jp_root_dir / "big.ipynb")
    _, read = await api("read", params={"path": "big.ipynb", "cells": "c2999"})
    status, body = await api(
        "patch", method="POST", body={"patch": f"{read['header']}\nreplace 6000:\n+x_2999 = -1\n"}
    )
    assert status == 200, body
    saved = nbformat.read(jp_root_dir / "big.ipynb", as_version=4)
    assert saved.cells[-1].source == "x_2999 = -1" and len(saved.cells) == 3_000


@pytest.mark.parametrize(
    "hashline_config", [{"max_edits_per_patch": 5, "max_view_lines": 50}], indirect=True
)
async def test_edit_count_and_view_size_limits_answer_413_naming_the_trait(
    api: Api, jp_root_dir: Path
) -> None:
    text = "".join(f"v{n} = {n}\n" for n in range(1, 201))
    (jp_root_dir / "long.py").write_text(text)
    status, body = await api("read", params={"path": "long.py"}, expect=413)
    assert (status, body["error"]) == (413, "too_large")
    assert (
        "200 lines, over the limit of 50" in body["message"] and "max_view_lines" in body["message"]
    )
    _, part = await api("read", params={"path": "long.py", "offset": "1", "limit": "50"})
    edits = [{"op": "replace", "start": n, "end": n, "lines": [f"v{n} = 0"]} for n in range(1, 7)]
    section = {"path": "long.py", "tag": part["tag"], "edits": edits}
    status, body = await api("patch", method="POST", body={"edits": section}, expect=413)
    assert (status, body["error"]) == (413, "too_large")
    assert "6 edit operations, over the limit of 5" in body["message"]
    assert "max_edits_per_patch" in body["message"]
    assert (jp_root_dir / "long.py").read_text() == text
    status, _ = await api("patch", method="POST", body={"edits": {**section, "edits": edits[:5]}})
    assert status == 200


@pytest.mark.parametrize("hashline_config", [{"max_edits_per_patch": 5}], indirect=True)
async def test_only_an_edit_body_is_counted_as_edits(api: Api, jp_root_dir: Path) -> None:
    """A body over the edit limit is refused before it is parsed; a write whose content has
    lines that read like verbs (SQL, say) is not an edit and is never counted."""
    sql = "".join(f"delete from t{n} where id = {n};\n" for n in range(20))
    status, body = await api(
        "write", method="POST", body={"path": "purge.sql", "content": sql, "overwrite": True}
    )
    assert status == 200, body
    assert (jp_root_dir / "purge.sql").read_text() == sql
    _, read = await api("read", params={"path": "purge.sql"})
    patch = read["header"] + "\n" + "".join(f"delete {n}\n" for n in range(1, 7))
    status, body = await api("patch", method="POST", body={"patch": patch}, expect=413)
    assert (status, body["error"]) == (413, "too_large")
    assert "6 edit operations, over the limit of 5" in body["message"]
    assert (jp_root_dir / "purge.sql").read_text() == sql
