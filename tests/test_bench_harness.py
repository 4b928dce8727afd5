"""The bench's rows show their own floors, so a target under one reads as the floor's miss: the
compute rows, the JSON floor's time above the baseline's write (the scale the compute ratio is
read on); the round-trip rows against Jupyter's writer, the JSON floor with hashline's durable
write in place of Jupyter's. The corpus rows are judged at equal durability (the baseline
writes as hashline does), with the round trip through Jupyter's writer beside, untargeted."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from bench.cold import DURABLE_BASELINE, JUPYTER_REFERENCE, corpus_aggregates, corpus_row
from bench.harness import Aggregate, Comparison


def _row(name: str, ours: float, write: float, theirs: float, their_write: float,
         floor: float) -> Comparison:  # fmt: skip
    return Comparison(
        name, "hashline", "nbformat", candidate_s=[ours] * 3, baseline_s=[theirs] * 3,
        floor_s=[floor] * 3, write_s=[write] * 3, baseline_write_s=[their_write] * 3,
    )  # fmt: skip


def _durable(name: str, ours: float, write: float, theirs: float, *, floor: float,
             jupyter: float) -> Comparison:  # fmt: skip
    """A corpus row: the baseline and floor write with our `write`; Jupyter's round trip
    beside."""
    return Comparison(
        name, "hashline", DURABLE_BASELINE, candidate_s=[ours] * 3, baseline_s=[theirs] * 3,
        floor_s=[floor] * 3, write_s=[write] * 3, same_write=True, reference=JUPYTER_REFERENCE,
        reference_s=[jupyter] * 3,
    )  # fmt: skip


def test_the_floor_compute_is_the_json_floor_above_jupyters_write() -> None:
    row = _row("corpus     3 KB a.ipynb", ours=3.0, write=1.5, theirs=2.2, their_write=1.2,
               floor=1.5)  # fmt: skip
    assert row.compute_ratio == pytest.approx(1.5)  # (3.0 - 1.5) / (2.2 - 1.2)
    assert row.floor_compute_ratio == pytest.approx(0.3)  # (1.5 - 1.2) / (2.2 - 1.2)
    without = Comparison("x", "a", "b", candidate_s=[1.0], baseline_s=[2.0], floor_s=[1.0])
    assert without.floor_compute_ratio is None  # no baseline write: no compute scale


def test_the_corpus_compute_row_reports_its_floor_without_a_target() -> None:
    """Issue 39 sets no compute target: the row says how much of a miss is compute, no more."""
    rows = [
        _durable("corpus     3 KB a.ipynb", 3.0, 1.5, 2.2, floor=1.85, jupyter=2.0),
        _durable("corpus     5 KB b.ipynb", 2.0, 1.0, 2.0, floor=1.4, jupyter=1.8),
        _durable("corpus    12 KB c.ipynb", 1.2, 1.0, 2.0, floor=1.2, jupyter=1.8),
    ]
    compute = next(a for a in corpus_aggregates(rows) if "compute" in a.name)
    assert compute.ratios == pytest.approx([1.5 / 0.7, 1.0, 0.2])  # (ours - w) / (theirs - w)
    assert sorted(compute.floors) == pytest.approx([0.2, 0.4, 0.5])  # (floor - w) / (theirs - w)
    assert compute.target is None and compute.met is None
    assert "floor 0.400x" in compute.row() and "MISSED" not in compute.row()


def test_the_durable_floor_is_the_json_floor_with_our_write_in_place_of_jupyters() -> None:
    row = _row("corpus     3 KB a.ipynb", ours=3.0, write=1.5, theirs=2.0, their_write=1.0,
               floor=1.2)  # fmt: skip
    assert row.durable_floor_ratio == pytest.approx(0.85)  # (1.2 - 1.0 + 1.5) / 2.0
    assert row.floor_ratio == pytest.approx(0.6)
    assert "floor 0.600x (0.850x with our write)" in row.row()
    without = Comparison("x", "a", "b", candidate_s=[1.0], baseline_s=[2.0], floor_s=[1.0])
    assert without.durable_floor_ratio is None  # no writes measured: no durable floor


def _median(rows: list[Comparison], target: float) -> Aggregate:
    """The median aggregate of rows against Jupyter's writer, with both their floors."""
    floors = [r.floor_ratio for r in rows if r.floor_ratio is not None]
    durable = [r.durable_floor_ratio for r in rows if r.durable_floor_ratio is not None]
    ratios = [r.ratio for r in rows]
    return Aggregate("median", ratios, "median", target, floors=floors, durable_floors=durable)


