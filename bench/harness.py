"""Shared timing and reporting for the benchmarks.

Every comparison is measured side by side in one process: the candidate and its baseline are
run alternately, repeat by repeat, so machine noise hits both alike. Reported ratios are
median(candidate) / median(baseline) with the spread (min..max of per-repeat ratios).
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

RESULTS_DIR = Path(__file__).resolve().parent / "results"


@dataclass
class Comparison:
    name: str
    candidate: str
    baseline: str
    candidate_s: list[float] = field(default_factory=list)
    baseline_s: list[float] = field(default_factory=list)
    target: float | None = None  # ratio the candidate must stay at or under

    @property
    def ratio(self) -> float:
        return statistics.median(self.candidate_s) / statistics.median(self.baseline_s)

    @property
    def spread(self) -> tuple[float, float]:
        ratios = [c / b for c, b in zip(self.candidate_s, self.baseline_s, strict=True)]
        return min(ratios), max(ratios)

    @property
    def met(self) -> bool | None:
        return None if self.target is None else self.ratio <= self.target

    def row(self) -> str:
        lo, hi = self.spread
        cand_ms = statistics.median(self.candidate_s) * 1e3
        base_ms = statistics.median(self.baseline_s) * 1e3
        target = "" if self.target is None else f"  target <= {self.target:g}x"
        verdict = {None: "", True: "  MET", False: "  MISSED"}[self.met]
        return (
            f"{self.name:<48} {self.ratio:7.3f}x  [{lo:.3f}..{hi:.3f}]  "
            f"{cand_ms:10.3f} ms vs {base_ms:10.3f} ms{target}{verdict}"
        )


@dataclass
class Aggregate:
    """A summary of many comparisons' ratios (median, p90 or max) against a target."""

    name: str
    ratios: list[float]
    statistic: str  # "median", "p90" or "max"
    target: float | None = None

    @property
    def ratio(self) -> float:
        if self.statistic == "max":
            return max(self.ratios)
        if self.statistic == "p90" and len(self.ratios) > 1:
            return statistics.quantiles(self.ratios, n=10, method="inclusive")[-1]
        return statistics.median(self.ratios)

    @property
    def spread(self) -> tuple[float, float]:
        return min(self.ratios), max(self.ratios)

    @property
    def met(self) -> bool | None:
        return None if self.target is None else self.ratio <= self.target

    def row(self) -> str:
        lo, hi = self.spread
        target = "" if self.target is None else f"  target <= {self.target:g}x"
        verdict = {None: "", True: "  MET", False: "  MISSED"}[self.met]
        return (
            f"{self.name:<48} {self.ratio:7.3f}x  [{lo:.3f}..{hi:.3f}]  "
            f"{self.statistic} of {len(self.ratios)} ratios{target}{verdict}"
        )


def _time_once(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def compare(
    name: str,
    candidate: tuple[str, Callable[[], object]],
    baseline: tuple[str, Callable[[], object]],
    *,
    repeats: int,
    target: float | None = None,
    setup: Callable[[], object] | None = None,
    prepare: tuple[Callable[[], object], Callable[[], object]] | None = None,
) -> Comparison:
    """Time `candidate` and `baseline` alternately `repeats` times (after one warm-up each).

    `setup` runs (untimed) before every timed call; `prepare` is a pair of untimed steps, the
    first run before each candidate call, the second before each baseline call."""
    result = Comparison(name, candidate[0], baseline[0], target=target)
    steps = prepare or (lambda: None, lambda: None)
    for warm in (True, False):
        for _ in range(1 if warm else repeats):
            pair = [
                (candidate[1], result.candidate_s, steps[0]),
                (baseline[1], result.baseline_s, steps[1]),
            ]
            for fn, sink, step in pair:
                step()
                if setup is not None:
                    setup()
                gc.collect()
                elapsed = _time_once(fn)
                if not warm:
                    sink.append(elapsed)
    return result


def parse_args(description: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--smoke", action="store_true", help="one tiny run of every case")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--json", type=Path, default=None, help="where to write raw figures")
    return parser.parse_args()


def report(
    title: str, rows: list[Comparison] | list[Comparison | Aggregate], json_path: Path | None = None
) -> None:
    """Print the table and write the raw figures as JSON."""
    print(f"\n== {title}  (ratio = median candidate / median baseline; [spread])")
    for row in rows:
        print(row.row())
    if json_path is None:
        RESULTS_DIR.mkdir(exist_ok=True)
        json_path = RESULTS_DIR / f"{title.split()[0].lower()}.json"
    payload = [asdict(r) | {"ratio": r.ratio, "spread": r.spread, "met": r.met} for r in rows]
    json_path.write_text(json.dumps(payload, indent=1))
