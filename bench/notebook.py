"""Notebook benchmarks (the warm table): the notebook layer against nbformat and the JSON floor.

These rows keep the figures the project tracked before the cold-path work (bench/cold.py leads
now). They carry no targets of their own: `python -m bench --check` holds each ratio to within
10% of the ratio measured on the code before that work (bench/warm_baseline.json).

Inputs: generated notebooks of 100, 1,000 and 5,000 cells with outputs (~1.25 KB a cell: 3 code
cells in 4, with stream, table and image outputs), to show how each cost grows with size, and
the largest notebook of the shared corpus (when present).

- patch vs nbformat: a one-line patch end to end through `Patcher` + `NotebookFilesystem` over
  `DiskFilesystem` (read, apply, merge, validate what changed, serialize, atomic write, read
  back) vs `nbformat.read` + edit + `nbformat.write`.
- patch vs JSON floor: the same patch vs `json.loads` + edit + `json.dumps(indent=1,
  sort_keys=True, ensure_ascii=False)` + write.
  Both patch rows ("warm") are the steady state of an agent session: the notebook filesystem
  is reused, so the read that precedes the patch hits its parse cache.
- cold patch: the same with a fresh `NotebookFilesystem` per patch (parse, full validation and
  full serialization included), vs the JSON floor. No target; reported for tracking.
- serialize: `serialize_notebook` of the whole notebook (no cache) vs `nbformat.writes`.
- read view: `NotebookFilesystem.read_text` with a cold cache vs `nbformat.read`.

Run `python -m bench.notebook` (or `--smoke` for one tiny run of each case).
"""

from __future__ import annotations

import asyncio
import base64
import copy
import json
import random
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nbformat

from bench.harness import Comparison, Missing, Row, compare, parse_args, report
from jupyter_hashline.hashline.disk import DiskFilesystem
from jupyter_hashline.hashline.memory_store import InMemorySnapshotStore
from jupyter_hashline.hashline.patcher import Patcher
from jupyter_hashline.notebook import NotebookFilesystem, serialize_notebook

Timed = tuple[str, Callable[[], object]]
CORPUS_DIR = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"


def generated_notebook(cells: int = 2000, seed: int = 0) -> dict[str, Any]:
    """A realistic analysis notebook: 3 code cells in 4, most with outputs; ~1.25 KB a cell."""
    rng = random.Random(seed)
    image = base64.b64encode(rng.randbytes(6000)).decode("ascii") + "\n"
    body: list[dict[str, Any]] = []
    for n in range(cells):
        if n % 4 == 0:
            source = f"## Step {n}\n\nWe look at `frame_{n}` and its totals."
            body.append(
                {"cell_type": "markdown", "id": f"md-{n}", "metadata": {}, "source": source}
            )
            continue
        source = "\n".join(f"value_{n}_{k} = compute({k}, 'x')" for k in range(rng.randint(2, 8)))
        outputs: list[dict[str, Any]] = [
            {"output_type": "stream", "name": "stdout", "text": "".join(
                f"row {k}: {rng.random():.6f}\n" for k in range(rng.randint(1, 6)))}
        ]  # fmt: skip
        if n % 3 == 0:
            table = "".join(f"<tr><td>{k}</td><td>{rng.random():.4f}</td></tr>\n" for k in range(8))
            data = {"text/plain": f"<frame {n}>", "text/html": table}
            outputs.append({"output_type": "execute_result", "execution_count": n,
                            "metadata": {}, "data": data})  # fmt: skip
        if n % 25 == 1:
            outputs.append({"output_type": "display_data", "metadata": {},
                            "data": {"image/png": image, "text/plain": "<Figure>"}})  # fmt: skip
        body.append({"cell_type": "code", "execution_count": n, "id": f"code-{n}",
                     "metadata": {}, "outputs": outputs, "source": source})  # fmt: skip
    meta = {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}}
    return {"cells": body, "metadata": meta, "nbformat": 4, "nbformat_minor": 5}


def largest_corpus_notebook() -> Path | None:
    if not CORPUS_DIR.is_dir():
        return None
    found = [p for p in CORPUS_DIR.glob("*.ipynb") if p.is_file()]
    return max(found, key=lambda p: p.stat().st_size) if found else None


