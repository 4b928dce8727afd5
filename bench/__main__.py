"""`python -m bench` (`make bench`): every benchmark, one after another, in separate processes
so each starts from a clean interpreter. Extra arguments (`--smoke`, `--repeats N`) are passed
on to each. Exits non-zero if any benchmark fails to run (a missed target is reported, not an
error)."""

from __future__ import annotations

import subprocess
import sys

MODULES = ("bench.engine", "bench.notebook", "bench.zones", "bench.server")


def main() -> int:
    failed = [m for m in MODULES if subprocess.call([sys.executable, "-m", m, *sys.argv[1:]])]
    if failed:
        print(f"benchmarks that failed to run: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
