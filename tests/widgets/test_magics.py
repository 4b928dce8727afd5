"""The `%hashline` magics in an IPython shell instance (no kernel)."""

from __future__ import annotations

import gc
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.testing import globalipapp
from testkit.comms import RecordingComm
from testkit.widget_sessions import EchoClient, edit_script, make_notebook, run, scripted_session

from jupyter_hashline.agent import Session
from jupyter_hashline.widgets import ZonesPanel
from jupyter_hashline.widgets.magics import HashlineMagics, audit_report
from jupyter_hashline.zones import RebuildReason


@pytest.fixture
def shell(comms: list[RecordingComm]) -> Iterator[InteractiveShell]:
    globalipapp.start_ipython()  # once per process: a shell with in-memory history
    ip = globalipapp.get_ipython()
    assert ip is not None
    before = set(ip.user_ns)
    assert ip.extension_manager.load_extension("jupyter_hashline") is None
    yield ip
    ip.extension_manager.unload_extension("jupyter_hashline")
    for name in set(ip.user_ns) - before:
        del ip.user_ns[name]


def magics(ip: InteractiveShell) -> HashlineMagics:
    found = ip._hashline_magics  # type: ignore[attr-defined]
    assert isinstance(found, HashlineMagics)
    return found


def cell(ip: InteractiveShell, code: str, capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    result = ip.run_cell(code)
    assert result.success, result.error_in_exec or result.error_before_exec
    return capsys.readouterr().out


def echo_session(root: Path, system: str) -> Session:
    root.mkdir(parents=True, exist_ok=True)
    make_notebook(root)
    return Session(root, client=EchoClient(), register=False, system=system)


def test_zones_and_cache_print_the_session_reports(
    tmp_path: Path, shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    session, _ = scripted_session(tmp_path, edit_script([1, 2]))
    run(session, ["read", "set 1", "set 2"])
    shell.push({"agent": session})
    assert cell(shell, "%hashline zones", capsys).strip() == session.report_zones()
    assert cell(shell, "%hashline cache", capsys).strip() == session.report_cache()
    assert "hit ratio" in session.report_cache()


def test_audit_lists_rebuilds_newest_first(
    tmp_path: Path, shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    session, _ = scripted_session(tmp_path, edit_script([1]))
    shell.push({"agent": session})
    assert "no rebuilds" in cell(shell, "%hashline audit", capsys)
    run(session, ["read"])
    session.compact("read the notebook")
    session.zones.log.rebuild(RebuildReason.PURGE, [], detail="tool purge")
    out = cell(shell, "%hashline audit", capsys)
    assert out.strip() == audit_report(session)
    lines = out.strip().splitlines()
    assert lines[0] == "Rebuild audit (newest first; 2 of 2 kept):"
    assert "purge (tool purge)" in lines[1] and "manual compaction" in lines[2]


def test_the_current_session_is_the_newest_one_seen(
    tmp_path: Path, shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    first = echo_session(tmp_path / "a", "System A")
    second = echo_session(tmp_path / "b", "System B")
    shell.push({"first": first})
    assert first.zones.prefix.short_id in cell(shell, "%hashline zones", capsys)
    shell.push({"second": second})
    assert second.zones.prefix.short_id in cell(shell, "%hashline zones", capsys)
    # created and used in the same cell
    shell.push({"echo_session": echo_session, "root": tmp_path / "c"})
    out = cell(shell, "third = echo_session(root, 'System C')\n%hashline zones", capsys)
    third = shell.user_ns["third"]
    assert third.zones.prefix.short_id in out
    listing = cell(shell, "%hashline sessions", capsys).splitlines()
    assert [line[2:].split()[0] for line in listing] == [
        first.id,
        second.id,
        third.id,
    ]
    assert listing[-1].startswith("* ")
    # a deleted session stops being a candidate
    del third
    cell(shell, "del third", capsys)
    gc.collect()
    assert second.zones.prefix.short_id in cell(shell, "%hashline zones", capsys)


def test_use_chooses_the_current_session(
    tmp_path: Path, shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    first = echo_session(tmp_path / "a", "System A")
    second = echo_session(tmp_path / "b", "System B")
    shell.push({"first": first, "second": second})
    assert f"current session: {first.id}" in cell(shell, "%hashline use first", capsys)
    assert first.zones.prefix.short_id in cell(shell, "%hashline zones", capsys)
    shell.push({"newer": echo_session(tmp_path / "c", "System C")})
    assert first.zones.prefix.short_id in cell(shell, "%hashline zones", capsys)
    # a panel stands for its session
    shell.push({"view": ZonesPanel(second)})
    assert second.id in cell(shell, "%hashline use view", capsys)
    out = cell(shell, "%hashline use nothing_here", capsys)
    assert "'nothing_here' is not a Session" in out and "bind one to a name" in out
    assert "usage: %hashline use NAME" in cell(shell, "%hashline use", capsys)


def test_panel_shows_one_live_panel_per_session(
    tmp_path: Path, shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    session, _ = scripted_session(tmp_path, edit_script([1]))
    shell.push({"agent": session})
    shown: list[Any] = []
    shell.display_pub.publish = lambda data, **kw: shown.append(data)  # type: ignore[method-assign]
    cell(shell, "%hashline panel", capsys)
    cell(shell, "%hashline panel", capsys)
    assert len(shown) == 2
    assert all("application/vnd.jupyter.widget-view+json" in data for data in shown)
    ids = {data["application/vnd.jupyter.widget-view+json"]["model_id"] for data in shown}
    assert len(ids) == 1  # the same panel both times
    panel = magics(shell)._panels[session]
    assert ids == {panel.model_id}
    run(session, ["read"])
    assert panel.summary["cache"]["requests"] == 2  # live: it heard the turn


def test_without_a_session_or_with_a_typo_the_magic_says_what_to_do(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    for command in ("zones", "cache", "audit", "panel"):
        out = cell(shell, f"%hashline {command}", capsys)
        assert "No agent session found" in out and "%hashline use NAME" in out
    out = cell(shell, "%hashline zone", capsys)
    assert "unknown command 'zone'" in out and "usage: %hashline zones" in out
    assert "usage:" in cell(shell, "%hashline", capsys)


def test_sessions_are_noticed_after_each_cell(
    tmp_path: Path, shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    shell.push({"echo_session": echo_session, "root": tmp_path / "a"})
    cell(shell, "made = echo_session(root, 'System A')", capsys)
    made = shell.user_ns["made"]
    assert magics(shell).tracker.current() is made  # the post_run_cell hook saw it
    cell(shell, "made_later = echo_session(root, 'System B')", capsys)
    later = shell.user_ns["made_later"]
    assert magics(shell).tracker.sessions() == [made, later]


def test_unload_removes_the_magic_and_the_hook(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    hook = magics(shell).observe_namespace
    assert hook in shell.events.callbacks["post_run_cell"]
    shell.extension_manager.unload_extension("jupyter_hashline")
    assert "hashline" not in shell.magics_manager.magics["line"]
    assert hook not in shell.events.callbacks["post_run_cell"]
    shell.extension_manager.load_extension("jupyter_hashline")  # the fixture unloads it again


def test_importing_the_package_stays_light() -> None:
    code = (
        "import sys, jupyter_hashline\n"
        "assert callable(jupyter_hashline.load_ipython_extension)\n"
        "heavy = [m for m in ('ipywidgets', 'IPython', 'nbformat', 'tornado', "
        "'jupyter_server') if m in sys.modules]\n"
        "print(heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
