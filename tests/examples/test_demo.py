"""`jupyter-hashline demo` / `make demo`: the first example's story in the terminal, offline:
the agent reads, edits, runs the cells it changed in a kernel of its own, reads the result."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from bench.server import TOKEN, LocalServer
from jupyter_hashline import demo
from jupyter_hashline.agent.registration import ServerInfo
from jupyter_hashline.demo import Exchange, exchanges, find_row, latest_tag, line_of

REPO = Path(__file__).resolve().parents[2]


def check_story(out: str) -> None:
    assert "Offline: the provider simulator at http://127.0.0.1:" in out
    assert out.count("user: ") == len(demo.STORY_PROMPTS)
    assert "agent calls notebook_read" in out
    assert "agent calls notebook_edit with the patch:" in out
    assert "insert after 26:" in out and "] updated" in out
    assert 'agent calls notebook_run(path="sales_analysis.ipynb", tag="' in out
    assert "ran 4 of 4 cells in kernel python3" in out and "    best month: 2026-03" in out
    assert "agent: The summary ran in the notebook's kernel: the best month is 2026-03." in out
    assert "error reply" not in out[: out.index("Act 2:")]
    assert "+++ sales_analysis.ipynb (after)" in out and "+## Totals by region" in out
    assert "Three zones: prefix" in out and "Rebuild audit: no rebuilds" in out
    assert "Cache: hit ratio" in out and "misses: 0 (none)" in out
    assert "reusable: what it could have" in out  # every column of the table is explained
    assert ", reusable " in out and "expected" not in out
    act = out[out.index("Act 2:") :]
    assert "image attached: cell " in act and "output [1], image/png 640x320" in act
    assert "image content for the agent (" in act and ": 3 blue bars on white" in act
    assert "] updated (recovered: " in act
    assert "error reply:\n    Edit rejected: figure.ipynb changed since your read" in act
    assert '*28:print("average:"' in act


@pytest.mark.parametrize("provider", ["anthropic", "openai", "deepseek"])
def test_demo_main_tells_the_story(provider: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert demo.main(["--provider", provider]) == 0
    check_story(capsys.readouterr().out)


def test_demo_leaves_its_edits_and_outputs_where_the_diff_says(tmp_path: Path) -> None:
    session = asyncio.run(demo.tell_story(tmp_path))
    assert session.zones.ledger.hit_ratio() > 0.5
    ran, edited = session.snapshot()["edits"][:2]
    assert (ran["op"], ran["cells"]) == ("run", list(demo.SUMMARY_INPUTS))
    assert [r["status"] for r in ran["runs"]] == ["ok"] * 4
    assert edited["cells"] == ["summary"]
    text = (tmp_path / "sales_analysis.ipynb").read_text()
    assert "best month:" in text and "by_region" in text
    summary = nbformat.read(tmp_path / "sales_analysis.ipynb", as_version=4).cells[-1]
    assert summary.execution_count == 4 and "best month: 2026-03" in summary.outputs[0]["text"]
    assert session.workspace.runner.running() == {}  # type: ignore[union-attr]


@pytest.mark.slow
def test_jupyter_hashline_demo_command() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "jupyter_hashline.cli", "demo"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    check_story(done.stdout)


def test_make_demo_runs_the_demo() -> None:
    dry = subprocess.run(
        ["make", "--no-print-directory", "-n", "demo"], cwd=REPO, capture_output=True, text=True
    )
    assert dry.returncode == 0, dry.stderr
    assert ".venv/bin/jupyter-hashline demo" in dry.stdout


MESSAGES = [
    {"role": "user", "content": "go"},
    {
        "role": "assistant",
        "content": [
            {"type": "tool_use", "id": "t1", "name": "notebook_read", "input": {"path": "a.ipynb"}}
        ],
    },
    {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "t1",
                "content": "[a.ipynb#12AB]\n1:x = 1\n2:totals\n",
            }
        ],
    },
    {
        "role": "assistant",
        "content": [
            {
                "type": "tool_use",
                "id": "t2",
                "name": "notebook_edit",
                "input": {"patch": "[a.ipynb#12AB]\ndelete 1\n"},
            }
        ],
    },
    {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "t2",
                "content": "Edit rejected ... Current header: [a.ipynb#9F00]\n 4:totals = {}\n",
                "is_error": True,
            }
        ],
    },
]


def test_scripted_agent_reads_headers_and_rows_from_its_context() -> None:
    assert latest_tag(MESSAGES, "a.ipynb") == "9F00"  # the newest header it was shown
    assert line_of(MESSAGES, "totals") == 2  # whole-line match: "totals = {}" is not it
    assert find_row(MESSAGES, "x =", prefix=True) == (1, "x = 1")
    # a rejection's context rows (" 4:", "*4:") are not read rows: the agent must re-read
    assert find_row(MESSAGES, "totals", prefix=True) == (2, "totals")
    with pytest.raises(LookupError, match="read it first"):
        latest_tag(MESSAGES, "b.ipynb")
    with pytest.raises(LookupError, match="never shown the line"):
        line_of(MESSAGES, "y = 2")


def test_exchanges_pair_calls_with_their_replies() -> None:
    calls = exchanges(MESSAGES)
    assert [c.tool for c in calls] == ["notebook_read", "notebook_edit"]
    assert calls[0] == Exchange("notebook_read", {"path": "a.ipynb"}, calls[0].reply, False)
    assert calls[1].is_error and calls[1].reply.startswith("Edit rejected")
    text = calls[1].to_text()
    assert text.startswith("agent calls notebook_edit with the patch:\n    [a.ipynb#12AB]")
    assert "error reply:\n    Edit rejected" in text
    assert calls[0].to_text().startswith('agent calls notebook_read(path="a.ipynb")')


@pytest.mark.slow
def test_shut_down_kernels_ends_the_servers_kernels_of_the_scratch_copies(tmp_path: Path) -> None:
    """In JupyterLab an example's runs use the server's kernel of its scratch copy; its last
    cell ends that kernel's session, and only that one."""
    root = tmp_path / "lab"
    (root / "scratch").mkdir(parents=True)
    with LocalServer(root, tmp_path / "home") as server:
        client = server.client()
        for path in ("scratch/sales_agent.ipynb", "mine.ipynb"):
            status, _ = client.request(
                "POST", "/api/sessions", {"path": path, "type": "notebook", "name": path}
            )
            assert status == 201
        info = ServerInfo(f"http://127.0.0.1:{server.port}/", TOKEN, str(root))
        outside = tmp_path / "elsewhere.ipynb"
        ended = demo.shut_down_kernels(root / "scratch/sales_agent.ipynb", outside, server=info)
        _, sessions = client.request("GET", "/api/sessions")
        _, kernels = client.request("GET", "/api/kernels")
    assert ended == ["scratch/sales_agent.ipynb"]
    assert [session["path"] for session in sessions] == ["mine.ipynb"]  # a person's stays
    assert len(kernels) == 1


def test_shut_down_kernels_outside_a_server_has_nothing_to_end(tmp_path: Path) -> None:
    assert demo.shut_down_kernels(tmp_path / "scratch" / "x.ipynb") == []  # pytest: no server
