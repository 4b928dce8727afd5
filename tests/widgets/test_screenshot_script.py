"""The screenshot script's offline export (the full run, with a kernel and Chromium, is
`python scripts/screenshot_panel.py`; it takes longer than a unit test should)."""

from __future__ import annotations

import importlib.util
import re
import shutil
import sys
from pathlib import Path
from types import ModuleType

import nbformat
import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "screenshot_panel.py"


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("screenshot_panel", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_export_loads_widget_scripts_from_local_copies_only() -> None:
    script = load_script()
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1")])
    nb.metadata["widgets"] = {
        "application/vnd.jupyter.widget-state+json": {
            "version_major": 2,
            "version_minor": 0,
            "state": {},
        }
    }
    html = script.export_html(nb)
    assert f'src="{script.REQUIRE}"' in html
    assert f"var widgetRendererSrc = '{script.RENDERER}'" in html
    assert "unpkg.com" not in html
    # no script is loaded from elsewhere (mermaid's import only runs for mermaid diagrams, and
    # the screenshot's browser refuses every request that is not to its loopback server)
    assert re.findall(r"<script[^>]*src=\"(?:https?:)?//", html) == []


def test_the_demo_notebook_shows_the_panel_and_is_stored_without_outputs() -> None:
    script = load_script()
    nb = nbformat.read(script.NOTEBOOK, as_version=4)
    sources = "\n".join(cell.source for cell in nb.cells)
    assert "session.panel()" in sources and "%hashline cache" in sources
    assert all(not cell.get("outputs") for cell in nb.cells if cell.cell_type == "code")
    assert "widgets" not in nb.metadata


@pytest.mark.slow
def test_the_demo_runs_headless_and_stores_the_panel_state(tmp_path: Path) -> None:
    """nbclient in a real kernel: the saved widget state holds the panel's summary."""
    script = load_script()
    for name in ("panel_demo.ipynb", "sales_analysis.ipynb"):
        shutil.copy(script.NOTEBOOK.parent / name, tmp_path / name)
    nb = script.execute(tmp_path / "panel_demo.ipynb", timeout=60)
    state = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    panels = [m["state"] for m in state.values() if "summary" in m["state"]]
    assert len(panels) == 1
    summary = panels[0]["summary"]
    assert summary["status"] == "drifted"
    assert summary["session"]["turns"] == 4 and not summary["session"]["active"]
    assert len(summary["audit"]) == 1 and summary["audit"][0]["reason"] == "manual_compaction"
    assert summary["cache"]["miss_causes"] == {"messages_rewritten": 1, "system_changed": 1}
    assert len(summary["edits"]) == 4
    # the magics printed the same session's numbers
    magics = next(cell for cell in nb.cells if cell.get("id") == "magics")
    printed = "".join(output.get("text", "") for output in magics.outputs)
    assert f"Cache: hit ratio {summary['cache']['hit_ratio']:.1%}" in printed
    # the panel's children are in the saved state too (what the offline renderer draws)
    texts = " ".join(str(m["state"].get("value", "")) for m in state.values())
    assert 'data-status="drifted"' in texts and texts.count('data-row="audit"') == 1
