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
    """Which server a test wants: "plain", "overlay", "jupytext" or "nbformat" (its layout
    trait set; parametrize indirectly)."""
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
    hashline = {"seen_lines": "warn", **({"layout": "nbformat"} if variant == "nbformat" else {})}
    return Config({"ServerApp": server, "HashlineExtension": hashline})


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


async def test_an_edit_through_the_server_keeps_the_files_layout(
    api: Api, jp_serverapp: Any, jp_root_dir: Path
) -> None:
    assert hashline_app(jp_serverapp).service.settings.layout == "keep"
    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(f"x = {n}", id=f"c{n}") for n in range(3)]
    )
    colab = json.dumps(json.loads(nbformat.writes(nb)), indent=2)  # Colab: indent 2, no newline
    (jp_root_dir / "colab.ipynb").write_text(colab)
    _, read = await api("read", params={"path": "colab.ipynb"})
    line = next(n for n, row in enumerate(read["view"].split("\n")) if row.endswith("x = 1"))
    body = {"patch": f"{read['header']}\nreplace {line}:\n+x = 10\n"}
    status, reply = await api("patch", method="POST", body=body)
    assert status == 200, reply
    assert (jp_root_dir / "colab.ipynb").read_text() == colab.replace('"x = 1"', '"x = 10"')
    _, read = await api("read", params={"path": "colab.ipynb"})
    body = {"patch": f"{read['header']}\nreplace {line}:\n+x = 11\n", "layout": "nbformat"}
    status, reply = await api("patch", method="POST", body=body)
    assert status == 200, reply
    written = (jp_root_dir / "colab.ipynb").read_text()
    assert written == nbformat.writes(nbformat.reads(written, as_version=4)) + "\n"


@pytest.mark.parametrize("variant", ["jupytext"], indirect=True)
@pytest.mark.parametrize(
    ("fmt", "twin"), [("py:percent", "paired.py"), ("md", "paired.md"), ("md:myst", "paired.md")]
)
@pytest.mark.filterwarnings("ignore:The synchronous ContentsManager:DeprecationWarning")
async def test_a_pair_edited_in_directory_mode_opens_in_a_server_with_jupytext(
    jp_fetch: Any, jp_root_dir: Path, fmt: str, twin: str
) -> None:
    """The CLI or MCP `--root` edits the pair; JupyterLab (a server with jupytext) then opens
    the notebook (no "paired.ipynb is more recent than paired.py") and sees the edit."""
    import jupytext

    from jupyter_hashline.tools import open_directory, run_tool

    nb = write_notebook(jp_root_dir / "paired.ipynb", "a = 1", "b = 2")
    nb.metadata["jupytext"] = {"formats": f"ipynb,{fmt}"}
    nbformat.write(nb, jp_root_dir / "paired.ipynb")
    jupytext.write(nb, jp_root_dir / twin, fmt=fmt)
    workspace = open_directory(jp_root_dir, ":memory:")
    try:
        read = await run_tool(workspace, "notebook_read", {"path": "paired.ipynb"}, agent="a")
        rows = read.text.split("\n")
        line = next(n for n, row in enumerate(rows) if row.endswith("b = 2"))
        patch = f"{rows[0]}\nreplace {line}:\n+b = 3\n"
        edited = await run_tool(workspace, "notebook_edit", {"patch": patch}, agent="a")
        assert not edited.is_error, edited.text
    finally:
        await workspace.aclose()
    response = await jp_fetch("api", "contents", "paired.ipynb", method="GET")
    assert response.code == 200
    model = json.loads(response.body)
    assert [c["source"] for c in model["content"]["cells"]][-1] == "b = 3"
    assert "b = 3" in (jp_root_dir / twin).read_text()


@pytest.mark.parametrize("variant", ["nbformat"], indirect=True)
async def test_the_layout_trait_makes_every_edit_write_nbformats_layout(
    api: Api, jp_serverapp: Any, jp_root_dir: Path
) -> None:
    assert hashline_app(jp_serverapp).service.settings.layout == "nbformat"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1", id="c1")])
    (jp_root_dir / "colab.ipynb").write_text(json.dumps(json.loads(nbformat.writes(nb)), indent=2))
    _, read = await api("read", params={"path": "colab.ipynb"})
    line = next(n for n, row in enumerate(read["view"].split("\n")) if row.endswith("x = 1"))
    body = {"patch": f"{read['header']}\nreplace {line}:\n+x = 2\n"}
    status, reply = await api("patch", method="POST", body=body)
    assert status == 200, reply
    written = (jp_root_dir / "colab.ipynb").read_text()
    assert written == nbformat.writes(nbformat.reads(written, as_version=4)) + "\n"
    assert '"x = 2"' in written
