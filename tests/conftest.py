"""Suite-wide plugins and the one fixture every server test shares.

pytest only honours `pytest_plugins` in the top-level conftest, so every plugin the suite uses
is declared here: jupyter_server's (pytest-jupyter's server fixtures plus its core plugin,
which runs `async def` tests in an event loop) and the project's own in `tests/testkit/`.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from traitlets.config import Config

pytest_plugins = [
    "jupyter_server.pytest_plugin",
    "testkit.recorder",
    "testkit.resources",
    "testkit.rest_server",
    "testkit.rooms",
    "testkit.scenario",
    "testkit.comms",
    "testkit.faults",
    "testkit.conformance",
]


@pytest.fixture(autouse=True)
def isolated_session_settings(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[None]:
    """No test reads the developer's Jupyter config or keyring (agent sessions resolve their
    provider, model, URL and key from those, and a desktop keyring may even prompt), nor
    signs notebooks in the developer's notary (directory mode keeps trust by default)."""
    empty = tmp_path_factory.getbasetemp() / "empty-jupyter-config"
    empty.mkdir(exist_ok=True)
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(empty))
    # nor signs notebooks in the developer's trust database (tests that sign give their own)
    monkeypatch.setenv("JUPYTER_HASHLINE_TRUST", "off")
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


@pytest.fixture
def jp_server_config(hashline_server_config: Config) -> Config:
    """Every Jupyter server a test starts has jupyter_hashline enabled and requires auth.

    Defined here rather than in a plugin: a conftest fixture always overrides a plugin's of the
    same name (pytest-jupyter's default), whatever the plugins' registration order. A
    directory or module that needs another server overrides it again.
    """
    return hashline_server_config
