"""The model-mistakes catalogue: the sloppy edits language models really send, each delivered
on a Python file (`mod.py`) and on a notebook code cell (`nb.ipynb`, the cell after a markdown
cell) through every surface an agent uses: REST (a real `jupyter server` with the extension),
MCP over stdio (`--root`), and the command line (`--root`, and `--server` against the same
server). Each row lays out the file, reads it for its tag, sends the mistake and checks what
anyone can observe: the surface's success or refusal (status, exit code, `isError`), the
keyword in the reply's warnings or in the refusal, and the file on disk (a notebook: the cell's
source through nbformat). A refusal leaves the file byte-identical.

Line numbers are never hard-coded for the notebook: each row writes them for the file's own
text (`@3` is line 3 of the code) and they are shifted by the row of the cell's marker line
in the read.

Departures from the catalogue as first written, each because the case as written is not the
mistake it names:
- `extra_indent`: `replace 4:` with `+        return 7` parses as written (it lands inside
  `if x:`, after `return 1`), and both its 4- and 8-space readings parse, so it is the
  ambiguous case, not a repair. The row over-indents line 2 instead (`+        if x > 0:`,
  8 spaces where 4 belong), which parses only at 4 spaces.

`check` is the oracle: it returns what went wrong for one row ('' when the row holds);
`test_a_wrong_expectation_fails` shows it can fail.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import nbformat
import pytest
from testkit.surface_thread import HeldSurface, LoopThread
from testkit.surfaces import CliSurface, McpSurface, Reply, RestSurface, Target, _tool

from bench.server import TOKEN, LocalServer
from jupyter_hashline.tools.catalog import CATALOG

pytestmark = pytest.mark.slow  # ~130 rows; one server and one MCP process for the module

NO_JUPYTEXT = "--ServerApp.jpserver_extensions=jupyterlab_jupytext=False"
STRICT_TRAIT = "--HashlineExtension.syntax_check=strict"
STRICT_FLAG = ("--syntax-check", "strict")
CELL_ID = "code1"
MARKDOWN = "# Notes\nabout f"

BASE = "def f(x):\n    if x:\n        return 1\n    return 0\n"
RETURN_2 = "def f(x):\n    if x:\n        return 2\n    return 0\n"
TWO_BLOCKS = "def f(x):\n    y = 1\n    z = 2\nw = 3\n"
LONGER = "def f(x):\n    if x:\n        y = x * 2\n        return y\n    return 0\n"


# --- the table ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Expect:
    """What a row must do. Applied: `text` is the file after it and `keyword` must be in the
    reply's warnings (None: no warning at all). Refused: `kind` is the REST error kind,
    `keyword` must be in the refusal, the file is unchanged."""

    applied: bool
    text: str = ""
    keyword: str | None = None
    kind: str = ""
    http: int | None = None  # the REST status a refusal must have (None: any 4xx)
    names_line: int | None = None  # a warning names this line (of the code, as `@N`)


def applied(text: str, warning: str | None, names_line: int | None = None) -> Expect:
    return Expect(True, text=text, keyword=warning, names_line=names_line)


def refused(kind: str, keyword: str, http: int | None = None) -> Expect:
    return Expect(False, kind=kind, keyword=keyword, http=http)


@dataclass(frozen=True, slots=True)
class Mistake:
    """One catalogue entry. `patch` is edit text with `{header}` and `@N` for line N of the
    code; `edits` is the JSON form's list of edits (its `start`/`end`/`line` are lines of the
    code). `strict`: sent where `syntax_check` is "strict"."""

    name: str
    source: str
    expect: Expect
    patch: str = ""
    edits: tuple[Mapping[str, Any], ...] = ()
    strict: bool = False


def replace_3(*rows: str) -> str:
    return "{header}\nreplace @3:\n" + "".join(f"+{row}\n" for row in rows)


MISTAKES = (
    Mistake(
        "dropped_indent",
        BASE,
        applied(RETURN_2, "re-indented"),
        replace_3("return 2"),
    ),
    Mistake(
        "ambiguous_indent",
        TWO_BLOCKS,
        refused("ambiguous_edit", "indent"),
        replace_3("z = 9"),
    ),
    Mistake(
        "extra_indent",
        BASE,
        applied(BASE.replace("    if x:", "    if x > 0:"), "re-indented"),
        "{header}\nreplace @2:\n+        if x > 0:\n",
    ),
    Mistake("tabs", BASE, applied(RETURN_2, "tab"), replace_3("\t\treturn 2")),
    Mistake(
        "read_prefixes",
        BASE,
        applied(RETURN_2, "read-view prefix"),
        "{header}\nreplace @3:\n+@3:        return 2\n",
    ),
    Mistake(
        "fenced",
        BASE,
        applied(RETURN_2, "fence"),
        "Here is the edit:\n```\n{header}\nreplace @3:\n+        return 2\n```\nLet me know.\n",
    ),
    Mistake(
        "echo_after",
        BASE,
        applied(RETURN_2, "echo"),
        replace_3("        return 2", "    return 0"),
    ),
    Mistake(
        "insert_repeats_anchor",
        BASE,
        applied(BASE.replace("    if x:\n", "    if x:\n        print(x)\n"), "echo"),
        "{header}\ninsert after @2:\n+    if x:\n+        print(x)\n",
    ),
    Mistake(
        "shifted_numbers",
        BASE,
        refused("ambiguous_edit", "shift"),
        "{header}\ninsert after @1:\n+    # note\nreplace @4:\n+        return 2\n",
    ),
    Mistake(
        "trailing_spaces",
        BASE,
        applied(RETURN_2, "trailing"),
        replace_3("        return 2   "),
    ),
    Mistake(
        "json_crlf",
        BASE,
        applied(RETURN_2, "carriage return"),
        edits=({"op": "replace", "start": 3, "end": 3, "lines": ["        return 2\r"]},),
    ),
    Mistake(
        "json_string_lines",
        BASE,
        applied(RETURN_2.replace("return 2\n", "return 2\n        return 3\n"), "string"),
        edits=(
            {"op": "replace", "start": 3, "end": 3, "lines": "        return 2\n        return 3"},
        ),
    ),
    Mistake(
        "unclosed_paren",
        BASE,
        applied(BASE.replace("return 1", "return (1"), "no longer parses", names_line=3),
        replace_3("        return (1"),
    ),
    Mistake(
        "unclosed_paren_strict",
        BASE,
        refused("does_not_parse", "parse", http=422),
        replace_3("        return (1"),
        strict=True,
    ),
    Mistake(
        "elision",
        LONGER,
        refused("ambiguous_edit", "elision"),
        "{header}\nreplace @2..@4:\n+    if x:\n+        # ... existing code ...\n",
    ),
    Mistake("clean_control", BASE, applied(RETURN_2, None), replace_3("        return 2")),
)


# --- the two kinds of file ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Layout:
    """The file a row edits: a Python file, or the code cell of a notebook."""

    name: str  # "mod.py" or "nb.ipynb"

    @property
    def notebook(self) -> bool:
        return self.name.endswith(".ipynb")

    def lay_out(self, folder: Path, source: str) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        if not self.notebook:
            (folder / self.name).write_text(source)
            return
        nb = nbformat.v4.new_notebook()
        nb.metadata["kernelspec"] = {
            "name": "python3",
            "display_name": "Python 3",
            "language": "python",
        }
        nb.cells = [
            nbformat.v4.new_markdown_cell(MARKDOWN, id="intro"),
            nbformat.v4.new_code_cell(source.removesuffix("\n"), id=CELL_ID),
        ]
        nbformat.write(nb, folder / self.name)

    def offset(self, view: str) -> int:
        """How far line 1 of the code is shifted in the read: the row of the cell's marker."""
        if not self.notebook:
            return 0
        marker = re.search(rf"^(\d+):# %% \[code\] id={CELL_ID}$", view, re.MULTILINE)
        assert marker, f"no marker line for {CELL_ID} in the read:\n{view}"
        return int(marker.group(1))

    def content(self, folder: Path) -> str:
        """The code as stored: the file's text, or the cell's source (no final newline)."""
        if not self.notebook:
            return (folder / self.name).read_text()
        nb = nbformat.read(folder / self.name, as_version=4)
        return next((c.source for c in nb.cells if c.get("id") == CELL_ID), "<no cell code1>")

    def expected(self, text: str) -> str:
        return text.removesuffix("\n") if self.notebook else text

    def others_kept(self, folder: Path) -> str:
        """'' when the notebook still has exactly its markdown cell and the code cell."""
        if not self.notebook:
            return ""
        nb = nbformat.read(folder / self.name, as_version=4)
        cells = [(c.get("id"), c.cell_type) for c in nb.cells]
        if cells != [("intro", "markdown"), (CELL_ID, "code")] or nb.cells[0].source != MARKDOWN:
            return f"the notebook's cells changed: {cells}"
        return ""