class PatchCase:
    """One notebook on disk, and the three ways to change one line of one code cell in it."""

    def __init__(self, raw: str, directory: Path) -> None:
        self.dir = directory
        # one file per contender, so a baseline's write never invalidates hashline's caches
        self.path = directory / "case.ipynb"
        self.nbformat_path = directory / "nbformat.ipynb"
        self.floor_path = directory / "floor.ipynb"
        for path in (self.path, self.nbformat_path, self.floor_path):
            path.write_text(raw, encoding="utf-8")
        nb = json.loads(raw)
        self.cell = max(
            (i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code" and c["source"]),
            key=lambda i: i * 7919 % len(nb["cells"]),
        )
        self.flip = 0
        self.loop = asyncio.new_event_loop()
        self.warm_fs = NotebookFilesystem(DiskFilesystem(directory))
        self.warm = Patcher(self.warm_fs, InMemorySnapshotStore())

    def _new_line(self) -> str:
        self.flip += 1
        return f"edited = {self.flip}"

    async def _hashline(self, patcher: Patcher) -> None:
        read = await patcher.read(self.path.name)
        line = _first_line_of_cell(read.text, self.cell)
        await patcher.apply(
            f"[{self.path.name}#{read.tag}]\nreplace {line}:\n+{self._new_line()}\n"
        )

    def hashline_warm(self) -> None:
        self.loop.run_until_complete(self._hashline(self.warm))

    def hashline_cold(self) -> None:
        fresh = Patcher(NotebookFilesystem(DiskFilesystem(self.dir)), InMemorySnapshotStore())
        self.loop.run_until_complete(self._hashline(fresh))

    def nbformat_patch(self) -> None:
        nb = nbformat.read(self.nbformat_path, as_version=4)
        nb.cells[self.cell].source = self._new_line() + nb.cells[self.cell].source[1:]
        nbformat.write(nb, self.nbformat_path)

    def json_floor(self) -> None:
        nb = json.loads(self.floor_path.read_text(encoding="utf-8"))
        source = nb["cells"][self.cell]["source"]
        source[0] = self._new_line() + "\n"
        text = json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False)
        self.floor_path.write_text(text + "\n", encoding="utf-8")


def _first_line_of_cell(projection: str, index: int) -> int:
    seen = -1
    for number, line in enumerate(projection.split("\n"), 1):
        if line.startswith("# %% "):
            seen += 1
            if seen == index:
                return number + 1
    raise ValueError(f"no cell {index}")


def cases(label: str, raw: str, repeats: int, directory: Path) -> list[Comparison]:
    case = PatchCase(raw, directory)
    nb = nbformat.reads(raw, as_version=4)
    plain = json.loads(json.dumps(nb))
    read_fs = DiskFilesystem(directory)

    def cold_read() -> str:
        return case.loop.run_until_complete(NotebookFilesystem(read_fs).read_text("case.ipynb"))

    def run(name: str, cand: Timed, base: Timed, target: float | None) -> Comparison:
        return compare(f"{label}: {name}", cand, base, repeats=repeats, target=target)

    rows = [
        run("warm one-line patch vs nbformat", ("hashline patch", case.hashline_warm),
            ("nbformat read+edit+write", case.nbformat_patch), None),
        run("warm one-line patch vs JSON floor", ("hashline patch", case.hashline_warm),
            ("json loads+dumps+write", case.json_floor), None),
        run("cold one-line patch vs JSON floor", ("hashline patch, fresh fs", case.hashline_cold),
            ("json loads+dumps+write", case.json_floor), None),
        run("serialize whole notebook", ("serialize_notebook", lambda: serialize_notebook(plain)),
            ("nbformat.writes", lambda: nbformat.writes(copy.deepcopy(nb))), None),
        run("read view (cold)", ("NotebookFilesystem.read_text", cold_read),
            ("nbformat.read", lambda: nbformat.read(case.nbformat_path, as_version=4)), None),
    ]  # fmt: skip
    case.loop.close()
    return rows


SIZES = (100, 1_000, 5_000)  # how cost grows with the notebook
SMOKE_SIZES = (20, 40)


def _repeats_for(cells: int, repeats: int) -> int:
    """Fewer repeats for the largest notebook (each nbformat round trip there takes seconds)."""
    return repeats if cells <= 1_000 else max(5, repeats // 2)


def main() -> None:
    args = parse_args(__doc__ or "notebook benchmarks")
    inputs: list[tuple[str, str, int]] = []
    for size in SMOKE_SIZES if args.smoke else SIZES:
        generated = generated_notebook(size)
        repeats = 1 if args.smoke else _repeats_for(size, args.repeats)
        inputs.append((f"generated {size:,} cells", serialize_notebook(generated), repeats))
    corpus = None if args.smoke else largest_corpus_notebook()
    rows: list[Row] = []
    if corpus is not None:
        raw = corpus.read_text(encoding="utf-8")
        inputs.append((f"corpus {corpus.name[:40]}", raw, args.repeats))
    elif not args.smoke:
        rows.append(Missing("corpus notebook", f"no corpus at {CORPUS_DIR}: row not measured"))
    for label, raw, repeats in inputs:
        print(f"{label}: {len(raw.encode('utf-8')) / 1e6:.2f} MB")
        with tempfile.TemporaryDirectory() as tmp:
            rows.extend(cases(label, raw, repeats, Path(tmp)))
    report("notebook benchmarks", rows, args.json)


if __name__ == "__main__":
    main()
