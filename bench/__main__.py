"""`python -m bench` (`make bench-full`): every benchmark, one after another, in separate
processes so each starts from a clean interpreter, the cold path first, then one summary table
of every ratio next to its target (bench/summary.py) and one JSON file of all raw figures
(bench/results/all.json, or all-smoke.json with `--smoke`). Extra arguments (`--smoke`,
`--repeats N`) are passed on to each. Exits non-zero if any benchmark fails to run; with
`--check`, also if any row misses its target or a warm row is more than 10% above its
baseline ratio (bench/warm_baseline.json). CI does not run `--check`: timings are not tests.

`--quick` (`make bench`, under 5 minutes on 2 cores): the timing benchmarks with fewer repeats
(`QUICK_REPEATS`; corpus rows and the room row keep their 15 repeats, and the room's row
without targets, `live_save = "room"`, is left out), and the two safety tables
without their peers (jupyter-mcp-server, which the full run installs and runs beside hashline):
hashline's own columns, judged by the same oracles, the stale-edit table (with its review and
undo rows) on a declared deterministic sample of `QUICK_SAFETY_SAMPLE` of its scenarios
(bench/safety.py `--sample`: half generated, half corpus, spread over classes and agent edits;
its first note says so); and the sloppy-agent table (bench/sloppy.py) on 12 cells instead of
every eligible one. Every row and target of the full run is judged in a quick run too.
Those tables time nothing, so a quick run runs them side by side, after every timing benchmark
(their output printed one after the other once all are done); the full run runs everything one
after another."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.harness import RESULTS_DIR
from bench.summary import check, summarize

MODULES = (
    "cold",
    "server_path",
    "server_room",
    "hostile",
    "server_load",
    "engine",
    "notebook",
    "zones",
    "server",
    "safety",
    "safety_run",
    "sloppy",
)
QUICK_REPEATS = "5"
QUICK_SAFETY_SAMPLE = "520"  # of 2,065 scenarios: every class, person change and edit kind
QUICK_LIMIT_S = 300  # `--quick` promises to finish in under 5 minutes on 2 cores
QUICK_ARGS = {
    "safety": ("--peer", "model", "--sample", QUICK_SAFETY_SAMPLE),
    "safety_run": ("--peer", "none"),
    "sloppy": ("--quick",),
    # the room row's targets are a few ms apart from its figures: 5 repeats cannot tell them
    # from this machine's noise, and 15 cost seconds; the row without targets is left out
    "server_room": ("--repeats", "15", "--targeted"),
}
UNTIMED = ("safety", "safety_run", "sloppy")
"""Correctness tables (outcome counts judged by oracles, no timing): a quick run runs them side
by side once the timing benchmarks are done."""


def module_args(name: str, args: list[str], quick: bool) -> list[str]:
    """The arguments one benchmark gets (see the module docstring for `--quick`)."""
    if not quick:
        return args
    if name in QUICK_ARGS:
        return _without_repeats(args) + list(QUICK_ARGS[name])
    return args if "--repeats" in args else [*args, "--repeats", QUICK_REPEATS]


def _without_repeats(args: list[str]) -> list[str]:
    """`args` without `--repeats N` (the benchmark's quick arguments say its own)."""
    kept: list[str] = []
    skip = False
    for arg in args:
        if skip or arg == "--repeats":
            skip = not skip
            continue
        kept.append(arg)
    return kept


def main() -> int:
    args = [a for a in sys.argv[1:] if a not in ("--check", "--quick")]
    checking, quick = "--check" in sys.argv[1:], "--quick" in sys.argv[1:]
    suffix = "-smoke" if "--smoke" in args else ""
    RESULTS_DIR.mkdir(exist_ok=True)
    files = {name: RESULTS_DIR / f"{name}{suffix}.json" for name in MODULES}
    for path in files.values():
        path.unlink(missing_ok=True)
    failed: list[str] = []
    took: list[str] = []
    started = time.perf_counter()
    side_by_side = [name for name in files if quick and name in UNTIMED]
    for name, path in files.items():
        if name in side_by_side:
            continue
        began = time.perf_counter()
        if subprocess.call(_command(name, path, args, quick)):
            failed.append(name)
        took.append(f"{name} {time.perf_counter() - began:.0f} s")
    if side_by_side:
        began = time.perf_counter()
        failed += _side_by_side({name: files[name] for name in side_by_side}, args, quick)
        took.append(f"{' + '.join(side_by_side)} side by side {time.perf_counter() - began:.0f} s")
    print("\n".join(summarize(files, RESULTS_DIR / f"all{suffix}.json", smoke=bool(suffix))))
    total = time.perf_counter() - started
    print(f"took {total / 60:.1f} min ({', '.join(took)})" + _over_quick(total, quick))
    if failed:
        print(f"benchmarks that failed to run: {', '.join(failed)}", file=sys.stderr)
    misses = check(files) if checking else []
    for miss in misses:
        print(f"check: {miss}", file=sys.stderr)
    if checking and not misses:
        print("check: every target met, every warm ratio within 10% of its baseline")
    return 1 if failed or misses else 0


def _command(name: str, path: Path, args: list[str], quick: bool) -> list[str]:
    return [
        sys.executable,
        "-m",
        f"bench.{name}",
        *module_args(name, args, quick),
        "--json",
        str(path),
    ]


def _side_by_side(files: dict[str, Path], args: list[str], quick: bool) -> list[str]:
    """Run these benchmarks at once, each writing to a file of its own, then print their
    output in order; the names of those that failed."""
    with tempfile.TemporaryDirectory(prefix="hashline-bench-") as tmp:
        running = []
        for name, path in files.items():
            output = (Path(tmp) / f"{name}.txt").open("wb")
            command = _command(name, path, args, quick)
            running.append((name, output, subprocess.Popen(command, stdout=output, stderr=output)))
        failed = []
        for name, output, process in running:
            if process.wait():
                failed.append(name)
            output.close()
            sys.stdout.write(Path(output.name).read_text(encoding="utf-8", errors="replace"))
        sys.stdout.flush()
    return failed


def _over_quick(total_s: float, quick: bool) -> str:
    """A warning when a quick run took longer than it promises (other runs sharing the
    machine's cores are the usual cause; a benchmark grown slow is the other)."""
    if not quick or total_s <= QUICK_LIMIT_S:
        return ""
    return f"; over the quick mode's {QUICK_LIMIT_S // 60} minutes"


if __name__ == "__main__":
    raise SystemExit(main())
