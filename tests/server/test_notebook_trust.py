"""Notebook trust on a real server: an agent's edit keeps a trusted notebook trusted (Jupyter's
own GET says every cell is trusted, its notary finds the file signed), an untrusted notebook
stays untrusted, an output restored from an untrusted version is not signed, and a broken
notary never costs the edit."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import nbformat
import pytest
from jupyter_core.utils import ensure_async
from nbformat.sign import MemorySignatureStore
from testkit.rest import Api, Fetch

NB = "work/trusted.ipynb"
HTML = {"text/html": "<b>rich</b>", "text/plain": "rich"}


def notebook(*, trusted: bool) -> nbformat.NotebookNode:
    """Two code cells, the first with an HTML output (what trust decides on), and a markdown
    cell; the cells flagged as JupyterLab flags the cells of a trusted notebook it saves."""
    new = nbformat.v4
    cells = [
        new.new_code_cell("x = 1", id="c0", outputs=[new.new_output("display_data", data=HTML)]),
        new.new_code_cell("y = 2", id="c1"),
        new.new_markdown_cell("# notes", id="m0"),
    ]
    for cell in cells[:2]:
        cell.metadata["trusted"] = trusted
    return new.new_notebook(cells=cells)


async def person_saves(jp_fetch: Fetch, nb: nbformat.NotebookNode) -> None:
    """A save from JupyterLab: a PUT of the notebook model (Jupyter signs it when every cell
    is trusted)."""
    body = json.dumps({"type": "notebook", "format": "json", "content": nb})
    await jp_fetch("api", "contents", *NB.split("/"), method="PUT", body=body)


async def trusted_cells(jp_fetch: Fetch) -> list[bool]:
    """What Jupyter's GET says, as JupyterLab reads it: each code cell trusted or not."""
    response = await jp_fetch("api", "contents", *NB.split("/"), method="GET")
    cells = json.loads(response.body)["content"]["cells"]
    return [cell["metadata"]["trusted"] for cell in cells if cell["cell_type"] == "code"]


def signed_on_disk(cm: Any, root: Path) -> bool:
    return bool(cm.notary.check_signature(nbformat.read(root / NB, as_version=4)))


async def agent_edit(api: Api, body: str) -> dict[str, Any]:
    status, read = await api("read", params={"path": NB}, schema="ReadResponse")
    assert status == 200, read
    status, reply = await api(
        "patch", method="POST", body={"patch": f"{read['header']}\n{body}"}, schema="PatchResponse"
    )
    assert status == 200, reply
    return reply


async def undo(api: Api, reply: dict[str, Any]) -> dict[str, Any]:
    activity = reply["activity"][0]["id"]
    status, body = await api(
        "revert", method="POST", body={"activity": activity}, schema="RevertResponse"
    )
    assert status == 200, body
    return body


@pytest.fixture
def made(jp_root_dir: Path) -> None:
    """The folder the notebook is saved into."""
    (jp_root_dir / "work").mkdir()


async def test_an_agent_edit_keeps_a_trusted_notebook_trusted(
    api: Api, jp_fetch: Fetch, jp_root_dir: Path, jp_serverapp: Any, made: None
) -> None:
    await person_saves(jp_fetch, notebook(trusted=True))
    assert await trusted_cells(jp_fetch) == [True, True]
    await agent_edit(api, "replace 4:\n+y = 3\n")
    assert "y = 3" in (jp_root_dir / NB).read_text("utf-8")
    assert await trusted_cells(jp_fetch) == [True, True]
    assert signed_on_disk(jp_serverapp.contents_manager, jp_root_dir)
    await agent_edit(api, "insert after 4:\n+# %% [code]\n+z = 4\n")  # a new cell, and again
    assert await trusted_cells(jp_fetch) == [True, True, True]


async def test_an_untrusted_notebook_stays_untrusted(
    api: Api, jp_fetch: Fetch, jp_root_dir: Path, jp_serverapp: Any, made: None
) -> None:
    await person_saves(jp_fetch, notebook(trusted=False))
    assert await trusted_cells(jp_fetch) == [False, False]
    await agent_edit(api, "replace 4:\n+y = 3\n")
    assert await trusted_cells(jp_fetch) == [False, False]
    assert not signed_on_disk(jp_serverapp.contents_manager, jp_root_dir)


async def test_undoing_a_deletion_keeps_trust(
    api: Api, jp_fetch: Fetch, jp_root_dir: Path, made: None
) -> None:
    await person_saves(jp_fetch, notebook(trusted=True))
    deleted = await agent_edit(api, "delete 1..2\n")
    assert await trusted_cells(jp_fetch) == [True]
    await undo(api, deleted)
    assert await trusted_cells(jp_fetch) == [True, True]


async def test_an_output_restored_from_an_untrusted_version_is_not_signed(
    api: Api, jp_fetch: Fetch, jp_root_dir: Path, jp_serverapp: Any, made: None
) -> None:
    """The cell with the HTML output is deleted while the notebook is untrusted; the person
    then trusts what is left; undoing the deletion brings back an output nobody trusted."""
    cm = jp_serverapp.contents_manager
    await person_saves(jp_fetch, notebook(trusted=False))
    deleted = await agent_edit(api, "delete 1..2\n")
    await ensure_async(cm.trust_notebook(NB))
    assert await trusted_cells(jp_fetch) == [True]
    reply = await undo(api, deleted)
    assert "x = 1" in (jp_root_dir / NB).read_text("utf-8")
    assert await trusted_cells(jp_fetch) == [False, False]
    assert not signed_on_disk(cm, jp_root_dir)
    assert "not signed" in json.dumps(reply)


@pytest.mark.parametrize("hashline_config", [{"keep_trust": False}], indirect=True)
async def test_a_server_may_leave_signing_to_jupyter(api: Api, jp_fetch: Fetch, made: None) -> None:
    await person_saves(jp_fetch, notebook(trusted=True))
    await agent_edit(api, "replace 4:\n+y = 3\n")
    assert await trusted_cells(jp_fetch) == [False, False]


class ReadOnlyStore(MemorySignatureStore):
    def store_signature(self, digest: str, algorithm: str) -> None:
        raise OSError("attempt to write a readonly database")


async def test_a_broken_notary_never_costs_the_edit(
    api: Api,
    jp_fetch: Fetch,
    jp_root_dir: Path,
    jp_serverapp: Any,
    made: None,
    caplog: pytest.LogCaptureFixture,
) -> None:
    cm = jp_serverapp.contents_manager
    await person_saves(jp_fetch, notebook(trusted=True))
    signed = ReadOnlyStore()
    digest = cm.notary.compute_signature(nbformat.read(jp_root_dir / NB, as_version=4))
    signed.data[(digest, cm.notary.algorithm)] = None
    cm.notary.store = signed
    with caplog.at_level(logging.WARNING, logger="jupyter_hashline.notebook.trust"):
        reply = await agent_edit(api, "replace 4:\n+y = 3\n")
    assert "y = 3" in (jp_root_dir / NB).read_text("utf-8")
    assert "signed" not in json.dumps(reply)  # the reply claims nothing about trust
    assert "readonly database" in caplog.text
