"""The README's claims, run: the read, the edit and the refusal it shows are what the command
line prints on a copy of examples/sales_analysis.ipynb; every `make` target and `--print-config`
line in it exists and works."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text()
CLI = str(Path(sys.executable).parent / "jupyter-hashline")


def section(title: str) -> str:
    start = README.index(f"## {title}\n")
    end = README.find("\n## ", start + 1)
    return README[start:end]


def text_blocks(markdown: str) -> list[str]:
    return re.findall(r"```text\n(.*?)```", markdown, re.S)


def run(cwd: Path, command: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    argv = shlex.split(command)
    assert argv[0] == "jupyter-hashline", command
    return subprocess.run(
        [CLI, *argv[1:]], cwd=cwd, input=stdin, capture_output=True, text=True, timeout=120
    )


@pytest.fixture
def copy(tmp_path: Path, data_dir: Path) -> Path:
    """A copy of examples/sales_analysis.ipynb in a folder of its own (and its own store)."""
    folder = tmp_path / "examples"
    folder.mkdir()
    shutil.copy(REPO / "examples" / "sales_analysis.ipynb", folder)
    return folder


def test_the_read_the_edit_and_the_refusal_shown_are_what_the_cli_prints(copy: Path) -> None:
    read_block, edit_block, refusal = text_blocks(section("What an agent sees"))
    read_command, *read_shown = read_block.splitlines()
    read = run(copy, read_command.removeprefix("$ "))
    assert read.returncode == 0 and read.stdout.splitlines() == read_shown
    pristine = (copy / "sales_analysis.ipynb").read_bytes()

    heredoc = re.match(r"\$ (.*) <<'EOF'\n(.*?)EOF\n(.*)", edit_block, re.S)
    assert heredoc, edit_block
    command, patch, reply = heredoc.groups()
    done = run(copy, command, stdin=patch)
    assert done.returncode == 0 and done.stdout == reply

    (copy / "sales_analysis.ipynb").write_bytes(pristine)  # as before the edit; then a person:
    nb = nbformat.read(copy / "sales_analysis.ipynb", as_version=4)
    totals = next(cell for cell in nb.cells if cell.get("id") == "totals")
    assert totals.source.endswith("\ntotals")
    totals.source = totals.source.removesuffix("totals") + "print(totals)"
    nbformat.write(nb, copy / "sales_analysis.ipynb")
    before = (copy / "sales_analysis.ipynb").read_bytes()
    refused = run(copy, command, stdin=patch)
    assert (refused.returncode, refused.stdout, refused.stderr) == (1, "", refusal)
    assert (copy / "sales_analysis.ipynb").read_bytes() == before


def test_the_first_block_starts_with_the_demo_and_every_make_target_exists() -> None:
    first = re.search(r"```\n(.*?)```", README, re.S)
    assert first and first.group(1).startswith("make demo ")
    targets = re.findall(r"^make (\w+)", first.group(1), re.M)
    assert {"demo", "lab", "test", "dist"} <= set(targets)
    dry = subprocess.run(
        ["make", "--no-print-directory", "-n", *targets], cwd=REPO, capture_output=True, text=True
    )
    assert dry.returncode == 0, dry.stderr


def test_every_print_config_line_prints_an_entry(tmp_path: Path, data_dir: Path) -> None:
    lines = re.findall(r"^(jupyter-hashline .*--print-config \S+)", README, re.M)
    assert len(lines) >= 4
    for line in lines:
        done = run(tmp_path, line.replace("~/project", str(tmp_path)))
        assert done.returncode == 0 and done.stdout.strip(), (line, done.stderr)
        assert "s3cret" not in done.stdout
