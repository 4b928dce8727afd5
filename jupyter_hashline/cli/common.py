"""What every `jupyter-hashline` command shares: the program name, the exit codes, and how a
usage or I/O failure is reported (on stderr, exit 2)."""

from __future__ import annotations

import sys

PROG = "jupyter-hashline"
DONE, REJECTED, USAGE = 0, 1, 2


def fail(command: str, message: str) -> int:
    """Report a usage or I/O failure of `command` on stderr; the exit code to return."""
    print(f"{PROG} {command}: {message}", file=sys.stderr)
    return USAGE
