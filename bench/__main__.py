"""`python -m bench` (`make bench`): every benchmark, one after another, in separate processes
so each starts from a clean interpreter, the cold path first, then one summary table of every
ratio next to its target (bench/summary.py) and one JSON file of all raw figures
(bench/results/all.json, or all-smoke.json with `--smoke`). Extra arguments (`--smoke`,
`--repeats N`) are passed on to each. Exits non-zero if any benchmark fails to run; with
`--check`, also if any row misses its target or a warm row is more than 10% above its
baseline ratio (bench/warm_baseline.json). CI does not run `--check`: timings are not tests."""

from __future__ import annotations

import subprocess
import sys

from bench.harness import RESULTS_DIR
from bench.summary import check, summarize

MODULES = ("cold", "engine", "notebook", "zones", "server", "safety", "safety_run")


def main() -> int:
    args = [a for a in sys.argv[1:] if a != "--check"]
    checking = "--check" in sys.argv[1:]
    suffix = "-smoke" if "--smoke" in args else ""
    RESULTS_DIR.mkdir(exist_ok=True)
    files = {name: RESULTS_DIR / f"{name}{suffix}.json" for name in MODULES}
    for path in files.values():
        path.unlink(missing_ok=True)
    failed = [
        name
        for name, path in files.items()
        if subprocess.call([sys.executable, "-m", f"bench.{name}", *args, "--json", str(path)])
    ]
    print("\n".join(summarize(files, RESULTS_DIR / f"all{suffix}.json", smoke=bool(suffix))))
    if failed:
        print(f"benchmarks that failed to run: {', '.join(failed)}", file=sys.stderr)
    misses = check(files) if checking else []
    for miss in misses:
        print(f"check: {miss}", file=sys.stderr)
    if checking and not misses:
        print("check: every target met, every warm ratio within 10% of its baseline")
    return 1 if failed or misses else 0


if __name__ == "__main__":
    raise SystemExit(main())
