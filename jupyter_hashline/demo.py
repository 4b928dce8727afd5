"""The demo story: a scripted agent edits a small sales notebook, offline.

`main()` (`jupyter-hashline demo`, `make demo`) tells the story of
`examples/agent_edits_notebook.ipynb` in the terminal, then a second act (`second_act`): the
agent draws a chart, is shown it as image content (described in the terminal), and two of its
edits meet a person's changes, one rebased and one refused. In the first act a
`ProviderSimulator` plays the model, a `Session` runs the notebook tools (the agent reads,
edits, then runs the cells it changed in a kernel of its own and reads what they printed), and
the terminal shows each tool call with the reply the agent read, the diff of the edited
notebook, `report_zones()` and `report_cache()`. The example notebooks import the same pieces,
so the notebook and the terminal tell one story.

Invariants:
- Nothing here touches the network beyond 127.0.0.1 or needs an API key: the simulator is the
  provider, and the key it is given is a placeholder.
- The scripted agent behaves like a careful model: every edit and run names the header (and
  line numbers) of what it was shown most recently (a read view or an edit preview), found in
  the request's messages, never in the file on disk; its last answer quotes the run's output.
- The kernels a story starts are shut down when it ends (the session is closed). In JupyterLab
  a session's runs use the server's kernels, one per scratch notebook; `shut_down_kernels`
  ends them, and an example's last cell calls it.
- `sales_notebook()` is the sample `examples/sales_analysis.ipynb` byte for byte (a test pins
  it), so the demo runs from an installed wheel where `examples/` is absent.
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import json
import os
import re
import shutil
import sys
import tempfile
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat

from .agent import ProviderSimulator, ServerInfo, Session, find_parent_server
from .notebook import project_notebook, serialize_notebook

__all__ = [
    "MIN_CACHE_TOKENS",
    "STORY_PROMPTS",
    "Exchange",
    "copy_sample",
    "describe_figure",
    "exchanges",
    "find_row",
    "format_exchanges",
    "latest_tag",
    "line_of",
    "main",
    "notebook_diff",
    "run_and_show",
    "sales_agent_script",
    "sales_notebook",
    "second_act",
    "shut_down_kernels",
    "tool_results",
]

Turn = Mapping[str, Any] | Callable[[list[Any]], Mapping[str, Any]]

# The real services cache from 1,024 tokens; this story is short, so the simulator caches from
# 256 tokens and the hits show from the second request on.
MIN_CACHE_TOKENS = 256

STORY_PROMPTS = (
    "Read the sales notebook and tell me what it does.",
    "Also total the sales by region, in a new section after the monthly totals.",
    "In the summary, also print the best month.",
    "Run the summary and tell me the best month.",
)

_SAMPLE_CELLS = (
    (
        "markdown",
        "intro",
        "# Sales analysis\n\nMonthly totals from a small, generated sales table.",
    ),
    ("code", "imports", "import csv\nimport io\nimport statistics"),
    (
        "code",
        "load-data",
        'RAW = """month,region,amount\n2026-01,north,120\n2026-01,south,95\n2026-02,north,130\n'
        '2026-02,south,101\n2026-03,north,128\n2026-03,south,117\n"""\n'
        "rows = list(csv.DictReader(io.StringIO(RAW)))\nlen(rows)",
    ),
    ("markdown", "totals-heading", "## Totals by month"),
    (
        "code",
        "totals",
        'totals = {}\nfor row in rows:\n    totals[row["month"]] = totals.get(row["month"], 0) '
        '+ int(row["amount"])\ntotals',
    ),
    ("code", "summary", 'print("mean monthly total:", statistics.mean(totals.values()))'),
)


def sales_notebook() -> nbformat.NotebookNode:
    """The sample notebook the agent edits (`examples/sales_analysis.ipynb`)."""
    cells = []
    for kind, cell_id, source in _SAMPLE_CELLS:
        make = nbformat.v4.new_code_cell if kind == "code" else nbformat.v4.new_markdown_cell
        cell = make(source)
        cell["id"] = cell_id
        cells.append(cell)
    metadata = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }
    return nbformat.v4.new_notebook(cells=cells, metadata=metadata)