def test_a_round_trip_target_under_the_durable_floor_reads_as_the_floors_miss() -> None:
    """Planted figures (rows against Jupyter's writer, as the generated rows are): the median's
    floor is under a 0.8x target, but not once our write replaces Jupyter's; then with a
    cheaper write of ours, the same miss is our overhead."""
    median = _median([_row(f"cold {n}", 2.4, 1.4, 2.0, 0.6, floor=1.2) for n in "abc"], 0.8)
    assert median.met is False  # 1.2x against 0.8x
    assert median.floor_ratio == pytest.approx(0.6)  # under the target on its own
    assert median.durable_floor_ratio == pytest.approx(1.0)  # (1.2 - 0.6 + 1.4) / 2.0
    assert median.reach.startswith("the JSON floor with our durable write is over the target")
    assert median.reach.endswith("ours is above it: our overhead")
    assert "floor 0.600x (1.000x with our write)" in median.row()
    median = _median([_row(f"cold {n}", 2.4, 0.6, 2.0, 0.6, floor=1.2) for n in "abc"], 0.8)
    assert median.reach == "above the floor: our overhead"  # 0.6x either way: ours to cut


def test_corpus_rows_are_judged_at_equal_durability_with_jupyters_writer_beside() -> None:
    """The corpus baseline writes with our durable write (timed once, as ours): no arithmetic
    floor; the round trip with Jupyter's writer is printed beside every row, without a target."""
    rows = [
        _durable("corpus     3 KB a.ipynb", 1.6, 0.8, 2.0, floor=1.3, jupyter=1.6),
        _durable("corpus     5 KB b.ipynb", 1.8, 0.8, 2.0, floor=1.3, jupyter=1.6),
        _durable("corpus    12 KB c.ipynb", 2.6, 0.8, 2.0, floor=1.3, jupyter=1.6),
    ]
    assert rows[0].durable_floor_ratio is None  # the floor already writes as ours
    assert rows[0].floor_ratio == pytest.approx(0.65)
    assert rows[0].reference_ratio == pytest.approx(1.0)
    assert rows[0].row().endswith(f"vs {JUPYTER_REFERENCE}: 1.000x (no target)")
    median, p90, _, worst = corpus_aggregates(rows)
    assert (median.target, p90.target, worst.target) == (0.8, 1.0, 1.2)
    assert median.ratio == pytest.approx(0.9) and median.met is False
    assert median.reach == "above the floor: our overhead"  # floor 0.65x is under 0.8x
    assert median.reference_ratio == pytest.approx(1.125)  # 1.8 / 1.6, no target
    assert median.row().endswith(f"vs {JUPYTER_REFERENCE}: 1.125x (no target)")
    assert worst.name == "corpus, 1 of >= 10 KB: worst" and worst.ratio == pytest.approx(1.3)
    assert worst.met is False


def test_a_corpus_row_times_the_durable_round_trip_and_jupyters_in_one_rotation(
    tmp_path: Path,
) -> None:
    source = tmp_path / "small.ipynb"
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(f"x = {n}\nprint(x)") for n in range(3)]
    nbformat.write(nb, source)
    work = tmp_path / "work"
    work.mkdir()
    row = corpus_row(source, 2, work)
    assert isinstance(row, Comparison)
    assert (row.baseline, row.reference, row.same_write) == (
        DURABLE_BASELINE, JUPYTER_REFERENCE, True,
    )  # fmt: skip
    timed = (row.candidate_s, row.baseline_s, row.floor_s, row.write_s, row.reference_s)
    assert [len(times) for times in timed] == [2] * 5 and row.baseline_write_s == []
    for name in ("durable.ipynb", "nbformat.ipynb"):  # both baselines wrote the edited notebook
        assert "edited = " in (work / name).read_text(encoding="utf-8")