LAYOUTS = (Layout("mod.py"), Layout("nb.ipynb"))


# --- the surfaces ------------------------------------------------------------------------


class RestWithKinds(RestSurface):
    """REST, whose status also names the error kind of a refusal: `422 does_not_parse`."""

    async def call(self, tool: str, args: Mapping[str, Any]) -> Reply:
        spec = next(s for s in CATALOG if s.name == _tool(tool))
        if spec.rest.http_method == "GET":
            response = await self.http.get(spec.rest.route, params=dict(args))
        else:
            response = await self.http.post(spec.rest.route, json=dict(args))
        try:
            body = response.json()
        except ValueError:
            return Reply(False, response.text, str(response.status_code))
        if response.status_code < 300:
            return Reply(True, str(body.get(spec.rest.text_key, "")), str(response.status_code))
        kind = body.get("error", "") if isinstance(body, dict) else ""
        message = body.get("message", body) if isinstance(body, dict) else body
        return Reply(False, str(message), f"{response.status_code} {kind}")


@dataclass
class Driver:
    """One surface as the rows use it: files go under `folder`, named `prefix` + name."""

    name: str
    folder: Path
    prefix: str
    call: Callable[[str, Mapping[str, Any]], Reply]
    json_as_text: bool = False  # the command line takes the JSON form as its input text
    closers: list[Callable[[], None]] = field(default_factory=list)


