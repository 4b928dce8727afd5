"""The recorder behind the reliability summary can show a failure: a meta-test.

Each kind of failure the summary reports is planted once and must be counted: a lost edit, a
duplicated edit, a torn file (through a real server's writes and the files it left), and an
unexpected 500 from a real server whose storage fails with nobody injecting a fault. Counts
are taken before the assert that fails on them, so a failing check still shows in the tally.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from testkit.recorder import Recorder
from testkit.rest import Api, write_notebook


@pytest.fixture
def recorder() -> Recorder:
    """A private recorder for this module's `api` calls (the run's own stays clean)."""
    return Recorder()


async def agent_rows(api: Api, path: str, rows: list[str]) -> list[str]:
    """Append `rows` to the notebook's first cell one patch at a time; the rows acknowledged."""
    _, read = await api("read", params={"path": path})
    header, line, done = read["header"], 2, []
    for row in rows:
        status, body = await api(
            "patch", method="POST", body={"patch": f"{header}\ninsert after {line}:\n+{row}\n"}
        )
        assert status == 200, body
        done.append(row)
        header, line = body["sections"][0]["header"], line + 1
    return done


async def test_a_planted_lost_duplicated_and_torn_edit_are_each_counted(
    api: Api, recorder: Recorder, jp_root_dir: Path
) -> None:
    for name in ("lost.ipynb", "twice.ipynb", "torn.ipynb", "clean.ipynb"):
        write_notebook(jp_root_dir / name, "seed = 0")
    ledger = recorder.ledger()
    for name in ("lost.ipynb", "twice.ipynb", "torn.ipynb", "clean.ipynb"):
        stem = name.split(".")[0]
        ledger.acknowledge(
            name, *await agent_rows(api, name, [f"{stem}_{n} = {n}" for n in range(3)])
        )
    lost = jp_root_dir / "lost.ipynb"
    lost.write_text(lost.read_text().replace('"lost_1 = 1\\n",\n', ""))  # a landed row vanishes
    twice = jp_root_dir / "twice.ipynb"
    twice.write_text(
        twice.read_text().replace('"twice_1 = 1\\n",', '"twice_1 = 1\\n", "twice_1 = 1\\n",')
    )
    torn = jp_root_dir / "torn.ipynb"
    torn.write_bytes(torn.read_bytes()[: len(torn.read_bytes()) // 2])  # a save cut halfway
    files = {p.name: p.read_bytes() for p in jp_root_dir.glob("*.ipynb")}

    with pytest.raises(AssertionError):  # the check fails the test ...
        found = ledger.check(files)
        assert found.ok, found
    # ... and the recorder has counted it all the same
    assert recorder.edits_checked == 12
    assert recorder.lost == ["lost.ipynb: lost_1 = 1"]
    assert recorder.duplicated == ["twice.ipynb: twice_1 = 1"]
    assert recorder.torn == [f"torn.ipynb: torn_{n} = {n}" for n in range(3)]
    summary = "\n".join(recorder.summary())
    assert "lost / duplicated / torn" in summary and "1 / 1 / 3" in summary


async def test_a_planted_unexpected_500_is_counted_and_an_injected_one_is_expected(
    api: Api,
    recorder: Recorder,
    jp_root_dir: Path,
    jp_serverapp: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    write_notebook(jp_root_dir / "nb.ipynb", "seed = 0")
    _, read = await api("read", params={"path": "nb.ipynb"})

    async def save(model: Any, path: str = "") -> Any:
        raise RuntimeError("a storage bug nobody planned for")

    monkeypatch.setattr(jp_serverapp.contents_manager, "save", save)
    patch = {"patch": f"{read['header']}\nreplace 2:\n+seed = 1\n"}
    status, body = await api("patch", method="POST", body=patch)
    assert (status, body["error"]) == (500, "write_failed")
    assert recorder.unexpected == ["patch 500"]
    with recorder.injecting():  # the same failure, injected on purpose: expected
        status, _ = await api("patch", method="POST", body=patch)
    assert status == 500 and recorder.expected["5xx"] == 1 and len(recorder.unexpected) == 1
    status, _ = await api("read", params={"path": "missing.ipynb"})
    assert status == 404 and recorder.expected["4xx"] == 0  # a 4xx is never an unexpected 5xx
    assert recorder.requests == 4 and recorder.answers == {"2xx": 1, "5xx": 2, "4xx": 1}
    assert "unexpected: patch 500" in "\n".join(recorder.summary())
