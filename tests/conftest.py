"""Suite-wide fixtures.

pytest only honours `pytest_plugins` in the top-level conftest, so every plugin the suite uses
is declared here. jupyter_server's plugin (pytest-jupyter's server fixtures plus its core
plugin, which runs `async def` tests in an event loop) serves the server tests.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytest_plugins = ["jupyter_server.pytest_plugin"]

REPO_ROOT = Path(__file__).resolve().parent.parent
CORPUS_DIR = REPO_ROOT.parent / "shared" / "corpus"


@pytest.fixture(autouse=True)
def isolated_session_settings(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[None]:
    """No test reads the developer's Jupyter config or keyring: agent sessions resolve their
    provider, model, URL and key from those, and a desktop keyring may even prompt."""
    empty = tmp_path_factory.getbasetemp() / "empty-jupyter-config"
    empty.mkdir(exist_ok=True)
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(empty))
    monkeypatch.delenv("JUPYTER_CONFIG_PATH", raising=False)
    try:
        import keyring
        from keyring.backends.null import Keyring as NullKeyring
    except ImportError:
        yield
        return
    previous = keyring.get_keyring()
    keyring.set_keyring(NullKeyring())
    try:
        yield
    finally:
        keyring.set_keyring(previous)


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
