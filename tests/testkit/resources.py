"""Plugin: what tests take from the machine rather than from the repository.

`corpus_dir` is the shared corpus of real notebooks (read in place, never copied into the
repository); `chromium_path` is Debian's Chromium. Both skip, saying why, where absent. Every
test that uses `chromium_path` is marked `browser` at collection, so `-m "not browser"`
leaves out exactly the tests that start a browser.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
CORPUS_DIR = REPO_ROOT.parent / "shared" / "corpus"


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    """The shared corpus of real notebooks; tests that need it skip where it is absent."""
    if not (CORPUS_DIR / "MANIFEST.tsv").is_file():
        pytest.skip(f"the shared notebook corpus is not present at {CORPUS_DIR}")
    return CORPUS_DIR


@pytest.fixture(scope="session")
def chromium_path() -> str:
    """Debian's Chromium for browser tests (`make test` installs it where it can, as root)."""
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        pytest.skip("Chromium is not installed (make test installs it with apt-get when root)")
    return path


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark `browser` every test that asks for Chromium (before `-m` deselects anything)."""
    for item in items:
        if "chromium_path" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.browser)
