"""Write the example notebooks in examples/ from the cell texts below.

Run `python scripts/make_examples.py` after changing a cell here; `--check` exits 1 when a
checked-in notebook differs from what this script writes (the test suite runs that check).

Invariants:
- The notebooks are stored without outputs and with fixed cell ids, so regenerating them is
  byte-identical and their diffs stay readable.
- Every notebook runs top to bottom offline: the model is the `ProviderSimulator`, the agent
  edits a fresh copy of `sales_analysis.ipynb` under `scratch/` (so a notebook can be run
  again and again), and the working directory is examples/.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
KERNEL = {
    "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
    "language_info": {"name": "python"},
}

Cells = list[tuple[str, str, str]]  # (kind, id, source)


def md(cell_id: str, text: str) -> tuple[str, str, str]:
    return ("markdown", cell_id, text.strip("\n"))


def code(cell_id: str, text: str) -> tuple[str, str, str]:
    return ("code", cell_id, text.strip("\n"))


AGENT_EDITS: Cells = [
    md(
        "title",
        """
# An agent edits a notebook

A scripted agent edits `sales_analysis.ipynb` through the hashline notebook tools while a
provider simulator plays the model: no API key, no network. Every read shows the notebook as
cell-marked text under a `[path#TAG]` header; every edit names that header and line numbers,
so nothing is ever applied to text the agent did not see.

The panel below shows the three prompt zones (frozen prefix, append-only log, per-turn
scratch), the prefix fingerprint, the rebuild audit, the cache hit ratio per request and the
agent's last edits and runs. It updates live while the agent works. The agent edits a copy in
`scratch/`, so you can run this notebook again and again.
""",
    ),
    code(
        "setup",
        """
from jupyter_hashline.agent import ProviderSimulator, Session
from jupyter_hashline.demo import (
    MIN_CACHE_TOKENS,
    STORY_PROMPTS,
    copy_sample,
    notebook_diff,
    run_and_show,
    sales_agent_script,
    shut_down_kernels,
)

NOTEBOOK = "scratch/sales_agent.ipynb"
before = copy_sample(NOTEBOOK, source="sales_analysis.ipynb")
""",
    ),
    md(
        "simulator-note",
        """
The simulator speaks the Anthropic Messages API on 127.0.0.1 and replays a script of model
turns (`sales_agent_script` in `jupyter_hashline/demo.py`). Scripted turns that edit are
functions of the request's messages: like a real model, they take the header and the line
numbers from the newest read or edit reply in their context. The simulator reports prompt-cache
use by real prefix matching; real services cache from 1,024 tokens, this short story from
`MIN_CACHE_TOKENS` (256) so the hits show from the second request on.
""",
    ),
    code(
        "session",
        """
simulator = ProviderSimulator(sales_agent_script(NOTEBOOK), min_tokens=MIN_CACHE_TOKENS)
simulator.start()
session = Session(".", base_url=simulator.url, api_key="offline-demo")
print(f"the agent's tools run through the {session.via.value}: {session.workspace.describe}")
session.panel()
""",
    ),
    md(
        "where-note",
        """
Run in JupyterLab, this kernel was started by a Jupyter server, so the session edits through
that server's REST API (`session.via` is `server`): open the hashline sidebar (the left-hand
tab) and its **Activity** tab lists each edit as it lands, **Snapshots** the versions the
agent read, **Sessions** this session; a notebook open in JupyterLab is edited live, as a
collaborator would, and the cells the agent runs run in that notebook's own kernel (open it to
see the outputs arrive). Run elsewhere (a script, nbclient), it edits the directory instead and
runs cells in a kernel of its own.
""",
    ),
    md(
        "read-heading",
        """
## 1. The agent reads the notebook

Each cell starts with a marker line `# %% [code] id=...`; the tag after `#` in the header
covers the whole notebook.
""",
    ),
    code("turn-read", "await run_and_show(session, STORY_PROMPTS[0])"),
    md(
        "insert-heading",
        """
## 2. A new section

The agent adds two cells by inserting marker lines without ids. The reply names the new cells'
ids and shows a preview with the new line numbers, so the next edit can chain on it without
another read.
""",
    ),
    code("turn-insert", "await run_and_show(session, STORY_PROMPTS[1])"),
    md(
        "partial-heading",
        """
## 3. A partial read, then a one-line edit

