"""The bench's compute rows show their own floor: the JSON floor's time above Jupyter's write,
on the scale the compute ratio is read, so a target under it reads as the floor's miss."""

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