def copy_sample(target: str | Path, source: str | Path | None = None) -> str:
    """Put a fresh copy of the sample at `target` (replacing an earlier run's) and return the
    projection of that copy, the "before" of `notebook_diff`."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    if source is None:
        target.write_text(serialize_notebook(sales_notebook()), encoding="utf-8")
    else:
        shutil.copyfile(source, target)
    return _projection(target)


def shut_down_kernels(*notebooks: str | Path, server: ServerInfo | None = None) -> list[str]:
    """End the kernel sessions the Jupyter server running this kernel has for `notebooks` (the
    scratch copies an example ran cells of), as the Running panel's Shut Down does; the paths
    ended. Outside a server there is nothing to end: a session's own kernels stop with it."""
    server = server or find_parent_server()
    if server is None:
        return []
    root = Path(server.root_dir or os.getcwd()).resolve()
    wanted = set()
    for notebook in notebooks:
        with contextlib.suppress(ValueError):  # outside the server's root: not its kernel
            wanted.add(Path(notebook).resolve().relative_to(root).as_posix())
    ended = []
    for session in _server_api(server, "GET", "api/sessions") or []:
        if session.get("path") in wanted:
            _server_api(server, "DELETE", f"api/sessions/{session['id']}")
            ended.append(str(session["path"]))
    return ended


def _server_api(server: ServerInfo, method: str, route: str) -> Any:
    request = urllib.request.Request(
        server.url + route, method=method, headers={"Authorization": f"token {server.token}"}
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        body = response.read()
    return json.loads(body) if body else None


def _projection(path: Path) -> str:
    return project_notebook(nbformat.read(path, as_version=4))


def notebook_diff(before: str, path: str | Path, label: str | None = None) -> str:
    """Unified diff of a notebook's projection: `before` (from `copy_sample`) to the file now."""
    after = _projection(Path(path))
    name = label or str(path)
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"{name} (before)",
        tofile=f"{name} (after)",
    )
    return "".join(lines) or f"{name}: no changes\n"


# -- the scripted agent -----------------------------------------------------------------------


def tool_results(messages: Sequence[Any]) -> list[str]:
    """Every tool result text in a request's messages, oldest first, for any request shape."""
    texts: list[str] = []
    for message in messages:
        if message.get("role") == "tool":
            texts.append(str(message.get("content", "")))
        content = message.get("content")
        if isinstance(content, (list, tuple)):
            texts.extend(
                str(block.get("content", ""))
                for block in content
                if isinstance(block, Mapping) and block.get("type") == "tool_result"
            )
    return texts


def latest_tag(messages: Sequence[Any], path: str) -> str:
    """The tag of the newest `[path#TAG]` header the agent was shown."""
    header = re.compile(rf"\[{re.escape(path)}#([0-9A-F]{{4}})\]")
    for text in reversed(tool_results(messages)):
        found = header.findall(text)
        if found:
            return str(found[-1])
    raise LookupError(f"the agent was never shown a header for {path}; read it first")


def find_row(messages: Sequence[Any], text: str, *, prefix: bool = False) -> tuple[int, str]:
    """The newest row the agent was shown whose text is `text` (or, with `prefix`, starts
    with it), as (line number, row text)."""
    rest = ".*" if prefix else ""
    row = re.compile(rf"^(\d+):({re.escape(text)}{rest})$", re.MULTILINE)
    for shown in reversed(tool_results(messages)):
        found = row.findall(shown)
        if found:
            number, content = found[-1]
            return int(number), str(content)
    raise LookupError(f"the agent was never shown the line {text!r}; read it first")


def line_of(messages: Sequence[Any], text: str, *, prefix: bool = False) -> int:
    """The number of the newest row shown with that text (see `find_row`)."""
    return find_row(messages, text, prefix=prefix)[0]


def _read(path: str, cells: Sequence[str] | None = None) -> dict[str, Any]:
    args: dict[str, Any] = {"path": path}
    if cells:
        args["cells"] = list(cells)
    return {"tool_calls": [{"name": "notebook_read", "input": args}]}


def _edit(patch: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "notebook_edit", "input": {"patch": patch}}]}


REGION_SECTION = (
    "# %% [markdown]",
    "## Totals by region",
    "# %% [code]",
    "by_region = {}",
    "for row in rows:",
    '    by_region[row["region"]] = by_region.get(row["region"], 0) + int(row["amount"])',
    "by_region",
)
BEST_MONTH = 'print("best month:", max(totals, key=totals.get))'
SUMMARY_INPUTS = ("imports", "load-data", "totals", "summary")
"""The summary cell and the cells it needs, in order: a fresh kernel has run none of them."""


def _run(path: str, tag: str, cells: Sequence[str]) -> dict[str, Any]:
    arguments = {"path": path, "tag": tag, "cells": list(cells)}
    return {"tool_calls": [{"name": "notebook_run", "input": arguments}]}


def quote_best_month(messages: list[Any]) -> dict[str, Any]:
    """The answer after the run: the best month as the summary cell printed it."""
    for text in reversed(tool_results(messages)):
        found = re.search(r"^best month: (.+)$", text, re.MULTILINE)
        if found:
            return {"text": f"The summary ran in the notebook's kernel: the best month is "
                    f"{found.group(1)}."}  # fmt: skip
    return {"text": "The summary did not print a best month; see the run's reply above."}


