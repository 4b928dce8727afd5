"""Shared timing and reporting for the benchmarks.

Every comparison is measured side by side in one process: the candidate and its baseline are
run alternately, repeat by repeat, so machine noise hits both alike. Reported ratios are
median(candidate) / median(baseline) with the spread (min..max of per-repeat ratios).

A comparison may also time, in the same rotation, what bounds it from below: the JSON floor
(parse + dump + the baseline's write), the candidate's durable write alone and the baseline's
write alone. Its row then says how far each is from the baseline, and a missed target says
whether the miss is the floor's or ours: the target is under what the durable write alone costs
here, or under the JSON floor with the candidate's durable write in place of the baseline's
(what parsing and dumping alone would cost an edit written as durably as ours), or under the
JSON floor itself; else the miss is ours (above the floor).

A baseline may write as the candidate does (`same_write`): its write alone is then the
candidate's, timed once, and the floor writes that way too. A reference (another baseline,
without a target) may join the rotation; its row prints the candidate's ratio to it beside.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

RESULTS_DIR = Path(__file__).resolve().parent / "results"
Bound = tuple[Callable[[], object], Callable[[], object]]
"""A timed call and the untimed step run before it."""


@dataclass
class Comparison:
    name: str
    candidate: str
    baseline: str
    candidate_s: list[float] = field(default_factory=list)
    baseline_s: list[float] = field(default_factory=list)
    target: float | None = None  # ratio the candidate must stay at or under
    floor_s: list[float] = field(default_factory=list)  # the JSON floor, same rotation
    write_s: list[float] = field(default_factory=list)  # the durable write alone, same rotation
    baseline_write_s: list[float] = field(default_factory=list)  # the baseline's own write alone
    same_write: bool = False  # the baseline (and floor) write as the candidate does: write_s
    reference: str | None = None  # another baseline, untargeted, in the same rotation
    reference_s: list[float] = field(default_factory=list)

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

    @property
    def floor_ratio(self) -> float | None:
        """The JSON floor's own ratio to the baseline (None when not measured)."""
        return _ratio_of(self.floor_s, self.baseline_s)

    @property
    def write_ratio(self) -> float | None:
        """The durable write alone as a ratio to the baseline: no durable edit goes under it."""
        return _ratio_of(self.write_s, self.baseline_s)

    @property
    def durable_floor_ratio(self) -> float | None:
        """The JSON floor with the candidate's durable write in place of the baseline's (the
        floor's time, less the baseline's write, plus the candidate's), over the baseline: what
        parsing and dumping alone cost an edit written as durably as ours (None unless the
        floor and both writes were measured)."""
        if self.same_write or not self.floor_s or not self.write_s or not self.baseline_write_s:
            return None  # (with `same_write` the floor already writes as ours: floor_ratio)
        median = statistics.median
        floor = median(self.floor_s) - median(self.baseline_write_s) + median(self.write_s)
        return floor / median(self.baseline_s)

    @property
    def reference_ratio(self) -> float | None:
        """The candidate over the reference baseline (None when there is none)."""
        return _ratio_of(self.candidate_s, self.reference_s)

    @property
    def their_write_s(self) -> list[float]:
        """The baseline's write alone: its own, or (`same_write`) the candidate's."""
        return self.write_s if self.same_write else self.baseline_write_s

    @property
    def compute_ratio(self) -> float | None:
        """Each contender's time above its own durable write, candidate over baseline (None
        unless both writes were measured)."""
        return self._above_write(self.candidate_s, self.write_s)

    @property
    def floor_compute_ratio(self) -> float | None:
        """The JSON floor's time above the baseline's write (the floor writes with it), over the
        baseline's: what `json.loads` + `json.dumps` alone cost where `compute_ratio` is read
        (None unless the floor and the baseline's write were measured)."""
        return self._above_write(self.floor_s, self.their_write_s)

    def _above_write(self, times: list[float], write: list[float]) -> float | None:
        """The median of `times` above that of `write`, over the baseline's time above its
        own write (None when any of them was not measured)."""
        if not times or not write or not self.their_write_s:
            return None
        ours = statistics.median(times) - statistics.median(write)
        theirs = statistics.median(self.baseline_s) - statistics.median(self.their_write_s)
        return max(ours, 0.0) / theirs if theirs > 0 else None

    @property
    def write_share(self) -> float | None:
        """The share of the candidate's time that its durable write alone takes."""
        return _ratio_of(self.write_s, self.candidate_s)

    @property
    def reach(self) -> str:
        return miss_reason(
            self.ratio, self.target, self.floor_ratio, self.write_ratio, self.durable_floor_ratio
        )

    def row(self) -> str:
        lo, hi = self.spread
        cand_ms = statistics.median(self.candidate_s) * 1e3
        base_ms = statistics.median(self.baseline_s) * 1e3
        target = "" if self.target is None else f"  target <= {self.target:g}x"
        verdict = {None: "", True: "  MET", False: "  MISSED"}[self.met]
        below = bounds(
            self.floor_ratio, self.write_ratio, self.write_share, self.durable_floor_ratio
        )
        return (
            f"{self.name:<48} {self.ratio:7.3f}x  [{lo:.3f}..{hi:.3f}]  "
            f"{cand_ms:10.3f} ms vs {base_ms:10.3f} ms{target}{verdict}{below}"
            f"{'' if self.met is not False else '  (' + self.reach + ')'}"
            f"{referenced(self.reference, self.reference_ratio)}"
        )