A read of one cell (`cells=["summary"]`) carries the same whole-notebook tag, so the edit can
use it.
""",
    ),
    code("turn-partial", "await run_and_show(session, STORY_PROMPTS[2])"),
    md(
        "run-heading",
        """
## 4. Run what it edited, read the result

The agent reads the cells the summary needs and runs them (`notebook_run`) with the header of
that read: a cell runs only if its source is still exactly what the agent was shown, so a
person's half-typed change never runs in the agent's name. The reply carries each cell's
status, execution count, duration and outputs as text (images would be placeholders, never
base64); the outputs are saved in the notebook, and the agent answers from what it read.
""",
    ),
    code("turn-run", "await run_and_show(session, STORY_PROMPTS[3])"),
    md(
        "reports-heading",
        """
## Zones and cache as text

The same data as the panel, as a terminal agent shows it (`/cache zones`, `/cache stats`); in a
notebook `%load_ext jupyter_hashline` gives `%hashline zones` and `%hashline cache`.
""",
    ),
    code("reports", "print(session.report_zones())\nprint()\nprint(session.report_cache())"),
    md(
        "diff-heading",
        """
## The edited notebook

The diff of the notebook's cell-marked text, before and after the agent's edits. The cells the
agent did not touch kept their ids, outputs and metadata. Closing the session shuts down the
kernel it started; in JupyterLab its runs used the server's kernel of the scratch copy, which
`shut_down_kernels` ends (this notebook keeps its own kernel).
""",
    ),
    code(
        "diff",
        "await session.aclose()\nshut_down_kernels(NOTEBOOK)\nsimulator.stop()\n"
        "print(notebook_diff(before, NOTEBOOK))",
    ),
]

STALE_EDITS: Cells = [
    md(
        "title",
        """
# Stale edits: a person and an agent in one notebook

An agent reads the notebook; then a person saves changes to it; then the agent sends an edit
with the header of its old read. hashline maps the edit to cells: when the cells it touches
did not change, it lands there, wherever they moved (recovered). When the person changed the
very line the agent edits, the edit is rejected, nothing is written, and the reply tells the
agent what to re-read. Nobody's edit is lost.

