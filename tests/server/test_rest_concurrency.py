"""Concurrent agents on one notebook through REST, on loopback.

Different cells: every patch lands (stale tags are rebased cell-aware), none is lost.
Same cell: every request lands or gets 409; the file stays valid throughout; nothing a 200
reported is missing at the end.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import nbformat
from testkit.rest import Fetch, write_notebook
from tornado.httpclient import HTTPClientError

CLIENTS = 8
PATCHES = 25


async def post_patch(fetch: Fetch, patch: str) -> tuple[int, dict[str, Any]]:
    try:
        response = await fetch(
            "hashline", "patch", method="POST", body=json.dumps({"patch": patch})
        )
    except HTTPClientError as err:
        assert err.response is not None
        return err.code, json.loads(err.response.body)
    return response.code, json.loads(response.body)


async def read(fetch: Fetch, **params: str) -> dict[str, Any]:
    response = await fetch("hashline", "read", params={"path": "shared.ipynb", **params})
    return dict(json.loads(response.body))


def last_row(view: str) -> int:
    return max(int(r.split(":", 1)[0]) for r in view.split("\n")[1:] if r.split(":")[0].isdigit())


def validate(path: Path) -> nbformat.NotebookNode:
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    return nb


async def test_clients_on_different_cells_all_land(jp_fetch: Fetch, jp_root_dir: Path) -> None:
    path = jp_root_dir / "shared.ipynb"
    write_notebook(path, *(f"x_{c} = 0" for c in range(CLIENTS)))

    async def client(c: int) -> list[int]:
        view = await read(jp_fetch, cells=f"cell-{c}")
        header, line = view["header"], last_row(view["view"])
        statuses = []
        for i in range(PATCHES):
            status, body = await post_patch(
                jp_fetch, f"{header}\ninsert after {line}:\n+x_{c}_{i} = {i}\n"
            )
            statuses.append(status)
            assert status == 200, body
            [section] = body["sections"]
            header, line = section["header"], section["first_changed_line"]
        return statuses

    results = await asyncio.wait_for(asyncio.gather(*(client(c) for c in range(CLIENTS))), 50)
    assert sum(len(r) for r in results) == CLIENTS * PATCHES
    nb = validate(path)
    for c, cell in enumerate(nb.cells):
        expected = [f"x_{c} = 0", *(f"x_{c}_{i} = {i}" for i in range(PATCHES))]
        assert cell.source.split("\n") == expected
        assert cell.id == f"cell-{c}"


async def test_clients_racing_on_one_cell_land_or_conflict(
    jp_fetch: Fetch, jp_root_dir: Path
) -> None:
    """Rounds of 8 simultaneous inserts into one cell; the file is checked between rounds."""
    path = jp_root_dir / "shared.ipynb"
    write_notebook(path, "# above", "race = []", "# below")
    landed: list[str] = []
    statuses: list[int] = []
    rounds = 6
    barrier = asyncio.Barrier(CLIENTS + 1)

    async def client(c: int) -> None:
        for i in range(rounds):
            view = await read(jp_fetch, cells="cell-1")
            await barrier.wait()  # everyone has read: all but one will be stale
            row = f"race.append(({c}, {i}))"
            patch = f"{view['header']}\ninsert after {last_row(view['view'])}:\n+{row}\n"
            status, body = await post_patch(jp_fetch, patch)
            statuses.append(status)
            assert status in (200, 409), body
            if status == 200:
                landed.append(row)
            else:
                assert body["error"] == "stale_tag" and "Nothing was written" in body["message"]
            await barrier.wait()  # round over: the checker looks at the file

    async def checker() -> None:
        for _ in range(rounds):
            await barrier.wait()
            await barrier.wait()
            race = validate(path).cells[1].source.split("\n")
            assert sorted(race[1:]) == sorted(landed)

    await asyncio.wait_for(asyncio.gather(checker(), *(client(c) for c in range(CLIENTS))), 50)
    nb = validate(path)
    race = nb.cells[1].source.split("\n")
    assert race[0] == "race = []"
    assert sorted(race[1:]) == sorted(landed)
    assert len(statuses) == CLIENTS * rounds and statuses.count(200) == len(landed) >= rounds
    assert [c.source for c in (nb.cells[0], nb.cells[2])] == ["# above", "# below"]
