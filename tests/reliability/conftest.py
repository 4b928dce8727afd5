"""Reliability tests: faults, bad input, limits and load (issue 13).

The REST fixtures are tests/server's (server_fixtures.py), put on the path below.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
for folder in (HERE.parent / "server", HERE):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

from faultkit import Trial  # noqa: E402
from server_fixtures import api, hashline_config, jp_server_config  # noqa: E402

__all__ = ["api", "fault", "hashline_config", "jp_server_config"]


@pytest.fixture
def fault(request: pytest.FixtureRequest) -> Callable[..., Trial]:
    """`with fault(root, "label") as trial:` one injected fault, judged on the files."""

    def start(
        root: Path, label: str = "", *, leftovers: bool = False, aside: tuple[str, ...] = ()
    ) -> Trial:
        return Trial(f"{request.node.nodeid} {label}".strip(), root, leftovers, aside)

    return start


def pytest_terminal_summary(terminalreporter: Any) -> None:
    from faultkit import print_tally

    print_tally(terminalreporter)
