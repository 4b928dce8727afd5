"""Cold-path benchmarks: an agent's read and one-line edit after a person saved the notebook.

This is the user's loop: between two agent edits a person saves the notebook (JupyterLab writes
it through nbformat), so what hashline parsed before no longer matches the file. Two kinds of
case, both timed read + patch through `Patcher` + `NotebookFilesystem` over `DiskFilesystem`:

- generated notebooks (100 / 1,000 / 5,000 cells): one long-lived patcher and filesystem (as
  a server keeps them), and before every timed repeat a person's save, untimed: a line is
  appended to two cells far apart (the first and the last but one) and the file gets what
  nbformat writes for that (made by our serializer, proven equal to nbformat's writer and
  checked against `nbformat.writes` once per notebook: a fifth of the cost). What changed
  since hashline's own last write is those two cells, and that is what a read may cost (not
  the stretch between them).
- corpus notebooks (every valid notebook of the shared corpus, and its largest, image-heavy
  one): a first contact. Before every timed repeat the file gets its original bytes back and
  hashline a new patcher, filesystem and snapshot store, untimed, so nothing is cached: the
  first read and the first edit of a notebook as found.

Ratios are medians of interleaved repeats: 15 for every corpus notebook (the image-heavy one
included) and for the 100- and 1,000-cell notebooks, where a repeat costs milliseconds, 5 at
5,000 cells (a repeat there costs about a second). hashline writes with `DiskFilesystem` (a
temp file beside the notebook, fsync, rename, fsync of the directory: never a torn file).
Jupyter's own writer is jupyter_server's `atomic_writing` (that of the stock contents manager:
it copies the old file to `.~NAME`, truncates and rewrites the notebook in place, fsyncs the
file, not the directory, and deletes the copy: less durable, and here cheaper). Baselines, each
timed in the same rotation as hashline (bench/harness.py):

- generated rows: the nbformat round trip (`nbformat.read` + edit + `nbformat.writes` +
  Jupyter's writer) and the JSON floor (`json.loads` + edit + `json.dumps(indent=1,
  sort_keys=True, ensure_ascii=False)` + Jupyter's writer); beside them, hashline's durable
  write alone (`DiskFilesystem.write_bytes` of the file: the thread hand-off, the temp file,
  both fsyncs) and Jupyter's write alone, so each row shows hashline's write's ratio and its
  share of hashline's time, the floor with our write in place of Jupyter's, and whether a
  missed target is the floor's miss or hashline's own overhead;
- corpus rows (first contact), with equal durability: the nbformat round trip written with
  hashline's own durable write (the same `DiskFilesystem.write_bytes` hashline pays, timed, not
  added by arithmetic) is the targeted baseline; the floor is the JSON floor written the same
  way, and the durable write alone is timed too. Beside each row (and each aggregate), without
  a target, hashline's ratio to the nbformat round trip written with Jupyter's writer, the way
  Jupyter itself saves. The compute row sets the write aside on both sides:
  (hashline - the durable write) / (nbformat round trip - the durable write), with the JSON
  floor's time above the same write as its floor;
- the image-heavy rows: as the generated rows (Jupyter's writer), and its read view against
  `nbformat.read` (floor: `json.loads` of the file).

Rows and targets (issue 39, "every read and edit costs what it touches"): generated notebooks,
read (whole view) + one-line patch vs the nbformat round trip (<= 0.3x / 0.1x / 0.08x at 100 /
1,000 / 5,000 cells) and vs the JSON floor (<= 0.6x at 1,000 and 5,000); every valid corpus
notebook, first read + one-line patch vs the nbformat round trip with equal durability (median
<= 0.8x, p90 <= 1.0x, none of 10 KB or more over 1.2x); the corpus's compute above the write,
reported without a target (the issue sets none: with the same write on both sides the
round-trip rows already charge every step of ours; this row says how much of a miss is
compute); the corpus's largest (image-heavy) notebook, first read + patch vs nbformat (<= 0.5x)
and the first read view vs `nbformat.read` (<= 0.5x). A missing corpus fails the run (a row
without its input is not a pass).

Run `python -m bench.cold` (or `--smoke` for one tiny run of each case).
"""

from __future__ import annotations

