"""Every example notebook runs top to bottom offline (nbclient, a real ipykernel) and shows
what it promises; the checked-in notebooks are exactly what scripts/make_examples.py writes."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path
from types import ModuleType

import nbformat
import pytest
from nbclient import NotebookClient

from jupyter_hashline.demo import sales_notebook
from jupyter_hashline.notebook import serialize_notebook

pytestmark = pytest.mark.slow  # notebooks executed in real kernels

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def make_examples() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "make_examples", REPO / "scripts/make_examples.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def execute(name: str, workdir: Path) -> nbformat.NotebookNode:
    """Run examples/`name` in `workdir` (a copy of examples/), as a person would in Lab."""
    for notebook in (name, "sales_analysis.ipynb"):
        if not (workdir / notebook).exists():
            shutil.copyfile(EXAMPLES / notebook, workdir / notebook)
    nb = nbformat.read(workdir / name, as_version=4)
    client = NotebookClient(
        nb, timeout=60, kernel_name="python3", resources={"metadata": {"path": str(workdir)}}
    )
    client.execute()  # raises CellExecutionError on the first failing cell
    return nb


def text_of(nb: nbformat.NotebookNode, cell_id: str) -> str:
    cell = next(c for c in nb.cells if c.get("id") == cell_id)
    parts = []
    for output in cell.get("outputs", []):
        if output["output_type"] == "stream":
            parts.append(output["text"])
        elif "data" in output:
            parts.append(output["data"].get("text/plain", ""))
    return "".join(parts)


def shows_widget(nb: nbformat.NotebookNode, cell_id: str) -> bool:
    cell = next(c for c in nb.cells if c.get("id") == cell_id)
    return any(WIDGET_VIEW in output.get("data", {}) for output in cell["outputs"])


def sources(path: Path) -> dict[str, str]:
    return {cell["id"]: cell["source"] for cell in nbformat.read(path, as_version=4).cells}


def test_checked_in_examples_are_what_the_generator_writes(tmp_path: Path) -> None:
    generator = make_examples()
    assert generator.main(["--check"]) == 0, "run: python scripts/make_examples.py"
    assert generator.main(["--out", str(tmp_path)]) == 0
    for name in generator.NOTEBOOKS:
        assert (tmp_path / name).read_bytes() == (EXAMPLES / name).read_bytes()
        nb = nbformat.read(EXAMPLES / name, as_version=4)
        for cell in nb.cells:
            if cell.cell_type == "code":
                assert cell.outputs == [] and cell.execution_count is None, f"{name}: {cell.id}"


def test_the_sample_notebook_is_the_demo_sample() -> None:
    assert serialize_notebook(sales_notebook()) == (EXAMPLES / "sales_analysis.ipynb").read_text()


def test_agent_edits_notebook(tmp_path: Path) -> None:
    # an earlier run's edited copy is replaced: the example can be run again and again
    (tmp_path / "scratch").mkdir()
    (tmp_path / "scratch" / "sales_agent.ipynb").write_text("left over from an earlier run")
    nb = execute("agent_edits_notebook.ipynb", tmp_path)
    assert shows_widget(nb, "session"), "the panel is displayed"
    assert "tools run through the directory" in text_of(nb, "session")  # no server here
    read = text_of(nb, "turn-read")
    assert "agent calls notebook_read" in read and "[scratch/sales_agent.ipynb#" in read
    assert "# %% [code] id=totals" in read
    insert = text_of(nb, "turn-insert")
    assert "agent calls notebook_edit with the patch:" in insert
    assert "] updated" in insert and "new code cell id=" in insert
    assert "] updated" in text_of(nb, "turn-partial")
    ran = text_of(nb, "turn-run")
    assert 'agent calls notebook_run(path="scratch/sales_agent.ipynb", tag="' in ran
    assert "ran 4 of 4 cells in kernel python3" in ran and "best month: 2026-03" in ran
    assert "agent: The summary ran in the notebook's kernel: the best month is 2026-03." in ran
    diff = text_of(nb, "diff")
    assert "+## Totals by region" in diff and '+print("best month:"' in diff
    assert "-" not in [line[:1] for line in diff.splitlines()[2:]], "nothing removed"
    reports = text_of(nb, "reports")
    assert "Three zones: prefix" in reports and "Rebuild audit: no rebuilds" in reports
    assert "misses: 0 (none)" in reports and "Cache: hit ratio" in reports
    edited = sources(tmp_path / "scratch" / "sales_agent.ipynb")
    assert edited["summary"].endswith('print("best month:", max(totals, key=totals.get))')
    summary = next(
        c
        for c in nbformat.read(tmp_path / "scratch" / "sales_agent.ipynb", as_version=4).cells
        if c.get("id") == "summary"
    )
    assert summary.execution_count == 4  # the run's outputs were saved in the notebook
    assert summary.outputs[0]["text"].endswith("best month: 2026-03\n")
    assert any(src.startswith("by_region = {}") for src in edited.values())
    # the sample itself is untouched
    assert (tmp_path / "sales_analysis.ipynb").read_bytes() == (
        EXAMPLES / "sales_analysis.ipynb"
    ).read_bytes()


def test_stale_edits_notebook(tmp_path: Path) -> None:
    nb = execute("stale_edits.ipynb", tmp_path)  # its own asserts check nothing is lost
    assert shows_widget(nb, "script")
    assert "(recovered: cell totals moved from line 22 to 25)" in text_of(nb, "turn-recover")
    conflict = text_of(nb, "person-edits-summary")
    assert "error reply:" in conflict and "Edit rejected" in conflict
    assert "Nothing was written" in conflict and '*31:print("average month:"' in conflict
    assert "] updated" in text_of(nb, "turn-retry")
    final = sources(tmp_path / "scratch" / "sales_stale.ipynb")
    assert final["person-note"] == "Data: the regional export of 2026-04-02."
    assert final["intro"].endswith("Checked by Ana.")
    assert final["totals"].endswith("dict(sorted(totals.items()))")
    assert final["summary"] == 'print("average month:", round(statistics.mean(totals.values()), 1))'


def test_stale_edits_runs_on_its_own_copy_whatever_a_person_did_to_the_sample(
    tmp_path: Path,
) -> None:
    """`make lab` keeps a person's changes to sales_analysis.ipynb; the stale-edits story starts
    from the sample as shipped, so its checks still hold."""
    nb = nbformat.read(EXAMPLES / "sales_analysis.ipynb", as_version=4)
    nb.cells.insert(0, nbformat.v4.new_markdown_cell("A person's note.", id="their-note"))
    nb.cells[-1].source = 'print("changed by a person")'
    nbformat.write(nb, tmp_path / "sales_analysis.ipynb")
    done = execute("stale_edits.ipynb", tmp_path)  # its own asserts hold
    assert "Edit rejected" in text_of(done, "person-edits-summary")
    assert "changed by a person" in (tmp_path / "sales_analysis.ipynb").read_text()


def test_cache_drift_notebook(tmp_path: Path) -> None:
    nb = execute("cache_drift.ipynb", tmp_path)
    assert "misses: 0 (none)" in text_of(nb, "steady")
    clock = text_of(nb, "clock")
    assert "MISS system_changed" in clock and "drifted (undeclared)" in clock
    assert "system prompt changed" in clock
    assert shows_widget(nb, "clock-panel")
    compacted = text_of(nb, "compacted")
    assert "Rebuild audit (oldest first; 1 of 1 kept):" in compacted
    assert "manual compaction" in compacted and "MISS messages_rewritten" in compacted
    rows = {line.split()[0]: line for line in text_of(nb, "summary").splitlines()}
    assert rows["steady"].endswith("misses: none")
    assert "system_changed" in rows["clock"] and "messages_rewritten x1" in rows["compacted"]
    ratios = {name: float(row.split("hit ratio")[1].split("%")[0]) for name, row in rows.items()}
    assert ratios["steady"] > ratios["compacted"] > ratios["clock"]


@pytest.mark.parametrize(
    ("name", "copy"),
    [
        ("agent_edits_notebook.ipynb", 'copy_sample(NOTEBOOK, source="sales_analysis.ipynb")'),
        ("stale_edits.ipynb", "copy_sample(NOTEBOOK)"),  # the sample as shipped: it checks lines
    ],
)
def test_examples_start_from_a_clean_copy(name: str, copy: str) -> None:
    """Each example copies the sample into scratch/ first, so re-running starts over."""
    nb = nbformat.read(EXAMPLES / name, as_version=4)
    setup = next(c for c in nb.cells if c.get("id") == "setup")
    assert copy in setup.source
    assert 'NOTEBOOK = "scratch/' in setup.source
