"""jupytext-paired notebooks through a real server: with jupytext's server extension loaded as a
default install loads it (after ours: it then replaces the server's contents manager), and with
jupytext's contents manager configured explicitly.

An agent's edit must update every paired file (JupyterLab opens the notebook afterwards), and a
person's newer edit in the text twin must be what the agent reads and must never be reverted.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import jupytext
import nbformat
import pytest
from jupytext import TextFileContentsManager
from testkit.rest import Api, Fetch, NamedUserProvider, write_notebook
from traitlets.config import Config

pytestmark = [
    pytest.mark.filterwarnings("ignore:The synchronous ContentsManager:DeprecationWarning"),
    pytest.mark.filterwarnings(
        "ignore:A `_load_jupyter_server_extension` function:DeprecationWarning"
    ),
]


@pytest.fixture(params=["default-install", "configured-manager"])
def variant(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def jp_server_config(variant: str) -> Config:
    # A default install enables both extensions by their jupyter_server_config.d files; the
    # server loads extensions in name order, so ours loads first and jupytext's replaces the
    # contents manager afterwards.
    server: dict[str, Any] = {
        "jpserver_extensions": {
            "jupyter_hashline": True,
            "jupyterlab_jupytext": True,
            "jupyter_server_terminals": False,
        },
        "allow_unauthenticated_access": False,
        "identity_provider_class": NamedUserProvider,
    }
    if variant == "configured-manager":
        server["contents_manager_class"] = TextFileContentsManager
    return Config({"ServerApp": server})


def paired(root: Path) -> None:
    """paired.ipynb + paired.py (percent format), the text twin written last."""
    nb = write_notebook(root / "paired.ipynb", "a = 1", "b = 2", "c = 3")
    nb.metadata["jupytext"] = {"formats": "ipynb,py:percent"}
    jupytext.write(nb, root / "paired.ipynb")
    jupytext.write(nb, root / "paired.py", fmt="py:percent")


def person_edits_text_twin(root: Path, old: str, new: str) -> None:
    """A person edits paired.py in an editor, later than the notebook was saved."""
    path = root / "paired.py"
    path.write_text(path.read_text().replace(old, new))
    later = time.time() + 5
    os.utime(path, (later, later))


async def contents_sources(jp_fetch: Fetch) -> list[str]:
    """The cell sources JupyterLab gets for paired.ipynb (the GET must answer 200)."""
    response = await jp_fetch("api", "contents", "paired.ipynb", method="GET")
    assert response.code == 200
    model = nbformat.from_dict(json.loads(response.body)["content"])
    return [cell.source for cell in model.cells]


def line_of(view: str, text: str) -> int:
    row = next(r for r in view.split("\n") if r.endswith(f":{text}"))
    return int(row.split(":", 1)[0])


async def test_the_server_contents_manager_is_the_one_in_use(
    jp_serverapp: Any, variant: str
) -> None:
    manager = jp_serverapp.contents_manager
    assert hasattr(type(manager), "formats"), type(manager)  # jupytext's, in both setups
    service = jp_serverapp.extension_manager.extension_points["jupyter_hashline"].app.service
    assert service.contents._cm is manager


async def test_an_edit_updates_every_paired_file_and_jupyterlab_opens_it(
    api: Api, jp_fetch: Fetch, jp_root_dir: Path
) -> None:
    paired(jp_root_dir)
    _, read = await api("read", params={"path": "paired.ipynb"})
    line = line_of(read["view"], "b = 2")
    status, body = await api(
        "patch", method="POST", body={"patch": f"{read['header']}\nreplace {line}:\n+b = 20\n"}
    )
    assert status == 200, body
    assert "b = 20" in (jp_root_dir / "paired.py").read_text()
    stored = nbformat.read(jp_root_dir / "paired.ipynb", as_version=4)
    assert [c.source for c in stored.cells] == ["a = 1", "b = 20", "c = 3"]
    assert await contents_sources(jp_fetch) == ["a = 1", "b = 20", "c = 3"]


async def test_a_newer_text_twin_is_read_and_never_reverted(
    api: Api, jp_fetch: Fetch, jp_root_dir: Path
) -> None:
    paired(jp_root_dir)
    _, before = await api("read", params={"path": "paired.ipynb"})
    person_edits_text_twin(jp_root_dir, "a = 1", "a = 100")
    _, read = await api("read", params={"path": "paired.ipynb"})
    assert "a = 100" in read["view"]  # what JupyterLab shows, the person's edit included
    line = line_of(read["view"], "c = 3")
    status, body = await api(
        "patch", method="POST", body={"patch": f"{read['header']}\nreplace {line}:\n+c = 30\n"}
    )
    assert status == 200, body
    expected = ["a = 100", "b = 2", "c = 30"]
    assert await contents_sources(jp_fetch) == expected
    text = (jp_root_dir / "paired.py").read_text()
    assert "a = 100" in text and "c = 30" in text
    stored = nbformat.read(jp_root_dir / "paired.ipynb", as_version=4)
    assert [c.source for c in stored.cells] == expected
    # an agent still holding the header from before the person's edit: rebased, nothing lost
    person_edits_text_twin(jp_root_dir, "b = 2", "b = 200")
    stale_line = line_of(before["view"], "c = 3")
    status, body = await api(
        "patch",
        method="POST",
        body={"patch": f"{before['header']}\nreplace {stale_line}:\n+c = 300\n"},
    )
    assert status in (200, 409), body
    sources = await contents_sources(jp_fetch)
    assert sources[:2] == ["a = 100", "b = 200"]  # the person's edits survive either way
    if status == 200:
        assert sources[2] == "c = 300"


@pytest.mark.parametrize("path", ["fresh.ipynb", "sub/fresh.ipynb"])
async def test_a_new_notebook_is_created_under_jupytexts_manager(
    api: Api, jp_fetch: Fetch, jp_root_dir: Path, path: str
) -> None:
    # jupytext's manager is what a default install runs: a new notebook was answered 404 (the
    # byte-storage check stat'ed the file before it existed).
    (jp_root_dir / "sub").mkdir()
    body = {"path": path, "content": "# %% [code]\nz = 1\n"}
    status, reply = await api("write", method="POST", body=body)
    assert status == 200, reply
    assert reply["sections"][0]["op"] == "create"
    stored = nbformat.read(jp_root_dir / path, as_version=4)
    assert [c.source for c in stored.cells] == ["z = 1"]
    response = await jp_fetch("api", "contents", path, method="GET")
    assert json.loads(response.body)["type"] == "notebook"


async def test_a_new_notebook_in_a_missing_folder_is_refused_naming_it(
    api: Api, jp_root_dir: Path
) -> None:
    body = {"path": "nope/fresh.ipynb", "content": "# %% [code]\nz = 1\n"}
    status, reply = await api("write", method="POST", body=body)
    assert (status, reply["error"]) == (404, "not_found")
    assert "the folder nope does not exist" in reply["message"]
    assert not (jp_root_dir / "nope").exists()