import asyncio
import csv
import json
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nbformat
from jupyter_server.services.contents.fileio import atomic_writing

from bench.harness import (
    Aggregate,
    Bound,
    Comparison,
    Missing,
    Row,
    compare,
    parse_args,
    report,
)
from bench.notebook import CORPUS_DIR, generated_notebook
from jupyter_hashline.hashline.disk import DiskFilesystem
from jupyter_hashline.hashline.memory_store import InMemorySnapshotStore
from jupyter_hashline.hashline.patcher import Patcher
from jupyter_hashline.notebook import NotebookFilesystem, parse_projection, serialize_notebook

SIZES = (100, 1_000, 5_000)
SMOKE_SIZES = (20,)
NBFORMAT_TARGETS = {100: 0.3, 1_000: 0.1, 5_000: 0.08}
FLOOR_TARGETS = {1_000: 0.6, 5_000: 0.6}
CORPUS_MEDIAN, CORPUS_P90, CORPUS_WORST, CORPUS_LARGE = 0.8, 1.0, 1.2, 10_000
DURABLE_BASELINE = "nbformat round trip, our durable write"
JUPYTER_REFERENCE = "nbformat round trip, Jupyter's writer"
CORPUS_REPEATS = 15  # repeats of every row but the 5,000-cell ones, in any mode but smoke
LARGE_REPEATS = 5  # at 5,000 cells a repeat costs about a second
IMAGE_TARGET = 0.5


def jupyter_write(path: Path, text: str) -> None:
    """What Jupyter's stock contents manager does to save a file (see the module docstring)."""
    with atomic_writing(path, text=True, encoding="utf-8") as handle:
        handle.write(text)


def quiet_read(path: Path) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return nbformat.read(path, as_version=4)


class NothingToEdit(Exception):
    """A notebook without a source line: there is no one-line edit to time."""


