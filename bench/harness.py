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
) -> Comparison:
    """Time `candidate` and `baseline` alternately `repeats` times (after one warm-up each)."""
    result = Comparison(name, candidate[0], baseline[0], target=target)
    for warm in (True, False):
        for _ in range(1 if warm else repeats):
            pair = [(candidate[1], result.candidate_s), (baseline[1], result.baseline_s)]
            for fn, sink in pair:
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


def report(title: str, rows: list[Comparison], json_path: Path | None = None) -> None:
    """Print the table and write the raw figures as JSON."""
    print(f"\n== {title}  (ratio = median candidate / median baseline; [spread])")
    for row in rows:
        print(row.row())
    if json_path is None:
        RESULTS_DIR.mkdir(exist_ok=True)
        json_path = RESULTS_DIR / f"{title.split()[0].lower()}.json"
    payload = [asdict(r) | {"ratio": r.ratio, "spread": r.spread, "met": r.met} for r in rows]
    json_path.write_text(json.dumps(payload, indent=1))
