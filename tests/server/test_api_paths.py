"""API paths: relative to the server root, escapes refused, never repaired."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from jupyter_hashline.hashline.errors import PathOutsideRootError
from jupyter_hashline.server.paths import (
    InvalidPathError,
    api_path,
    confined_os_path,
    is_hidden_path,
)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("a.ipynb", "a.ipynb"),
        ("/a.ipynb", "a.ipynb"),
        ("//dir//./b.py/", "dir/b.py"),
        ("dir/sub/c d.md", "dir/sub/c d.md"),
        ("100%.txt", "100%.txt"),
    ],
)
def test_api_path_normalizes(raw: str, expected: str) -> None:
    assert api_path(raw) == expected


@pytest.mark.parametrize(
    "raw",
    [
        "../etc/passwd",
        "a/../../b",
        "a/..",
        "%2e%2e/secret",
        "a%2Fb",
        "..%5cwin",
        "a\\..\\b",
        "x%00y",
    ],
)
def test_escapes_are_refused(raw: str) -> None:
    with pytest.raises(PathOutsideRootError) as info:
        api_path(raw)
    assert "root" in info.value.message or "decoded" in info.value.message


@pytest.mark.parametrize("raw", ["", "/", "./", "a\x00b"])
def test_empty_and_nul_paths_are_invalid(raw: str) -> None:
    with pytest.raises(InvalidPathError):
        api_path(raw)


def test_hidden_path_is_any_dot_segment() -> None:
    assert is_hidden_path(".env")
    assert is_hidden_path("a/.git/config")
    assert not is_hidden_path("a/b.c/d.ipynb")


def test_symlink_out_of_root_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "root"
    outside = tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("s\n")
    os.symlink(outside, root / "link")
    os.symlink(root / "inside.txt", root / "alias.txt")
    with pytest.raises(PathOutsideRootError, match="symlink"):
        confined_os_path(str(root), "link/secret.txt")
    assert confined_os_path(str(root), "alias.txt") == str((root / "inside.txt").resolve())