class ColdCase:
    """One notebook, one file per contender, the agent's cell and (generated) a person's cell.

    `first_contact`: hashline starts from nothing before every repeat (corpus cases)."""

    def __init__(self, raw: str, directory: Path, *, first_contact: bool) -> None:
        self.raw, self.dir, self.first_contact = raw, directory, first_contact
        self.data = raw.encode("utf-8")
        self.path = directory / "hashline.ipynb"
        self.nbformat_path = directory / "nbformat.ipynb"
        self.floor_path = directory / "floor.ipynb"
        self.write_path = directory / "write.ipynb"
        self.jupyter_write_path = directory / "jupyter-write.ipynb"
        self.durable_path = directory / "durable.ipynb"
        self.durable_floor_path = directory / "durable-floor.ipynb"
        paths = (self.path, self.nbformat_path, self.floor_path, self.write_path)
        for path in (*paths, self.jupyter_write_path, self.durable_path, self.durable_floor_path):
            path.write_text(raw, encoding="utf-8")
        self.loop = asyncio.new_event_loop()
        self.disk = DiskFilesystem(directory)
        self.fs, self.patcher = self._engine()
        text = self.loop.run_until_complete(self.fs.read_text(self.path.name))
        self.cell, self.cell_id = _agent_cell(text)
        count = text.count("\n# %% [")
        far = [n for n in (0, count - 1) if n != self.cell] or [n for n in (1,) if n < count]
        self.person_cells = tuple(dict.fromkeys(far))
        self.count = 0

    def _engine(self) -> tuple[NotebookFilesystem, Patcher]:
        fs = NotebookFilesystem(DiskFilesystem(self.dir))
        return fs, Patcher(fs, InMemorySnapshotStore())

    def close(self) -> None:
        self.loop.close()

    def _line(self) -> str:
        self.count += 1
        return f"edited = {self.count}"

    def reset(self, path: Path) -> Callable[[], None]:
        """The untimed step before a repeat: a person's save, or (first contact) the original
        bytes back and, for hashline, a new patcher, filesystem and store."""

        def step() -> None:
            if self.first_contact:
                path.write_text(self.raw, encoding="utf-8")
                if path == self.path:
                    self.fs, self.patcher = self._engine()
                return
            path.write_text(self.person_save(path), encoding="utf-8")

        return step

    def person_save(self, path: Path) -> str:
        """The bytes JupyterLab writes when the person saves the notebook in `path` with a line
        appended to each of their cells: `nbformat.writes` of that notebook, made by the
        serializer proven byte for byte equal to it (tests/notebook), from `json.loads` of the
        file (5 to 10 times cheaper than nbformat's read and write, which kept a quick run
        over its 5 minutes: this step is untimed, only its bytes matter). `check_person_save`
        compares it with nbformat's own write once per case."""
        nb = json.loads(path.read_text(encoding="utf-8"))
        for index in self.person_cells:
            cell = nb["cells"][index]
            cell["source"] = "".join(cell["source"]) + f"\n# saved {self.count}"
        return serialize_notebook(nb)

    def check_person_save(self) -> None:
        """Fail the run unless `person_save` writes what nbformat writes (the same edit)."""
        ours = self.person_save(self.path)
        nb = quiet_read(self.path)
        for index in self.person_cells:
            nb.cells[index].source += f"\n# saved {self.count}"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = nbformat.writes(nb) + "\n"
        if ours != theirs:
            raise AssertionError("the person's save differs from nbformat's write: fix it")

    async def _hashline(self) -> None:
        read = await self.patcher.read(self.path.name)
        marker = read.text.find(f"] id={self.cell_id}\n")
        line = read.text.count("\n", 0, marker) + 2
        await self.patcher.apply(
            f"[{self.path.name}#{read.tag}]\nreplace {line}:\n+{self._line()}\n"
        )

    def hashline(self) -> None:
        self.loop.run_until_complete(self._hashline())

    def read_view(self) -> None:
        self.loop.run_until_complete(self.patcher.read(self.path.name))

    def _nbformat_edit(self, path: Path) -> str:
        """`nbformat.read` + the one-line edit + `nbformat.writes`: the text to write."""
        nb = quiet_read(path)
        lines = nb.cells[self.cell].source.split("\n")
        nb.cells[self.cell].source = "\n".join([self._line(), *lines[1:]])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return nbformat.writes(nb) + "\n"

    def _json_edit(self, path: Path) -> str:
        """`json.loads` + the edit + `json.dumps` (a notebook older than v4 has no top-level
        cells: its floor is the round trip alone)."""
        nb = json.loads(path.read_text(encoding="utf-8"))
        cells = nb.get("cells")
        if isinstance(cells, list) and self.cell < len(cells):
            source = cells[self.cell].get("source", "")
            if isinstance(source, list) and source:
                source[0] = self._line() + "\n"
            else:
                cells[self.cell]["source"] = self._line() + "\n" + "".join(source)
        return json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False)

    def _our_write(self, path: Path, text: str) -> None:
        """hashline's durable write (`DiskFilesystem.write_bytes`, as the candidate pays it)."""
        self.loop.run_until_complete(self.disk.write_bytes(path.name, text.encode("utf-8")))

    def nbformat_round_trip(self) -> None:
        """The round trip written as Jupyter writes."""
        jupyter_write(self.nbformat_path, self._nbformat_edit(self.nbformat_path))

    def durable_round_trip(self) -> None:
        """The round trip written with hashline's durable write (equal durability)."""
        self._our_write(self.durable_path, self._nbformat_edit(self.durable_path))

    def json_floor(self) -> None:
        jupyter_write(self.floor_path, self._json_edit(self.floor_path))

    def durable_json_floor(self) -> None:
        self._our_write(self.durable_floor_path, self._json_edit(self.durable_floor_path))

    def json_read(self) -> None:
        json.loads(self.floor_path.read_text(encoding="utf-8"))

    def durable_write(self) -> None:
        """hashline's durable write alone: the thread job, the temp file, both fsyncs."""
        self.loop.run_until_complete(self.disk.write_bytes(self.write_path.name, self.data))

    def jupyters_write(self) -> None:
        """Jupyter's write alone, of the same text."""
        jupyter_write(self.jupyter_write_path, self.raw)

    def bounds(self) -> dict[str, Bound]:
        """The floor, with its untimed step (like the others'), and both writes alone."""
        return {
            "floor": (self.json_floor, self.reset(self.floor_path)),
            "write": (self.durable_write, _write_anew),
            "baseline_write": (self.jupyters_write, _write_anew),
        }

    def equal_durability(self) -> dict[str, Any]:
        """`compare`'s arguments for a row at equal durability (see the module docstring): the
        round trip and the floor written with our write, Jupyter's round trip beside."""
        return {
            "baseline": (DURABLE_BASELINE, self.durable_round_trip),
            "prepare": (self.reset(self.path), self.reset(self.durable_path)),
            "floor": (self.durable_json_floor, self.reset(self.durable_floor_path)),
            "write": (self.durable_write, _write_anew),
            "same_write": True,
            "reference": (
                JUPYTER_REFERENCE,
                (self.nbformat_round_trip, self.reset(self.nbformat_path)),
            ),
        }