SURFACES = ("rest", "mcp --root", "cli --root", "cli --server")


class Drivers:
    """The module's surfaces, each started on first use: one server per configuration
    (default, strict), one MCP process per configuration, the command line per call."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.loop = LoopThread()
        self.config_dir = base / "jupyter-config"  # no developer config reaches a process
        self.config_dir.mkdir()
        self.servers: dict[bool, LocalServer] = {}
        self.drivers: dict[tuple[str, bool], Driver] = {}

    def server(self, strict: bool) -> LocalServer:
        if strict not in self.servers:
            name = "server-strict" if strict else "server"
            (self.base / name / "root").mkdir(parents=True, exist_ok=True)
            args = (NO_JUPYTEXT, STRICT_TRAIT) if strict else (NO_JUPYTEXT,)
            server = LocalServer(
                self.base / name / "root", self.base / name / "home", extra_args=args
            )
            self.servers[strict] = server.__enter__()
        return self.servers[strict]

    def get(self, surface: str, strict: bool) -> Driver:
        key = (surface, strict)
        if key not in self.drivers:
            self.drivers[key] = self._start(surface, strict)
        return self.drivers[key]

    def _start(self, surface: str, strict: bool) -> Driver:
        slug = re.sub(r"[^a-z]+", "-", surface).strip("-") + ("-strict" if strict else "")
        data = self.base / "data" / slug
        if surface in ("rest", "cli --server"):
            server = self.server(strict)
            folder = server.root / slug
            target = Target(folder, data, f"http://127.0.0.1:{server.port}/", TOKEN, server.root)
            prefix = f"{slug}/"
        else:
            folder = self.base / "roots" / slug
            target = Target(folder, data)
            prefix = ""
        folder.mkdir(parents=True, exist_ok=True)
        flag = list(STRICT_FLAG) if strict else []
        if surface == "rest":
            rest = RestWithKinds(target)
            held = HeldSurface(self.loop, rest)
            return Driver(surface, folder, prefix, held.call, closers=[held.close])
        if surface.startswith("cli"):
            cli = CliSurface(target)
            if surface == "cli --root":  # on --server the server's configuration decides
                cli.base += flag
            cli.env["JUPYTER_CONFIG_DIR"] = str(self.config_dir)
            held = HeldSurface(self.loop, cli)
            return Driver(surface, folder, prefix, held.call, True, [held.close])
        mcp = McpSurface(target)
        args = list(mcp.params.args)
        env = dict(mcp.params.env or {}, JUPYTER_CONFIG_DIR=str(self.config_dir))
        mcp.params = mcp.params.model_copy(update={"args": [*args[:-1], *flag, "mcp"], "env": env})
        held = HeldSurface(self.loop, mcp)
        return Driver(surface, folder, prefix, held.call, closers=[held.close])

    def close(self) -> None:
        for driver in self.drivers.values():
            for close in driver.closers:
                close()
        for server in self.servers.values():
            server.__exit__(None, None, None)
        self.loop.close()


@pytest.fixture(scope="module")
def drivers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Drivers]:
    started = Drivers(tmp_path_factory.mktemp("model-mistakes"))
    try:
        yield started
    finally:
        started.close()


# --- one row -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Observed:
    """What a row showed: the reply, the code before and after, the notebook's other cells."""

    reply: Reply
    offset: int
    before: bytes
    after: bytes
    content: str
    others: str


