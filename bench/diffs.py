"""`python -m bench.diffs`: how big a one-line edit's diff is, notebook by notebook.

For every notebook of the shared corpus (`--corpus`, default /work/shared/corpus) and the
layout-varied set (bench/layouts.py), one line of one cell is edited through the notebook
filesystem on disk, and the row reports:
- `span`: the changed byte span (all bytes between the longest common prefix and suffix of the
  old and new file, the larger side) as a share of the old file;
- `git`: `git diff --no-index --numstat` added/deleted lines;
- `exact`: the new file parses with nbformat to exactly the old notebook with that one edit;
- `fallback`: the file was written in nbformat's layout instead of its own, and why;
- `repaired`: the write also repaired the notebook (ids, stray outputs), changing other cells.
Targets (not timed): span median <= 2% and max <= 10% over files neither named by the
fallback nor repaired;
git lines <= 2 on each layout of the varied set. These are sizes, not timings: one run is
the figure. `--smoke` runs the layout set only. `--json FILE` writes the rows.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import tempfile
import warnings
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import nbformat

from bench.layouts import LAYOUTS, MIXED, disk_form, sample_notebook
from jupyter_hashline.hashline.disk import DiskFilesystem
from jupyter_hashline.notebook import NotebookFilesystem, parse_projection
from jupyter_hashline.notebook.incremental.region import common_prefix, common_suffix

CORPUS = Path("/work/shared/corpus")
FALLBACK_MARK = "in nbformat's layout"
SPAN_MEDIAN, SPAN_MAX, GIT_LINES = 0.02, 0.10, 2


@dataclass(frozen=True)
class DiffRow:
    name: str
    size: int
    span: float
    added: int
    deleted: int
    exact: bool
    fallback: str
    repaired: bool


@dataclass(frozen=True)
class Edited:
    """A file after a one-line edit: its bytes, the write's warnings, and the expected notebook."""

    data: bytes
    warnings: tuple[str, ...]
    expected: Any


async def edit_one_line(folder: Path, raw: bytes, name: str = "nb.ipynb") -> Edited | None:
    """Edit the first non-blank line of the middle cell that has one (None: no such line)."""
    (folder / name).write_bytes(raw)
    fs = NotebookFilesystem(DiskFilesystem(folder))
    text = await fs.read_text(name)
    cells = parse_projection(text)
    editable = [n for n, c in enumerate(cells) if any(s.strip() for s in c.source.split("\n"))]
    if not editable:
        return None
    index = editable[len(editable) // 2]
    cell = cells[index]
    offset = next(n for n, s in enumerate(cell.source.split("\n")) if s.strip())
    lines = text.split("\n")
    lines[cell.line + offset] += "  # edited"
    result = await fs.write_text(name, "\n".join(lines))
    expected = _reads(raw)
    source = cell.source.split("\n")
    source[offset] += "  # edited"
    expected.cells[index].source = "\n".join(source)
    return Edited((folder / name).read_bytes(), result.warnings, expected)


def _reads(raw: bytes) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return nbformat.reads(raw.decode("utf-8"), as_version=4)


def _comparable(nb: Any) -> Any:
    """The notebook as plain JSON, without cell ids (repairs and conversions give new ones) or
    what nbformat never writes (the version a converted notebook came from); a notebook
    converted from nbformat 3 or older is compared whatever 4.x minor it was given."""
    plain = json.loads(json.dumps(nb))
    for cell in plain.get("cells", []):
        cell.pop("id", None)
    metadata = plain.get("metadata", {})
    if metadata.pop("orig_nbformat", 4) < 4:
        plain.pop("nbformat_minor", None)
    metadata.pop("orig_nbformat_minor", None)
    return plain


def changed_share(old: bytes, new: bytes) -> float:
    prefix = common_prefix(old, new)
    suffix = common_suffix(old, new, min(len(old), len(new)) - prefix)
    return (max(len(old), len(new)) - prefix - suffix) / max(1, len(old))


def numstat(folder: Path, old: bytes, new: bytes) -> tuple[int, int]:
    (folder / "a").write_bytes(old)
    (folder / "b").write_bytes(new)
    done = subprocess.run(
        ["git", "diff", "--no-index", "--numstat", "a", "b"],
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
    )
    fields = done.stdout.split()
    return (int(fields[0]), int(fields[1])) if fields else (0, 0)


def measure(name: str, raw: bytes) -> DiffRow | None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        edited = asyncio.run(edit_one_line(folder, raw))
        if edited is None:
            return None
        added, deleted = numstat(folder, raw, edited.data)
        expected, got = _comparable(edited.expected), _comparable(_reads(edited.data))
        if "nbformat_minor" not in expected:  # converted from nbformat 3 or older
            got.pop("nbformat_minor", None)
        exact = got == expected
        why = next((w for w in edited.warnings if FALLBACK_MARK in w), "")
        share = changed_share(raw, edited.data)
        repaired = any(w.startswith("repaired") for w in edited.warnings)
        return DiffRow(name, len(raw), share, added, deleted, exact, why, repaired)


def layout_files() -> Iterable[tuple[str, bytes]]:
    disk = disk_form(sample_notebook())
    for name, write in LAYOUTS.items():
        yield f"layout: {name}", write(disk)


def corpus_files(corpus: Path) -> Iterable[tuple[str, bytes]]:
    with (corpus / "MANIFEST.tsv").open(encoding="utf-8") as handle:
        rows = [line.split("\t") for line in handle.read().splitlines()[1:]]
    for row in rows:
        if row[0].endswith(".ipynb") and not row[0].startswith("invalid/"):
            yield f"corpus: {row[0]}", (corpus / row[0]).read_bytes()


def verdict(rows: list[DiffRow]) -> list[str]:
    """The figures next to their targets."""
    kept = [row.span for row in rows if not row.fallback and not row.repaired]
    median = statistics.median(kept) if kept else 0.0
    worst = max(kept, default=0.0)
    layouts = [r for r in rows if r.name.startswith("layout: ") and r.name != f"layout: {MIXED}"]
    git_worst = max((max(r.added, r.deleted) for r in layouts), default=0)
    return [
        f"span median {median:.2%} (target <= {SPAN_MEDIAN:.0%}), max {worst:.2%} "
        f"(target <= {SPAN_MAX:.0%}) over {len(kept)} files neither falling back nor "
        "repaired (a repair changes other cells: ids, stray outputs)",
        f"git lines on the layout set: at most {git_worst} (target <= {GIT_LINES})",
        f"exact: {sum(r.exact for r in rows)}/{len(rows)}; "
        f"fallbacks: {sum(bool(r.fallback) for r in rows)}; "
        f"repaired: {sum(r.repaired for r in rows)}",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--repeats", type=int, default=1, help="ignored: sizes, not timings")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    args = parser.parse_args(argv)
    files = list(layout_files())
    if not args.smoke and (args.corpus / "MANIFEST.tsv").exists():
        files += list(corpus_files(args.corpus))
    rows = [row for name, raw in files if (row := measure(name, raw)) is not None]
    print(f"{'file':<70}{'bytes':>8}{'span':>8}{'git':>9}  exact  repaired/fallback")
    for row in rows:
        git = f"+{row.added}/-{row.deleted}"
        print(
            f"{row.name[:69]:<70}{row.size:>8}{row.span:>8.2%}{git:>9}  "
            f"{'yes' if row.exact else 'NO':<5}  {'repaired ' * row.repaired}{row.fallback[:60]}"
        )
    print("\n".join(verdict(rows)))
    if args.json:
        args.json.write_text(json.dumps([asdict(row) for row in rows], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