def sales_agent_script(path: str) -> list[Turn]:
    """The model's side of `STORY_PROMPTS`: each prompt's tool calls, then its answer."""

    def add_region_section(messages: list[Any]) -> dict[str, Any]:
        after = line_of(messages, "totals")  # the last line of the totals cell
        body = "".join(f"+{line}\n" for line in REGION_SECTION)
        return _edit(f"[{path}#{latest_tag(messages, path)}]\ninsert after {after}:\n{body}")

    def print_best_month(messages: list[Any]) -> dict[str, Any]:
        line = line_of(messages, 'print("mean monthly total:"', prefix=True)
        tag = latest_tag(messages, path)
        return _edit(f"[{path}#{tag}]\ninsert after {line}:\n+{BEST_MONTH}\n")

    def run_summary(messages: list[Any]) -> dict[str, Any]:
        return _run(path, latest_tag(messages, path), SUMMARY_INPUTS)

    return [
        _read(path),
        {
            "text": "It parses a small sales table, totals the amounts by month and prints the "
            "mean monthly total."
        },
        add_region_section,
        {"text": "Added a 'Totals by region' section after the monthly totals."},
        _read(path, ["summary"]),
        print_best_month,
        {"text": "The summary now prints the best month as well."},
        _read(path, SUMMARY_INPUTS),  # a careful agent reads what it is about to run
        run_summary,
        quote_best_month,
    ]


# -- showing what happened --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Exchange:
    """One tool call the agent made and the reply it read."""

    tool: str
    input: Mapping[str, Any]
    reply: str
    is_error: bool

    def to_text(self) -> str:
        verdict = "error reply" if self.is_error else "reply"
        return f"agent calls {self._call()}\n{verdict}:\n{_indent(self.reply)}"

    def _call(self) -> str:
        if self.tool == "notebook_edit" and isinstance(self.input.get("patch"), str):
            return f"notebook_edit with the patch:\n{_indent(self.input['patch'])}"
        args = ", ".join(f"{key}={json.dumps(_plain(value))}" for key, value in self.input.items())
        return f"{self.tool}({args})"


def _plain(value: Any) -> Any:
    """Log messages are frozen; thaw a value to plain JSON types for display."""
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


def _indent(text: str) -> str:
    return "\n".join(f"    {line}" for line in text.rstrip("\n").splitlines())


def exchanges(messages: Sequence[Any]) -> list[Exchange]:
    """The tool calls in `messages` (log messages, provider-neutral), each with its result."""
    results: dict[str, tuple[str, bool]] = {}
    for message in messages:
        for block in _blocks(message, "tool_result"):
            results[block["tool_use_id"]] = (str(block["content"]), bool(block.get("is_error")))
    calls = []
    for message in messages:
        for block in _blocks(message, "tool_use"):
            reply, is_error = results.get(block["id"], ("(no result yet)", False))
            calls.append(Exchange(block["name"], dict(block["input"]), reply, is_error))
    return calls


def _blocks(message: Mapping[str, Any], kind: str) -> list[Mapping[str, Any]]:
    content = message.get("content")
    if not isinstance(content, (list, tuple)):
        return []
    return [b for b in content if isinstance(b, Mapping) and b.get("type") == kind]


def format_exchanges(calls: Sequence[Exchange]) -> str:
    return "\n".join(call.to_text() for call in calls)


async def run_and_show(session: Session, prompt: str) -> None:
    """Run one user turn and print it: the prompt, each tool call with its reply, the answer."""
    start = len(session.zones.log)
    answer = await session.run_turn(prompt)
    print(f"user: {prompt}")
    calls = exchanges(list(session.zones.log)[start:])
    if calls:
        print(format_exchanges(calls))
    print(f"agent: {answer}\n")


# -- the terminal demo ------------------------------------------------------------------------


async def tell_story(root: Path, provider: str = "anthropic") -> Session:
    """The first example's story in `root`: copy the sample, run the prompts, print it all."""
    path = "sales_analysis.ipynb"
    before = copy_sample(root / path)
    with ProviderSimulator(sales_agent_script(path), min_tokens=MIN_CACHE_TOKENS) as sim:
        print(f"Offline: the provider simulator at {sim.url} plays the model ({provider}).\n")
        session = Session(
            root,
            provider=provider,
            base_url=sim.base_url(provider),
            api_key="offline",
            register=False,
            via="directory",
        )
        async with session:  # the kernel the run starts is shut down at the end
            for prompt in STORY_PROMPTS:
                await run_and_show(session, prompt)
    print("The edited notebook (its cell-marked projection), before and after:")
    print(notebook_diff(before, root / path, label=path))
    print(session.report_zones(), end="\n\n")
    print(session.report_cache())
    return session


# -- the second act: a figure, and stale edits rebased or refused --------------------------------

