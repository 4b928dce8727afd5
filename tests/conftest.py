"""Suite-wide plugins and the one fixture every server test shares.

pytest only honours `pytest_plugins` in the top-level conftest, so every plugin the suite uses
is declared here: jupyter_server's (pytest-jupyter's server fixtures plus its core plugin,
which runs `async def` tests in an event loop) and the project's own in `tests/testkit/`.
"""

from __future__ import annotations

import pytest
from traitlets.config import Config

pytest_plugins = [
    "jupyter_server.pytest_plugin",
    "testkit.resources",
    "testkit.rest_server",
    "testkit.scenario",
    "testkit.comms",
    "testkit.faults",
]


@pytest.fixture
def jp_server_config(hashline_server_config: Config) -> Config:
    """Every Jupyter server a test starts has jupyter_hashline enabled and requires auth.

    Defined here rather than in a plugin: a conftest fixture always overrides a plugin's of the
    same name (pytest-jupyter's default), whatever the plugins' registration order. A
    directory or module that needs another server overrides it again.
    """
    return hashline_server_config
