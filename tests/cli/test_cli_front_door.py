"""The command line as a new user meets it, each command a real process: `patch --help` teaches
the edit language with an example that applies, exit codes tell a malformed edit (2) from a
rejected one (1), an unknown tag says what to run, and a closed pipe ends the command quietly."""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import re
import shlex
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from testkit.scenario import NOTEBOOK, header_of

import jupyter_hashline
from bench.server import TOKEN, LocalServer
from jupyter_hashline.cli import REJECTION_KINDS
from jupyter_hashline.cli.tools import REFUSALS
from jupyter_hashline.hashline import HashlineError

CLI = [str(Path(sys.executable).parent / "jupyter-hashline")]
REPORT = 'import pandas as pd\ndf = pd.read_csv("sales.csv")\nprint(df.head())\n'


def cli(cwd: Path, *argv: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *argv], cwd=cwd, input=stdin, capture_output=True, text=True, timeout=120
    )


def unindent(block: str) -> str:
    return "".join(row.removeprefix("  ") + "\n" for row in block.splitlines())


def test_patch_help_shows_an_example_that_applies_and_links_the_docs(tmp_path: Path) -> None:
    shown = cli(tmp_path, "patch", "--help")
    assert shown.returncode == 0 and "edit-language.md" in shown.stdout
    assert "replace N..M:" in shown.stdout and "insert after N:" in shown.stdout
    view = re.search(r"\$ jupyter-hashline read report.py\n(.*?)  \$", shown.stdout, re.S)
    edit = re.search(r"<<'EOF'\n(.*?)  EOF\n", shown.stdout, re.S)
    assert view and edit, shown.stdout
    (tmp_path / "report.py").write_text(REPORT)
    read = cli(tmp_path, "read", "report.py")
    assert read.stdout == unindent(view.group(1))  # the tag shown is the real one
    patch = unindent(edit.group(1))
    applied = cli(tmp_path, "patch", stdin=patch)
    assert applied.returncode == 0, applied.stderr
    assert (tmp_path / "report.py").read_text() == (
        'import pandas as pd\ndf = pd.read_csv("sales.csv", parse_dates=["date"])\n'
        "df = df.dropna()\n"
    )


def test_a_malformed_edit_exits_2_and_writes_nothing(root: Path) -> None:
    view = cli(root, "read", NOTEBOOK).stdout
    before = (root / NOTEBOOK).read_bytes()
    for edit in (f"{header_of(view)}\nexplode 1\n", "no header at all\n", f"{header_of(view)}\n"):
        done = cli(root, "patch", stdin=edit)
        assert (done.returncode, done.stdout) == (2, ""), (edit, done)
        assert "Edit not understood" in done.stderr
    assert (root / NOTEBOOK).read_bytes() == before


def test_a_rejected_edit_still_exits_1(root: Path) -> None:
    view = cli(root, "read", NOTEBOOK).stdout
    edit = f"{header_of(view)}\nreplace 99:\n+x\n"  # well formed, but no line 99
    done = cli(root, "patch", stdin=edit)
    assert done.returncode == 1 and "Edit rejected" in done.stderr


def test_an_unknown_tag_says_which_store_and_the_read_to_run(root: Path, tmp_path: Path) -> None:
    store = tmp_path / "other.sqlite3"
    cli(root, "read", NOTEBOOK)  # read with the default store ...
    header = header_of(cli(root, "read", NOTEBOOK).stdout)
    edit = f"{header}\ninsert tail:\n+# end\n"
    done = cli(root, "--store", str(store), "patch", stdin=edit)  # ... patch with another one
    assert done.returncode == 1 and done.stdout == ""
    assert "not from this session" not in done.stderr
    tag = header[-5:-1]
    assert f"#{tag} is not a tag the snapshot store {store} holds for {NOTEBOOK}" in done.stderr
    assert "same --root and --store" in done.stderr and "Nothing was written" in done.stderr
    command = done.stderr.rstrip().rsplit("read it first: ", 1)[1]
    assert shlex.split(command) == ["jupyter-hashline", "--store", str(store), "read", NOTEBOOK]
    cli(root, *shlex.split(command)[1:])  # the suggested command, then the edit lands
    again = cli(root, "--store", str(store), "patch", stdin=edit)
    assert again.returncode == 0, again.stderr
    assert nbformat.read(root / NOTEBOOK, as_version=4).cells[-1].source.endswith("# end")