def the_edit(mistake: Mistake, path: str, tag: str, offset: int) -> dict[str, Any]:
    """The tool arguments of the row's edit, its line numbers shifted by `offset`."""
    if mistake.edits:
        edits = [
            {k: v + offset if k in ("start", "end", "line") else v for k, v in edit.items()}
            for edit in mistake.edits
        ]
        return {"edits": {"path": path, "tag": tag, "edits": edits}}
    text = mistake.patch.replace("{header}", f"[{path}#{tag}]")
    return {"patch": re.sub(r"@(\d+)", lambda m: str(int(m.group(1)) + offset), text)}


def deliver(driver: Driver, mistake: Mistake, layout: Layout) -> Observed:
    """Lay the file out, read it, send the mistake; what the surface and the disk show."""
    folder = driver.folder / f"{mistake.name}-{layout.name.replace('.', '-')}"
    layout.lay_out(folder, mistake.source)
    path = f"{driver.prefix}{folder.name}/{layout.name}"
    read = driver.call("read", {"path": path})
    header = re.match(rf"\[{re.escape(path)}#([0-9A-F]{{4}})\]", read.text)
    assert read.ok and header, f"read {path}: {read.status} {read.text[:300]}"
    offset = layout.offset(read.text)
    first = mistake.source.split("\n", 1)[0]
    assert f"\n{offset + 1}:{first}\n" in f"\n{read.text}\n", f"line 1 is not {first!r}"
    before = (folder / layout.name).read_bytes()
    args = the_edit(mistake, path, header.group(1), offset)
    if driver.json_as_text and "edits" in args:
        args = {"patch": json.dumps(args["edits"])}
    reply = driver.call("edit", args)
    after = (folder / layout.name).read_bytes()
    return Observed(
        reply, offset, before, after, layout.content(folder), layout.others_kept(folder)
    )


def warnings_of(text: str) -> str:
    """The reply's warnings: everything from its first `warning:` line on."""
    match = re.search(r"^warning:", text, re.MULTILINE)
    return text[match.start() :] if match else ""


def status_problem(surface: str, expect: Expect, reply: Reply) -> str:
    """'' when the surface's status says what the row expects (applied, or the refusal)."""
    if expect.applied:
        return "" if reply.ok else f"refused ({reply.status}), expected applied"
    if reply.ok:
        return f"applied ({reply.status}), expected refused as {expect.kind}"
    if surface == "rest":
        code, _, kind = reply.status.partition(" ")
        wanted = str(expect.http) if expect.http else "4xx"
        if kind != expect.kind or not (code == wanted or (wanted == "4xx" and code[0] == "4")):
            return f"refused as HTTP {code} {kind!r}, expected {wanted} {expect.kind!r}"
    if surface.startswith("cli") and reply.status != "exit 1":
        return f"refused with {reply.status}, expected exit 1 (rejected, nothing written)"
    return ""