@dataclass
class Aggregate:
    """A summary of many comparisons' ratios (median, p90 or max) against a target, with the
    same statistic of their floors when they were measured."""

    name: str
    ratios: list[float]
    statistic: str  # "median", "p90" or "max"
    target: float | None = None
    floors: list[float] = field(default_factory=list)  # the rows' JSON floor ratios
    writes: list[float] = field(default_factory=list)  # the rows' durable write ratios
    durable_floors: list[float] = field(default_factory=list)  # floors with our write, per row
    reference: str | None = None  # the rows' untargeted reference baseline, if any
    references: list[float] = field(default_factory=list)  # the rows' ratios to it

    @property
    def ratio(self) -> float:
        return _statistic(self.ratios, self.statistic)

    @property
    def spread(self) -> tuple[float, float]:
        return min(self.ratios), max(self.ratios)

    @property
    def met(self) -> bool | None:
        return None if self.target is None else self.ratio <= self.target

    @property
    def floor_ratio(self) -> float | None:
        return _statistic(self.floors, self.statistic) if self.floors else None

    @property
    def write_ratio(self) -> float | None:
        return _statistic(self.writes, self.statistic) if self.writes else None

    @property
    def durable_floor_ratio(self) -> float | None:
        return _statistic(self.durable_floors, self.statistic) if self.durable_floors else None

    @property
    def reference_ratio(self) -> float | None:
        return _statistic(self.references, self.statistic) if self.references else None

    @property
    def reach(self) -> str:
        return miss_reason(
            self.ratio, self.target, self.floor_ratio, self.write_ratio, self.durable_floor_ratio
        )

    def row(self) -> str:
        lo, hi = self.spread
        target = "" if self.target is None else f"  target <= {self.target:g}x"
        verdict = {None: "", True: "  MET", False: "  MISSED"}[self.met]
        return (
            f"{self.name:<48} {self.ratio:7.3f}x  [{lo:.3f}..{hi:.3f}]  "
            f"{self.statistic} of {len(self.ratios)} ratios{target}{verdict}"
            f"{bounds(self.floor_ratio, self.write_ratio, None, self.durable_floor_ratio)}"
            f"{'' if self.met is not False else '  (' + self.reach + ')'}"
            f"{referenced(self.reference, self.reference_ratio)}"
        )


@dataclass(frozen=True, slots=True)
class Missing:
    """A row that could not be measured: its input is absent, or its scenario failed. Printed
    loudly and kept in the raw figures, so `python -m bench --check` fails on it."""

    name: str
    reason: str

    def row(self) -> str:
        return f"{self.name:<48} MISSING: {self.reason}"


Row = Comparison | Aggregate | Missing


def _statistic(values: list[float], statistic: str) -> float:
    if statistic == "max":
        return max(values)
    if statistic == "p90" and len(values) > 1:
        return statistics.quantiles(values, n=10, method="inclusive")[-1]
    return statistics.median(values)


def _ratio_of(part: list[float], whole: list[float]) -> float | None:
    if not part or not whole:
        return None
    return statistics.median(part) / statistics.median(whole)


def bounds(
    floor: float | None, write: float | None, share: float | None, durable: float | None = None
) -> str:
    """`  floor 0.710x (0.790x with our write), write 0.550x (62% of ours)`: what bounds a row
    from below."""
    parts = []
    if floor is not None:
        parts.append(
            f"floor {floor:.3f}x" + ("" if durable is None else f" ({durable:.3f}x with our write)")
        )
    if write is not None:
        parts.append(f"write {write:.3f}x" + ("" if share is None else f" ({share:.0%} of ours)"))
    return ("  " + ", ".join(parts)) if parts else ""


def referenced(reference: str | None, ratio: float | None) -> str:
    """`;  vs nbformat round trip, Jupyter's writer: 0.950x (no target)`, or nothing."""
    return (
        "" if reference is None or ratio is None else f";  vs {reference}: {ratio:.3f}x (no target)"
    )


