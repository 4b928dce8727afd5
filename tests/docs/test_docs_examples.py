"""The agents quickstart's examples, run: the curl read and patch against a real Jupyter server
print what the page shows, and the VS Code entry shown is the one `--print-config` prints."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bench.server import TOKEN, LocalServer

REPO = Path(__file__).resolve().parents[2]
PAGE = (REPO / "docs" / "quickstart" / "agents.md").read_text()


def section(title: str) -> str:
    start = PAGE.index(f"## {title}\n")
    end = PAGE.find("\n## ", start + 1)
    return PAGE[start:] if end < 0 else PAGE[start:end]


def fenced(markdown: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", markdown, re.S)


@pytest.mark.slow
def test_the_curl_read_and_patch_print_what_the_page_shows(tmp_path: Path) -> None:
    if shutil.which("curl") is None or shutil.which("jq") is None:
        pytest.skip("curl and jq are needed to run the page's commands as a reader would")
    curl = section("Over REST, with curl")
    first, patch = fenced(curl, "bash")
    setup, read = first.split("\n", 1)
    read_shown, patch_shown = fenced(curl, "text")
    assert setup == "export JUPYTER_URL=http://localhost:8888 JUPYTER_TOKEN=<token>"
    root = tmp_path / "examples"
    root.mkdir()
    shutil.copy(REPO / "examples" / "sales_analysis.ipynb", root)
    with LocalServer(root, tmp_path / "home") as server:
        env = dict(os.environ, JUPYTER_URL=f"http://127.0.0.1:{server.port}", JUPYTER_TOKEN=TOKEN)
        for command, shown in ((read, read_shown), (patch, patch_shown)):
            done = subprocess.run(
                ["bash", "-c", command], env=env, capture_output=True, text=True, timeout=60
            )
            assert (done.returncode, done.stdout) == (0, shown), done.stderr
        env["JUPYTER_TOKEN"] = "not-the-token"  # "Without the token the server answers 403"
        status = subprocess.run(
            ["bash", "-c", read.replace("| jq -r .view", "-o /dev/null -w '%{http_code}'")],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert status.stdout == "403"
    assert "dict(sorted(totals.items()))" in (root / "sales_analysis.ipynb").read_text()


def test_the_vscode_server_entry_shown_is_the_one_printed(data_dir: Path) -> None:
    shown = next(
        json.loads(block)
        for block in fenced(section("Print the configuration for your host"), "json")
        if '"inputs"' in block
    )
    url = shown["servers"]["jupyter-hashline"]["args"][1]
    argv = ["--server", url, "mcp", "--print-config", "vscode"]
    printed = subprocess.run(
        [sys.executable, "-m", "jupyter_hashline.cli", *argv],
        capture_output=True,
        text=True,
        check=True,
    )
    entry = json.loads(printed.stdout)
    command = entry["servers"]["jupyter-hashline"]["command"]
    shown["servers"]["jupyter-hashline"]["command"] = command  # the reader's own path
    assert entry == shown


def test_a_page_says_where_the_token_comes_from() -> None:
    where = section("Two ways to run the MCP server")
    assert "### Where the token comes from" in where
    assert "jupyter server list" in where and "?token=" in where
