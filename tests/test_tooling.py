"""The developer tooling: `make lint` (the Python side) runs where Node is absent, and the
pre-commit hooks (all `repo: local`) run ruff, ruff-format and the TypeScript linter, pass on
the tree as it is and catch a planted problem of each kind."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from testkit.nodeless import path_without_node

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent
VENV_BIN = REPO / ".venv" / "bin"


def test_make_lint_runs_without_node(tmp_path: Path) -> None:
    """`-W` makes make treat the sidebar's source and lockfile as just edited: were `lint` to
    depend on the npm install or the TypeScript build, it would run npm here, and fail."""
    done = subprocess.run(
        ["make", "--no-print-directory", "-W", "labextension/src/index.ts",
         "-W", "labextension/package-lock.json", "lint"],
        cwd=REPO,
        env=dict(os.environ, PATH=path_without_node(tmp_path / "bin")),
        capture_output=True,
        text=True,
        timeout=600,
    )  # fmt: skip
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "npm" not in output
    assert "ruff format --check" in output and "mypy" in output


def copy_of_the_tree(where: Path) -> Path:
    """The working tree's files (tracked and new, as git sees them) in a fresh repository,
    with this checkout's tools linked in, so the hooks can rewrite files without touching
    the real tree."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=REPO, capture_output=True, check=True, timeout=60,
    ).stdout.decode().split("\0")  # fmt: skip
    for name in filter(None, listed):
        source = REPO / name
        if source.is_file():
            (where / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, where / name)
    (where / ".venv").symlink_to(REPO / ".venv")
    (where / "labextension" / "node_modules").symlink_to(REPO / "labextension" / "node_modules")
    git = ["git", "-c", "user.name=test", "-c", "user.email=test@example.invalid"]
    subprocess.run([*git, "init", "-q"], cwd=where, check=True, timeout=60)
    subprocess.run([*git, "add", "-A"], cwd=where, check=True, timeout=60)
    return where


def pre_commit(tree: Path, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(VENV_BIN / "pre-commit"), "run", "--all-files", "--color", "never"],
        cwd=tree,
        env=dict(os.environ, PRE_COMMIT_HOME=str(home)),
        capture_output=True,
        text=True,
        timeout=600,
    )


def hook_lines(output: str) -> dict[str, str]:
    """{hook name: Passed|Failed|Skipped} from pre-commit's report."""
    verdicts = {}
    for line in output.splitlines():
        name, dots, verdict = line.rpartition("...")
        if dots and verdict.strip() in {"Passed", "Failed", "(no files to check)Skipped"}:
            verdicts[name.rstrip(".").strip()] = verdict.strip()
    return verdicts


def test_pre_commit_hooks_pass_on_the_tree_and_catch_problems(tmp_path: Path) -> None:
    tree = copy_of_the_tree(tmp_path / "tree")
    clean = pre_commit(tree, tmp_path / "pre-commit-home")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert hook_lines(clean.stdout) == {
        "ruff check": "Passed",
        "ruff format": "Passed",
        "ESLint and Prettier (labextension)": "Passed",
    }, clean.stdout

    badly_formatted = tree / "jupyter_hashline" / "planted.py"
    badly_formatted.write_text('"""Planted."""\n\nvalue = {"a":1,   "b":2}\nprint(unknown)\n')
    (tree / "labextension" / "src" / "planted.ts").write_text(
        "export function same(a: unknown, b: unknown): boolean {\n  return a == b;\n}\n"
    )
    subprocess.run(["git", "add", "-A"], cwd=tree, check=True, timeout=60)
    dirty = pre_commit(tree, tmp_path / "pre-commit-home")
    assert dirty.returncode == 1, dirty.stdout + dirty.stderr
    verdicts = hook_lines(dirty.stdout)
    assert verdicts["ruff check"] == "Failed" and "F821" in dirty.stdout, dirty.stdout
    assert verdicts["ruff format"] == "Failed", dirty.stdout
    assert verdicts["ESLint and Prettier (labextension)"] == "Failed", dirty.stdout
    assert "eqeqeq" in dirty.stdout
    assert badly_formatted.read_text() == (
        '"""Planted."""\n\nvalue = {"a": 1, "b": 2}\nprint(unknown)\n'
    )