def miss_reason(
    ratio: float,
    target: float | None,
    floor: float | None,
    write: float | None,
    durable_floor: float | None = None,
) -> str:
    """Why a row misses its target: the floor's cost or ours (see the module docstring)."""
    if target is None or ratio <= target:
        return "met"
    if write is not None and target < write:
        return "unreachable here: the durable write alone is over the target"
    if durable_floor is not None and target < durable_floor:
        where = _against(ratio, durable_floor)
        return f"the JSON floor with our durable write is over the target too; {where}"
    if floor is None:
        return "our overhead (no floor measured)"
    if target < floor:
        return f"the JSON floor is over the target too; {_against(ratio, floor)}"
    return "above the floor: our overhead"


def _against(ratio: float, floor: float) -> str:
    return "ours is at or under it" if ratio <= floor else "ours is above it: our overhead"


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
    floor: Bound | None = None,
    write: Bound | None = None,
    baseline_write: Bound | None = None,
    same_write: bool = False,
    reference: tuple[str, Bound] | None = None,
) -> Comparison:
    """Time `candidate` and `baseline` alternately `repeats` times (after one warm-up each).

    A full collection runs before every timed call (so none runs inside it), over the objects
    made since the comparison began: what lived before it is frozen (`gc.freeze`), as a full
    scan of every imported module's objects cost 15-70 ms a call here and most of a quick run.

    `setup` runs (untimed) before every timed call; `prepare` is a pair of untimed steps, the
    first run before each candidate call, the second before each baseline call. `floor` and
    `write` (a timed call and its untimed step) join the same rotation (see the docstring), and
    so does `reference` (a named untargeted baseline); `same_write`: the baseline writes with
    the candidate's `write` (its own write is then not timed apart)."""
    assert not (same_write and baseline_write), "the baseline's write is the candidate's"
    result = Comparison(name, candidate[0], baseline[0], target=target, same_write=same_write)
    result.reference = None if reference is None else reference[0]
    steps = prepare or (lambda: None, lambda: None)
    rotation = [
        (candidate[1], result.candidate_s, steps[0]),
        (baseline[1], result.baseline_s, steps[1]),
    ]
    if floor is not None:
        rotation.append((floor[0], result.floor_s, floor[1]))
    if write is not None:
        rotation.append((write[0], result.write_s, write[1]))
    if baseline_write is not None:
        rotation.append((baseline_write[0], result.baseline_write_s, baseline_write[1]))
    if reference is not None:
        rotation.append((reference[1][0], result.reference_s, reference[1][1]))
    gc.collect()
    gc.freeze()  # what lives now (modules, the case) is never scanned again: see below
    try:
        for warm in (True, False):
            for _ in range(1 if warm else repeats):
                for fn, sink, step in rotation:
                    step()
                    if setup is not None:
                        setup()
                    gc.collect()  # no collection during the timed call; only the young scanned
                    elapsed = _time_once(fn)
                    if not warm:
                        sink.append(elapsed)
    finally:
        gc.unfreeze()
    return result


def parse_args(
    description: str, extra: Callable[[argparse.ArgumentParser], object] | None = None
) -> argparse.Namespace:
    """The arguments every benchmark takes, and those `extra` adds for one of them."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--smoke", action="store_true", help="one tiny run of every case")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--json", type=Path, default=None, help="where to write raw figures")
    if extra is not None:
        extra(parser)
    return parser.parse_args()


def report(title: str, rows: Sequence[Row], json_path: Path | None = None) -> None:
    """Print the table and write the raw figures as JSON (with each row's floors and, for a
    missed target, why it was missed; a missing row as `{"name", "missing"}`)."""
    print(f"\n== {title}  (ratio = median candidate / median baseline; [spread])")
    for row in rows:
        print(row.row())
    missing = [r for r in rows if isinstance(r, Missing)]
    if missing:
        print(f"!! {len(missing)} row(s) not measured: `python -m bench --check` fails on them")
    if json_path is None:
        RESULTS_DIR.mkdir(exist_ok=True)
        json_path = RESULTS_DIR / f"{title.split()[0].lower()}.json"
    payload = [_raw(r) for r in rows]
    json_path.write_text(json.dumps(payload, indent=1))


def _raw(r: Row) -> dict[str, object]:
    if isinstance(r, Missing):
        return {"name": r.name, "missing": r.reason}
    return (
        asdict(r)
        | {"ratio": r.ratio, "spread": r.spread, "met": r.met, "reach": r.reach}
        | {"floor_ratio": r.floor_ratio, "write_ratio": r.write_ratio}
        | {"durable_floor_ratio": r.durable_floor_ratio, "reference_ratio": r.reference_ratio}
        | ({"compute_ratio": r.compute_ratio} if isinstance(r, Comparison) else {})
    )