def test_a_closed_pipe_ends_the_command_quietly(root: Path) -> None:
    (root / "long.txt").write_text("".join(f"line {n} of a long file\n" for n in range(40000)))
    command = f"{shlex.join(CLI)} read long.txt | head -n 2; echo status=${{PIPESTATUS[0]}}"
    piped = subprocess.run(
        command,
        shell=True,
        executable="/bin/bash",
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    first, second, status = piped.stdout.splitlines()
    assert first.startswith("[long.txt#") and second == "1:line 0 of a long file"
    assert status == "status=141"
    assert piped.stderr == ""


def _import_every_module() -> None:
    for module in pkgutil.walk_packages(jupyter_hashline.__path__, "jupyter_hashline."):
        if not module.name.endswith(("__main__", ".demo")):
            importlib.import_module(module.name)


def _below(cls: type[HashlineError]) -> set[type[HashlineError]]:
    found = {cls}
    for sub in cls.__subclasses__():
        found |= _below(sub)
    return found


def test_rejection_kinds_come_from_the_error_tree() -> None:
    _import_every_module()  # the server's subclasses too, which the CLI never imports
    refusals = set().union(*(_below(root) for root in REFUSALS))
    assert {cls.kind for cls in refusals} <= REJECTION_KINDS
    others = _below(HashlineError) - refusals
    assert not {cls.kind for cls in others} & REJECTION_KINDS
    assert "patch_syntax" not in REJECTION_KINDS and "stale_cells" in REJECTION_KINDS
    # an edit refused for its meaning (two readings, or code it would break) is a rejection
    assert {"ambiguous_edit", "does_not_parse"} <= REJECTION_KINDS


@pytest.mark.slow
def test_an_unknown_tag_through_a_server_names_the_server(root: Path, tmp_path: Path) -> None:
    with LocalServer(root, tmp_path / "home") as server:
        url = f"http://127.0.0.1:{server.port}/"
        edit = f"[{NOTEBOOK}#ABCD]\ninsert tail:\n+# end\n"  # a tag no read issued
        done = cli(root, "--server", url, "--token", TOKEN, "patch", stdin=edit)
    assert done.returncode == 1 and "not from this session" not in done.stderr
    assert f"#ABCD is not a tag the Jupyter server {url} holds for {NOTEBOOK}" in done.stderr
    command = f"jupyter-hashline --server {url} read {NOTEBOOK}"
    assert f"read it first: {command} (with your --token" in done.stderr
    assert TOKEN not in done.stderr


PROBE = """
import sys
import jupyter_hashline.cli
import jsonschema, nbformat
print(sys.modules.get("rfc3987_syntax") is not None)
"""


def test_a_command_starts_without_the_grammar_jsonschema_builds_at_import(root: Path) -> None:
    """jsonschema's optional `iri` checker (rfc3987_syntax) builds a grammar when imported, 3 s
    per command; the command line goes without it. A process that imported jsonschema first
    keeps it: the probe's second half shows the guard can tell the two apart."""
    installed = importlib.util.find_spec("rfc3987_syntax") is not None
    if not installed:
        pytest.skip("rfc3987_syntax is not installed here: there is nothing to go without")
    run = [sys.executable, "-c"]
    loaded = subprocess.run([*run, PROBE], capture_output=True, text=True, timeout=120)
    assert loaded.stdout.split() == ["False"], loaded.stderr
    first = "import jsonschema\n" + PROBE
    kept = subprocess.run([*run, first], capture_output=True, text=True, timeout=120)
    assert kept.stdout.split() == ["True"], kept.stderr
    shown = cli(root, "read", NOTEBOOK)
    assert shown.returncode == 0, shown.stderr
    assert header_of(shown.stdout)
