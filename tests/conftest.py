"""Suite-wide fixtures.

pytest only honours `pytest_plugins` in the top-level conftest, so every plugin the suite uses
is declared here. jupyter_server's plugin (pytest-jupyter's server fixtures plus its core
plugin, which runs `async def` tests in an event loop) serves the server tests.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["jupyter_server.pytest_plugin"]

REPO_ROOT = Path(__file__).resolve().parent.parent
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
    import shutil

    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        pytest.skip("Chromium is not installed (make test installs it with apt-get when root)")
    return path