def _write_anew() -> None:
    """The untimed step before a write alone: none. It writes the same bytes over a file of
    about the same size every time (a temp file renamed over it, or Jupyter's copy and rewrite
    in place), whatever that file holds, so a person's save before it (as long as a whole
    nbformat round trip at 5,000 cells) would change nothing it does."""


def _agent_cell(projection: str) -> tuple[int, str]:
    """The cell a one-line edit replaces the first line of: the middle cell with a source."""
    cells = [(n, c) for n, c in enumerate(parse_projection(projection)) if c.line_count]
    if not cells:
        raise NothingToEdit("no cell with a source line")
    index, cell = cells[len(cells) // 2]
    assert cell.cell_id is not None
    return index, cell.cell_id


def generated_rows(size: int, repeats: int, tmp: Path) -> list[Comparison]:
    raw = serialize_notebook(generated_notebook(size))
    case = ColdCase(raw, tmp, first_contact=False)
    case.check_person_save()
    label = f"cold {size:,} cells: read + one-line patch"
    measured = compare(
        f"{label} vs nbformat round trip",
        ("hashline", case.hashline),
        ("nbformat read+edit+writes+atomic", case.nbformat_round_trip),
        repeats=repeats,
        target=NBFORMAT_TARGETS.get(size),
        prepare=(case.reset(case.path), case.reset(case.nbformat_path)),
        **case.bounds(),
    )
    versus_floor = Comparison(
        f"{label} vs JSON floor",
        "hashline",
        "json loads+dumps+atomic",
        candidate_s=measured.candidate_s,
        baseline_s=measured.floor_s,
        target=FLOOR_TARGETS.get(size),
        write_s=measured.write_s,
    )
    case.close()
    return [measured, versus_floor]


def corpus_notebooks() -> list[Path]:
    """The corpus notebooks a one-line edit can land in: those MANIFEST.tsv lists as valid
    (`y`) or repaired on write (`warn`); invalid ones are refused by design, not measured."""
    if not (CORPUS_DIR / "MANIFEST.tsv").is_file():
        return []
    with (CORPUS_DIR / "MANIFEST.tsv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    names = [
        r["file"]
        for r in rows
        if r["file"].endswith(".ipynb")
        and "/" not in r["file"]
        and r.get("valid", "y").split("(")[0] in ("y", "warn")
    ]
    return [CORPUS_DIR / name for name in sorted(names)]


def corpus_row(path: Path, repeats: int, tmp: Path) -> Comparison | Missing | None:
    """The notebook's row; None (said on the console) when it has no source line to edit; a
    `Missing` row when measuring it failed (the check then fails, naming the error)."""
    raw = path.read_text(encoding="utf-8")
    try:
        case = ColdCase(raw, tmp, first_contact=True)
    except NothingToEdit:
        print(f"corpus {path.name}: no source line to edit, no row")
        return None
    except Exception as error:  # a scenario that errors is reported, never dropped
        return Missing(f"corpus {path.name[:44]}", f"{type(error).__name__}: {error}")
    row = compare(
        f"corpus {len(raw.encode()) // 1024:>5} KB {path.name[:44]}",
        ("hashline", case.hashline),
        repeats=repeats,
        **case.equal_durability(),
    )
    case.close()
    return row


def image_rows(path: Path, repeats: int, tmp: Path) -> list[Comparison]:
    raw = path.read_text(encoding="utf-8")
    case = ColdCase(raw, tmp, first_contact=True)
    label = f"image-heavy corpus notebook ({len(raw.encode()) / 1e6:.1f} MB)"
    patch = compare(
        f"{label}: read + patch vs nbformat",
        ("hashline", case.hashline),
        ("nbformat round trip", case.nbformat_round_trip),
        repeats=repeats,
        target=IMAGE_TARGET,
        prepare=(case.reset(case.path), case.reset(case.nbformat_path)),
        **case.bounds(),
    )
    view = compare(
        f"{label}: read view vs nbformat.read",
        ("Patcher.read", case.read_view),
        ("nbformat.read", lambda: quiet_read(case.nbformat_path)),
        repeats=repeats,
        target=IMAGE_TARGET,
        prepare=(case.reset(case.path), case.reset(case.nbformat_path)),
        floor=(case.json_read, case.reset(case.floor_path)),
    )
    rows = [patch, view]
    case.close()
    return rows


def corpus_aggregates(corpus: list[Comparison]) -> list[Aggregate]:
    """Median, p90 and the worst of 10 KB or more, each with its floors' same statistic and
    the same statistic of the ratios to the reference baseline (no target); the compute above
    the write, reported without a target (see the module docstring)."""

    def beside(rows: list[Comparison]) -> dict[str, Any]:
        floors = [r.floor_ratio for r in rows if r.floor_ratio is not None]
        writes = [r.write_ratio for r in rows if r.write_ratio is not None]
        durable = [r.durable_floor_ratio for r in rows if r.durable_floor_ratio is not None]
        references = [r.reference_ratio for r in rows if r.reference_ratio is not None]
        reference = next((r.reference for r in rows if r.reference), None)
        return {"floors": floors, "writes": writes, "durable_floors": durable,
                "reference": reference, "references": references}  # fmt: skip

    large = [r for r in corpus if int(r.name.split()[1]) * 1024 >= CORPUS_LARGE]
    ratios = [r.ratio for r in corpus]
    computes = [r.compute_ratio for r in corpus if r.compute_ratio is not None]
    floor_computes = [r.floor_compute_ratio for r in corpus if r.floor_compute_ratio is not None]
    rows = [
        Aggregate(f"corpus, {len(ratios)} notebooks: median", ratios, "median", CORPUS_MEDIAN,
                  **beside(corpus)),
        Aggregate(f"corpus, {len(ratios)} notebooks: p90", ratios, "p90", CORPUS_P90,
                  **beside(corpus)),
    ]  # fmt: skip
    if computes:
        rows.append(
            Aggregate(f"corpus, {len(computes)} notebooks: compute above the write, median",
                      computes, "median", None, floors=floor_computes)
        )  # fmt: skip
    if large:
        rows.append(
            Aggregate(f"corpus, {len(large)} of >= 10 KB: worst", [r.ratio for r in large], "max",
                      CORPUS_WORST, **beside(large))
        )  # fmt: skip
    return rows


def main() -> None:
    args = parse_args(__doc__ or "cold-path benchmarks")
    repeats = 1 if args.smoke else max(CORPUS_REPEATS, args.repeats)
    validator = type(nbformat.validator.get_validator(version=4, version_minor=5)).__name__
    print(f"nbformat {nbformat.__version__}, validator {validator}")
    rows: list[Row] = []
    for size in SMOKE_SIZES if args.smoke else SIZES:
        with tempfile.TemporaryDirectory() as tmp:
            rows += generated_rows(size, repeats if size < 5_000 else LARGE_REPEATS, Path(tmp))
    notebooks = corpus_notebooks()[:3] if args.smoke else corpus_notebooks()
    corpus: list[Comparison] = []
    if not notebooks:
        rows.append(Missing("corpus notebooks", f"no corpus at {CORPUS_DIR}: rows not measured"))
    for path in notebooks:
        with tempfile.TemporaryDirectory() as tmp:
            found = corpus_row(path, repeats, Path(tmp))
        if isinstance(found, Missing):
            rows.append(found)
        elif found is not None:
            corpus.append(found)
    if corpus:
        rows += corpus
        rows += corpus_aggregates(corpus)
    if notebooks and not args.smoke:
        largest = max(notebooks, key=lambda p: p.stat().st_size)
        with tempfile.TemporaryDirectory() as tmp:
            rows += image_rows(largest, repeats, Path(tmp))
    report("cold path (a person saved between edits)", rows, args.json)


if __name__ == "__main__":
    main()