CHART = """from PIL import Image as Picture, ImageDraw
from IPython.display import Image, display
picture = Picture.new("RGB", (640, 320), "white")
draw = ImageDraw.Draw(picture)
peak = max(totals.values())
for i, month in enumerate(sorted(totals)):
    top = 300 - int(260 * totals[month] / peak)
    draw.rectangle([60 + 200 * i, top, 180 + 200 * i, 300], fill=(31, 119, 180))
png = io.BytesIO()
picture.save(png, format="PNG")
display(Image(png.getvalue()))"""
"""A bar chart of the monthly totals, drawn with Pillow (a dependency) and displayed as PNG."""


def describe_figure(data: str) -> str:
    """What an agent that sees images was shown: size, bytes and the bars the demo counts."""
    import base64
    import io

    from PIL import Image

    raw = base64.b64decode(data)
    with Image.open(io.BytesIO(raw)) as image:
        row = [image.getpixel((x, 290)) for x in range(image.width)]
        width, height = image.size
    bars = sum(1 for x in range(1, len(row)) if row[x] != row[x - 1] and row[x] != (255, 255, 255))
    return f"a {width}x{height} PNG ({len(raw):,} bytes): {bars} blue bars on white"


def _person_edits(path: Path, cell_id: str, old: str, new: str) -> None:
    nb = nbformat.read(path, as_version=4)
    cell = next(cell for cell in nb.cells if cell.get("id") == cell_id)
    cell.source = cell.source.replace(old, new)
    nbformat.write(nb, path)


async def second_act(root: Path) -> None:
    """The agent looks at the figure it drew; then two stale edits: one rebased, one refused.
    Told through the tools as an MCP client calls them (images on)."""
    from .kernels import DirectoryKernelPool
    from .tools import open_directory, run_tool

    path = "figure.ipynb"
    copy_sample(root / path)
    workspace = open_directory(root, ":memory:", run_with=DirectoryKernelPool)

    async def call(name: str, **arguments: Any) -> Any:
        outcome = await run_tool(workspace, name, arguments, agent="demo-agent")
        if "patch" in arguments:
            print(f"agent calls {name} with the patch:\n" + _indent(arguments["patch"]))
        else:
            print(f"agent calls {name}({', '.join(f'{k}={v!r}' for k, v in arguments.items())})")
        print(("error reply" if outcome.is_error else "reply") + ":\n" + _indent(outcome.text))
        return outcome

    try:
        print("Act 2: the agent draws a chart and looks at it, then edits a changed notebook.\n")
        view = await call("notebook_read", path=path)
        tag = view.reply["tag"]
        lines = view.text.splitlines()
        body = "".join(f"+{line}\n" for line in ["# %% [code]", *CHART.splitlines()])
        added = await call("notebook_edit", patch=f"[{path}#{tag}]\ninsert tail:\n{body}")
        chart = re.findall(r"# %% \[code\] id=(\S+)", added.text)[-1]
        ran = await call(
            "notebook_run", path=path, tag=added.reply["sections"][0]["tag"],
            cells=[*SUMMARY_INPUTS[:-1], chart], images=True,
        )  # fmt: skip
        for figure in ran.images:
            print(
                f"image content for the agent ({figure.caption()}): {describe_figure(figure.data)}"
            )
        tag = ran.reply["tag"]
        mean = next(n for n, row in enumerate(lines) if 'print("mean monthly' in row)  # 0: header
        print("\nA person adds a note to the intro and saves; the agent's next edit is stale.")
        _person_edits(
            root / path, "intro", "generated sales table.", "generated sales table (Ada)."
        )
        patch = (
            f'[{path}#{tag}]\nreplace {mean}:\n+print("mean:", statistics.mean(totals.values()))\n'
        )
        rebased = await call("notebook_edit", patch=patch)
        print(
            "\nThe person now rewrites that very line; the agent edits it again from its old read."
        )
        _person_edits(root / path, "summary", '"mean:"', '"average:"')
        await call("notebook_edit", patch=patch.replace("mean:", "monthly mean:"))
        assert not rebased.is_error
    finally:
        await workspace.aclose()


def main(argv: Sequence[str] | None = None) -> int:
    """`jupyter-hashline demo`: the story in a temporary directory; exit 0 when it is told."""
    import argparse

    parser = argparse.ArgumentParser(prog="jupyter-hashline demo", description=__doc__)
    parser.add_argument("--provider", choices=("anthropic", "openai", "deepseek"))
    args = parser.parse_args(list(argv or []))
    with tempfile.TemporaryDirectory(prefix="hashline-demo-") as tmp:
        asyncio.run(tell_story(Path(tmp), args.provider or "anthropic"))
        print()
        asyncio.run(second_act(Path(tmp)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
