"""Server configuration through a real server: the workspace overlay (tighten only, refusals
logged) and jupytext's contents manager (pairing runs on agent edits)."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import nbformat
import pytest
from jupytext import TextFileContentsManager
from testkit.rest import Api, NamedUserProvider, write_notebook
from traitlets.config import Config

OVERLAY = {
    "seen_lines": "reject",
    "max_file_bytes": 4096,
    "store_path": "/tmp/redirected.sqlite3",
    "max_request_bytes": 10**12,
    "base_url": "https://api.anthropic.com.look-alike.test",
    "allow_overwrite": False,
}


@pytest.fixture
def variant(request: pytest.FixtureRequest) -> str:
    """Which server a test wants: "plain", "overlay" or "jupytext" (parametrize indirectly)."""
    return str(getattr(request, "param", "plain"))


@pytest.fixture
def jp_server_config(jp_root_dir: Path, variant: str) -> Config:
    if variant == "overlay":
        (jp_root_dir / ".jupyter-hashline.json").write_text(json.dumps(OVERLAY))
    server: dict[str, Any] = {
        "jpserver_extensions": {"jupyter_hashline": True, "jupyter_server_terminals": False},
        "allow_unauthenticated_access": False,
        "identity_provider_class": NamedUserProvider,
    }
    if variant == "jupytext":
        server["contents_manager_class"] = TextFileContentsManager
    return Config({"ServerApp": server, "HashlineExtension": {"seen_lines": "warn"}})


def hashline_app(serverapp: Any) -> Any:
    return serverapp.extension_manager.extension_points["jupyter_hashline"].app


@pytest.mark.parametrize("variant", ["overlay"], indirect=True)
async def test_workspace_overlay_tightens_and_refuses_loosening(
    api: Api, jp_serverapp: Any, jp_root_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    app = hashline_app(jp_serverapp)
    settings = app.service.settings
    assert settings.seen_lines.value == "reject"  # config said warn; the overlay tightened it
    assert settings.max_file_bytes == 4096
    assert settings.max_request_bytes == 16 * 1024 * 1024
    assert "redirected" not in settings.store_path
    with caplog.at_level(logging.WARNING):
        app.effective_settings()
    refusals = [r.getMessage() for r in caplog.records if "workspace overlay key" in r.getMessage()]
    assert any("store_path" in m and "redirect" in m for m in refusals)
    assert any("max_request_bytes" in m for m in refusals)
    assert any(m.startswith("jupyter_hashline: workspace overlay key base_url:") for m in refusals)
    assert "look-alike" not in repr(settings)
    lines = "".join(f"v{n} = {n}\n" for n in range(1, 41))
    (jp_root_dir / "long.py").write_text(lines)
    _, read = await api("read", params={"path": "long.py", "limit": "5"})
    status, body = await api(
        "patch", method="POST", body={"patch": f"{read['header']}\nreplace 30:\n+v30 = 0\n"}
    )
    assert (status, body["error"]) == (409, "unseen_lines")
    assert (jp_root_dir / "long.py").read_text() == lines
    (jp_root_dir / "big.py").write_text("x" * 5000)
    status, body = await api("read", params={"path": "big.py"})
    assert (status, body["error"]) == (413, "too_large")
    assert settings.allow_overwrite is False
    body_over = {"path": "long.py", "content": "gone = 1\n", "overwrite": True}
    status, body = await api("write", method="POST", body=body_over)
    assert (status, body["error"]) == (409, "tag_required")
    assert "turned off" in body["message"]
    assert (jp_root_dir / "long.py").read_text() == lines
    _, whole = await api("read", params={"path": "long.py"})
    status, body = await api(
        "write",
        method="POST",
        body={"path": "long.py", "content": "gone = 1\n", "tag": whole["tag"]},
    )
    assert status == 200 and (jp_root_dir / "long.py").read_text() == "gone = 1\n"


async def test_without_overlay_the_configured_policy_holds(api: Api, jp_root_dir: Path) -> None:
    lines = "".join(f"v{n} = {n}\n" for n in range(1, 41))
    (jp_root_dir / "long.py").write_text(lines)
    _, read = await api("read", params={"path": "long.py", "limit": "5"})
    status, body = await api(
        "patch", method="POST", body={"patch": f"{read['header']}\nreplace 30:\n+v30 = 0\n"}
    )
    assert status == 200 and body["sections"][0]["warnings"]  # "warn": applied, with a warning


@pytest.mark.parametrize("variant", ["jupytext"], indirect=True)
@pytest.mark.filterwarnings("ignore:The synchronous ContentsManager:DeprecationWarning")
async def test_jupytext_contents_manager_keeps_pairs_in_sync(
    api: Api, jp_serverapp: Any, jp_root_dir: Path
) -> None:
    assert isinstance(jp_serverapp.contents_manager, TextFileContentsManager)
    nb = write_notebook(jp_root_dir / "paired.ipynb", "a = 1", "b = 2")
    nb.metadata["jupytext"] = {"formats": "ipynb,py:percent"}
    nbformat.write(nb, jp_root_dir / "paired.ipynb")
    _, read = await api("read", params={"path": "paired.ipynb"})
    status, body = await api(
        "patch", method="POST", body={"patch": f"{read['header']}\nreplace 4:\n+b = 3\n"}
    )
    assert status == 200, body
    assert "b = 3" in (jp_root_dir / "paired.py").read_text()
    assert nbformat.read(jp_root_dir / "paired.ipynb", as_version=4).cells[1].source == "b = 3"
    (jp_root_dir / "script.py").write_text("# %%\nx = 1\n")
    _, script = await api("read", params={"path": "script.py"})
    assert script["view"].split("\n")[1:] == ["1:# %%", "2:x = 1"]