Everything runs offline against the provider simulator, on a fresh copy of the sample
notebook in `scratch/` (the sample as shipped, not `sales_analysis.ipynb` as you may have
edited it: the story's checks expect the lines it knows).
""",
    ),
    code(
        "setup",
        """
import nbformat

from jupyter_hashline.agent import ProviderSimulator, Session
from jupyter_hashline.demo import (
    MIN_CACHE_TOKENS,
    copy_sample,
    find_row,
    latest_tag,
    line_of,
    notebook_diff,
    run_and_show,
)

NOTEBOOK = "scratch/sales_stale.ipynb"
before = copy_sample(NOTEBOOK)  # the sample as shipped, whatever you did to sales_analysis


def person_saves(change):
    \"\"\"Change the notebook on disk, as a person's save in JupyterLab does.\"\"\"
    nb = nbformat.read(NOTEBOOK, as_version=4)
    change(nb)
    nbformat.write(nb, NOTEBOOK)


def source(cell_id):
    nb = nbformat.read(NOTEBOOK, as_version=4)
    return next(cell.source for cell in nb.cells if cell.id == cell_id)
""",
    ),
    md(
        "script-heading",
        """
## The agent's script

Edits are functions of what the agent was shown (the request's messages), so a stale edit is
stale for real: the agent uses the header and line numbers of its latest read, not of the file.
""",
    ),
    code(
        "script",
        """
MEAN = "statistics.mean(totals.values())"


def edit(make_patch):
    return lambda messages: {
        "tool_calls": [{"name": "notebook_edit", "input": {"patch": make_patch(messages)}}]
    }


def sort_totals(messages):
    header = f"[{NOTEBOOK}#{latest_tag(messages, NOTEBOOK)}]"
    line = line_of(messages, "totals")  # the totals cell's last line, as the agent saw it
    return f"{header}\\nreplace {line}:\\n+dict(sorted(totals.items()))\\n"


def round_mean(messages):
    header = f"[{NOTEBOOK}#{latest_tag(messages, NOTEBOOK)}]"
    line, text = find_row(messages, "print(", prefix=True)  # the summary line it saw last
    return f"{header}\\nreplace {line}:\\n+{text.replace(MEAN, f'round({MEAN}, 1)')}\\n"


read = {"tool_calls": [{"name": "notebook_read", "input": {"path": NOTEBOOK}}]}
read_summary = {
    "tool_calls": [{"name": "notebook_read", "input": {"path": NOTEBOOK, "cells": ["summary"]}}]
}
script = [
    read,
    {"text": "It totals a small sales table by month."},
    edit(sort_totals),
    {"text": "The totals are sorted by month now."},
    edit(round_mean),
    {"text": "That line changed since I read it; I will re-read it before editing."},
    read_summary,
    edit(round_mean),
    {"text": "The mean is rounded now; I kept your wording."},
]
simulator = ProviderSimulator(script, min_tokens=MIN_CACHE_TOKENS)
simulator.start()
session = Session(".", base_url=simulator.url, api_key="offline-demo")
session.panel()
""",
    ),
    md("read-heading", "## 1. The agent reads"),
    code("turn-read", 'await run_and_show(session, "Read the notebook.")'),
    md(
        "person-heading",
        """
## 2. A person edits other cells

They add a note at the top and a line to the introduction: every line below moves down.
""",
    ),
    code(
        "person-edits",
        """
def add_note(nb):
    note = nbformat.v4.new_markdown_cell("Data: the regional export of 2026-04-02.")
    note.id = "person-note"
    nb.cells.insert(0, note)
    nb.cells[1].source += "\\nChecked by Ana."


person_saves(add_note)
""",
    ),
    md(
        "recover-heading",
        """
## 3. The agent's stale edit is recovered

The agent has not re-read: its edit names the old header and the old line number of the
`totals` cell's last line. That cell did not change, so the edit lands on it where it is now;
the reply says so.
""",
    ),
    code(
        "turn-recover",
        """
await run_and_show(session, "Sort the monthly totals by month.")
assert "Checked by Ana." in source("intro") and source("person-note")  # the person's edits
assert source("totals").endswith("dict(sorted(totals.items()))")  # the agent's edit
""",
    ),
    md(
        "conflict-heading",
        """
## 4. A true conflict is rejected

Now the person rewrites the summary line, and the agent, without re-reading, edits the same
line. hashline refuses: it will not apply an edit to text the agent did not see.
""",
    ),
    code(
        "person-edits-summary",
        """
def relabel(nb):
    summary = next(cell for cell in nb.cells if cell.id == "summary")
    summary.source = summary.source.replace("mean monthly total:", "average month:")


person_saves(relabel)
person_version = source("summary")
await run_and_show(session, "Round the mean in the summary to one decimal.")
assert source("summary") == person_version  # rejected: nothing was written
""",
    ),
    md(
        "retry-heading",
        """
## 5. The agent re-reads and retries

The rejection told the agent what to re-read. It reads the summary cell, sees the person's
wording, and sends the edit again on top of it.
""",
    ),
    code(
        "turn-retry",
        """
await run_and_show(session, "Go ahead.")
assert source("summary") == (
    'print("average month:", round(statistics.mean(totals.values()), 1))'
)
""",
    ),
    md(
        "diff-heading",
        """
## Nothing lost

The person's note, their introduction line and their label are all there, with both of the
agent's edits.
""",
    ),
    code("diff", "print(notebook_diff(before, NOTEBOOK))\nsimulator.stop()"),
]

CACHE_DRIFT: Cells = [
    md(
        "title",
        """
# Cache drift: what breaks prompt caching, and how it shows

Provider prompt caching reuses the longest prefix a request shares with an earlier one. The
three zones keep that prefix stable by construction: a frozen prefix (system prompt, tool
catalog, model), an append-only log, and a per-turn scratch. This notebook runs the same agent
story three times against the offline provider simulator:

1. as it should be: a fixed system prompt;
2. with a timestamp in the system prompt, a common mistake: every request misses, and the
   ledger names the cause;
3. with a compaction between turns: one named, audited rebuild of the log costs one miss, then
   the hits resume.
""",
    ),
    code(
        "setup",
        """
from datetime import datetime, timezone

from jupyter_hashline.agent import DEFAULT_SYSTEM, ProviderSimulator, Session
from jupyter_hashline.demo import (
    MIN_CACHE_TOKENS,
    STORY_PROMPTS,
    copy_sample,
    sales_agent_script,
    shut_down_kernels,
)


async def run_story(name, system=DEFAULT_SYSTEM, compact_after=None):
    \"\"\"The sales story on a fresh copy; `compact_after` = the turn after which to compact.\"\"\"
    notebook = f"scratch/sales_{name}.ipynb"
    copy_sample(notebook, source="sales_analysis.ipynb")
    script = sales_agent_script(notebook)
    with ProviderSimulator(script, min_tokens=MIN_CACHE_TOKENS) as simulator:
        url = simulator.url
        session = Session(".", base_url=url, api_key="offline-demo", system=system, label=name)
        async with session:  # the kernel its run starts is shut down at the end
            for number, prompt in enumerate(STORY_PROMPTS, start=1):
                await session.run_turn(prompt)
                if number == compact_after:
                    session.compact("The agent read the notebook and added a region section.")
    shut_down_kernels(notebook)  # in JupyterLab the runs used the server's kernel of the copy
    return session
""",
    ),
    md(
        "steady-heading",
        """
## 1. A fixed system prompt

After the first (cold) request, every request reads most of its prompt from the cache.
""",
    ),
    code(
        "steady",
        """
steady = await run_story("steady")
print(steady.report_cache())
""",
    ),
    md(
        "clock-heading",
        """
## 2. A timestamp in the system prompt

The system prompt is a function re-evaluated for every request, and it includes the current
time. The prefix drifts on every request: each is a miss with the cause `system_changed`, and
the zones report shows the prefix as drifted. Only the tool catalog, which comes before the
system prompt in the request, is still reused.
""",
    ),
    code(
        "clock",
        """
def system_with_clock():
    now = datetime.now(timezone.utc).isoformat(timespec="microseconds")
    return f"{DEFAULT_SYSTEM}\\nCurrent time: {now}"


clock = await run_story("clock", system=system_with_clock)
print(clock.report_cache())
print()
print(clock.report_zones())
""",
    ),
    md(
        "clock-panel-heading",
        """
The panel of that session: the prefix fingerprint history shows the drift, and the per-request
chart shows the misses. The fix is to keep volatile facts out of the prefix: send the time in
the user's message (the scratch zone) instead.
""",
    ),
    code("clock-panel", "clock.panel()"),
    md(
        "compact-heading",
        """
## 3. A compaction

After the second turn the conversation is compacted into a summary: the log's only wholesale
rewrite, `rebuild` with a named reason. It is recorded in the rebuild audit, and the next
request's miss is classified as `messages_rewritten`; the requests after it hit again.
""",
    ),
    code(
        "compacted",
        """
compacted = await run_story("compacted", compact_after=2)
print(compacted.report_zones())
print()
print(compacted.report_cache())
""",
    ),
    md("summary-heading", "## Side by side"),
    code(
        "summary",
        """
for session in (steady, clock, compacted):
    cache = session.snapshot()["cache"]
    causes = ", ".join(f"{cause} x{n}" for cause, n in cache["miss_causes"].items()) or "none"
    print(f"{session.label:<10} hit ratio {cache['hit_ratio']:6.1%}   misses: {causes}")
""",
    ),
]

NOTEBOOKS = {
    "agent_edits_notebook.ipynb": AGENT_EDITS,
    "stale_edits.ipynb": STALE_EDITS,
    "cache_drift.ipynb": CACHE_DRIFT,
}


def build(cells: Cells) -> nbformat.NotebookNode:
    """A notebook of `cells` with fixed ids and no outputs."""
    nb = nbformat.v4.new_notebook(metadata=dict(KERNEL))
    for kind, cell_id, source in cells:
        make = nbformat.v4.new_code_cell if kind == "code" else nbformat.v4.new_markdown_cell
        cell = make(source)
        cell.id = cell_id
        nb.cells.append(cell)
    nbformat.validate(nb)
    return nb


def render(cells: Cells) -> str:
    return nbformat.writes(build(cells)) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only compare; exit 1 on a change")
    parser.add_argument("--out", type=Path, default=EXAMPLES, help="directory (default examples/)")
    args = parser.parse_args(argv)
    stale = []
    for name, cells in NOTEBOOKS.items():
        target = args.out / name
        text = render(cells)
        current = target.read_text(encoding="utf-8") if target.exists() else None
        if current == text:
            continue
        stale.append(name)
        if not args.check:
            target.write_text(text, encoding="utf-8")
    verb = "out of date" if args.check else "written"
    for name in stale:
        print(f"{name}: {verb}")
    if args.check and stale:
        print("run: python scripts/make_examples.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
