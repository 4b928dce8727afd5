"""The bench's rows show their own floors, so a target under one reads as the floor's miss: the
compute rows, the JSON floor's time above Jupyter's write (the scale the compute ratio is read
on); the round-trip rows, the JSON floor with hashline's durable write in place of Jupyter's."""

from __future__ import annotations

import pytest

from bench.cold import corpus_aggregates
from bench.harness import Comparison


def _row(name: str, ours: float, write: float, theirs: float, their_write: float,
         floor: float) -> Comparison:  # fmt: skip
    return Comparison(
        name, "hashline", "nbformat", candidate_s=[ours] * 3, baseline_s=[theirs] * 3,
        floor_s=[floor] * 3, write_s=[write] * 3, baseline_write_s=[their_write] * 3,
    )  # fmt: skip


def test_the_floor_compute_is_the_json_floor_above_jupyters_write() -> None:
    row = _row("corpus     3 KB a.ipynb", ours=3.0, write=1.5, theirs=2.2, their_write=1.2,
               floor=1.5)  # fmt: skip
    assert row.compute_ratio == pytest.approx(1.5)  # (3.0 - 1.5) / (2.2 - 1.2)
    assert row.floor_compute_ratio == pytest.approx(0.3)  # (1.5 - 1.2) / (2.2 - 1.2)
    without = Comparison("x", "a", "b", candidate_s=[1.0], baseline_s=[2.0], floor_s=[1.0])
    assert without.floor_compute_ratio is None  # no baseline write: no compute scale


def test_the_corpus_compute_row_reports_its_floor_and_blames_it_when_it_is_over() -> None:
    rows = [
        _row("corpus     3 KB a.ipynb", 3.0, 1.5, 2.2, 1.2, floor=1.55),
        _row("corpus     5 KB b.ipynb", 2.0, 1.0, 2.0, 1.0, floor=1.4),
        _row("corpus    12 KB c.ipynb", 1.2, 1.0, 2.0, 1.0, floor=1.2),
    ]
    compute = next(a for a in corpus_aggregates(rows) if "compute" in a.name)
    assert sorted(compute.floors) == pytest.approx([0.2, 0.35, 0.4])
    assert compute.met is False  # median compute 1.0x against 0.3x
    assert "floor 0.350x" in compute.row()
    assert "the JSON floor is over the target too" in compute.reach
    rows[0] = _row("corpus     3 KB a.ipynb", 3.0, 1.5, 2.2, 1.2, floor=1.25)
    rows[1] = _row("corpus     5 KB b.ipynb", 2.0, 1.0, 2.0, 1.0, floor=1.1)
    compute = next(a for a in corpus_aggregates(rows) if "compute" in a.name)
    assert compute.reach == "above the floor: our overhead"  # floor median 0.1x: ours to cut


def test_the_durable_floor_is_the_json_floor_with_our_write_in_place_of_jupyters() -> None:
    row = _row("corpus     3 KB a.ipynb", ours=3.0, write=1.5, theirs=2.0, their_write=1.0,
               floor=1.2)  # fmt: skip
    assert row.durable_floor_ratio == pytest.approx(0.85)  # (1.2 - 1.0 + 1.5) / 2.0
    assert row.floor_ratio == pytest.approx(0.6)
    assert "floor 0.600x (0.850x with our write)" in row.row()
    without = Comparison("x", "a", "b", candidate_s=[1.0], baseline_s=[2.0], floor_s=[1.0])
    assert without.durable_floor_ratio is None  # no writes measured: no durable floor


def test_a_round_trip_target_under_the_durable_floor_reads_as_the_floors_miss() -> None:
    """Planted figures: the median's floor is under the 0.5x target, but not once our write
    replaces Jupyter's; then with a cheaper write of ours, the same miss is our overhead."""
    rows = [
        _row("corpus     3 KB a.ipynb", 2.4, 0.9, 2.0, 0.6, floor=0.95),
        _row("corpus     5 KB b.ipynb", 2.2, 0.9, 2.0, 0.6, floor=0.95),
        _row("corpus    12 KB c.ipynb", 2.0, 0.9, 2.0, 0.6, floor=0.95),
    ]
    median = next(a for a in corpus_aggregates(rows) if a.name.endswith("median"))
    assert median.met is False  # 1.1x against 0.5x
    assert median.floor_ratio == pytest.approx(0.475)  # under the target on its own
    assert median.durable_floor_ratio == pytest.approx(0.625)  # (0.95 - 0.6 + 0.9) / 2.0
    assert median.reach.startswith("the JSON floor with our durable write is over the target")
    assert median.reach.endswith("ours is above it: our overhead")
    assert "floor 0.475x (0.625x with our write)" in median.row()
    rows = [
        _row("corpus     3 KB a.ipynb", 2.4, 0.6, 2.0, 0.6, floor=0.95),
        _row("corpus     5 KB b.ipynb", 2.2, 0.6, 2.0, 0.6, floor=0.95),
        _row("corpus    12 KB c.ipynb", 2.0, 0.6, 2.0, 0.6, floor=0.95),
    ]
    median = next(a for a in corpus_aggregates(rows) if a.name.endswith("median"))
    assert median.reach == "above the floor: our overhead"  # 0.475x either way: ours to cut
