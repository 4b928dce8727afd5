"""Reliability tests: faults, bad input, limits and load (issue 13).

The REST fixtures are tests/server's (server_fixtures.py), put on the path below.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
for folder in (HERE.parent / "server", HERE):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

from server_fixtures import api, hashline_config, jp_server_config  # noqa: E402

__all__ = ["api", "hashline_config", "jp_server_config"]


def pytest_terminal_summary(terminalreporter: Any) -> None:
    from faultkit import print_tally

    print_tally(terminalreporter)