def check(surface: str, mistake: Mistake, layout: Layout, seen: Observed) -> str:
    """The oracle: every way the row went wrong, '' when it holds."""
    expect, reply = mistake.expect, seen.reply
    problems = [status_problem(surface, expect, reply)]
    if expect.applied:
        want = layout.expected(expect.text)
        if seen.content != want:
            problems.append(f"stored {seen.content!r}, expected {want!r}")
        warnings = warnings_of(reply.text)
        if expect.keyword is None and warnings:
            problems.append(f"expected no warning, got {warnings[:200]!r}")
        if expect.keyword is not None and expect.keyword.lower() not in warnings.lower():
            problems.append(f"no warning with {expect.keyword!r}")
        if expect.names_line is not None and warnings:
            line = expect.names_line + seen.offset
            named = re.search(rf"\b{line}\b", warnings) or (
                layout.notebook
                and CELL_ID in warnings
                and re.search(rf"\b{expect.names_line}\b", warnings)
            )
            if not named:
                problems.append(f"the warning does not name line {line}")
    else:
        if seen.after != seen.before:
            problems.append(f"the file changed: now {seen.content!r}")
        if expect.keyword and expect.keyword.lower() not in reply.text.lower():
            problems.append(f"the refusal does not mention {expect.keyword!r}")
    problems.append(seen.others)
    found = [p for p in problems if p]
    return "; ".join(found) + (f" | reply: {reply.text[:400]!r}" if found else "")


ROWS = [
    pytest.param(surface, mistake, layout, id=f"{surface}-{layout.name}-{mistake.name}")
    for surface in SURFACES
    for layout in LAYOUTS
    for mistake in MISTAKES
]


@pytest.mark.parametrize(("surface", "mistake", "layout"), ROWS)
def test_model_mistake(drivers: Drivers, surface: str, mistake: Mistake, layout: Layout) -> None:
    driver = drivers.get(surface, mistake.strict)
    seen = deliver(driver, mistake, layout)
    problem = check(surface, mistake, layout, seen)
    assert not problem, f"{surface} / {layout.name} / {mistake.name}: {problem}"


def test_a_wrong_expectation_fails(drivers: Drivers) -> None:
    """The oracle can fail: the clean edit, delivered for real, is judged against planted
    expectations (a warning it does not have, another text, a refusal) and each is reported;
    judged against its own expectation it passes."""
    clean = next(m for m in MISTAKES if m.name == "clean_control")
    layout = LAYOUTS[1]
    driver = drivers.get("mcp --root", False)
    seen = deliver(driver, replace(clean, name="planted"), layout)
    assert check(driver.name, clean, layout, seen) == ""
    planted = {
        "a warning": (applied(RETURN_2, "re-indented"), "no warning with 're-indented'"),
        "another text": (applied(BASE, None), "stored"),
        "a refusal": (refused("ambiguous_edit", "indent"), "expected refused"),
    }
    for what, (expect, words) in planted.items():
        problem = check(driver.name, replace(clean, expect=expect), layout, seen)
        assert words in problem, f"planting {what}: {problem!r}"
    clean_refusal = replace(seen, after=seen.before + b" ")
    wrong = check("rest", replace(clean, expect=refused("x", "y")), layout, clean_refusal)
    assert "the file changed" in wrong and "expected refused" in wrong


def test_every_entry_reaches_both_files_and_every_surface() -> None:
    """The table is complete: every mistake on both files through every surface."""
    names = [m.name for m in MISTAKES]
    assert len(names) == len(set(names)) == 16
    assert {(p.values[0], p.values[2].name, p.values[1].name) for p in ROWS} == {
        (s, layout.name, n) for s in SURFACES for layout in LAYOUTS for n in names
    }
