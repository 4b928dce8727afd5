"""Engine benchmarks: the hashline read and patch paths against their plain-Python floors.

- read+tag: the filesystem read, normalization and section tag of a 100,000-line file vs
  `Path.read_text` of the same file. Target <= 3x.
- full read: `Patcher.read` (the above plus recording the snapshot and seen lines and building
  the numbered view of every line) vs `Path.read_text`. No target: a view of 100,000 numbered
  rows costs per-line work that a bare read does not do; the figure is reported for tracking.
- patch: 100 scattered edits applied by the engine (parse, validate, echo checks, apply) vs the
  same edits done by plain list slicing on the split text. Target <= 2x.

Run `python -m bench.engine` (or `--smoke` for one tiny run of each case).
"""

from __future__ import annotations

import asyncio
import random
import tempfile
from pathlib import Path

from bench.harness import Comparison, compare, parse_args, report
from jupyter_hashline.hashline.apply import apply_edits
from jupyter_hashline.hashline.disk import DiskFilesystem
from jupyter_hashline.hashline.edits import Edit
from jupyter_hashline.hashline.memory_store import InMemorySnapshotStore
from jupyter_hashline.hashline.parse import parse_patch
from jupyter_hashline.hashline.patcher import Patcher
from jupyter_hashline.hashline.text import normalize, section_tag


def make_text(lines: int) -> str:
    rng = random.Random(7)
    words = ["alpha", "beta", "gamma", "delta", "x = 1", "return value", "    pass"]
    return "".join(f"{rng.choice(words)} {n} {rng.choice(words)}\n" for n in range(lines))


def scattered_edits(lines: int, count: int) -> list[Edit]:
    """`count` single-line replacements spread evenly over the text (no overlaps)."""
    step = max(1, lines // count)
    return [Edit.replace(n, n, [f"edited {n}"]) for n in range(1, lines + 1, step)][:count]


def patch_text(tag: str, edits: list[Edit]) -> str:
    body = "".join(f"replace {e.start}:\n+{e.lines[0]}\n" for e in edits)
    return f"[big.txt#{tag}]\n{body}"


def slice_floor(text: str, edits: list[Edit]) -> str:
    lines = text.split("\n")
    for edit in sorted(edits, key=lambda e: e.start, reverse=True):
        lines[edit.start - 1 : edit.end] = list(edit.lines)
    return "\n".join(lines)


def bench_read_tag(path: Path, repeats: int, loop: asyncio.AbstractEventLoop) -> Comparison:
    fs = DiskFilesystem(path.parent)

    async def engine() -> str:
        return section_tag(normalize(await fs.read_text(path.name)).text)

    return compare(
        f"read+tag, {len(path.read_text().splitlines()):,} lines",
        (
            "DiskFilesystem.read_text+normalize+section_tag",
            lambda: loop.run_until_complete(engine()),
        ),
        ("Path.read_text", lambda: loop.run_until_complete(_floor_read(path))),
        repeats=repeats,
        target=3.0,
    )


def bench_read(path: Path, repeats: int, loop: asyncio.AbstractEventLoop) -> Comparison:
    patcher = Patcher(DiskFilesystem(path.parent), InMemorySnapshotStore())

    def engine_read() -> object:
        return loop.run_until_complete(patcher.read(path.name))

    def floor_read() -> object:
        return loop.run_until_complete(_floor_read(path))

    return compare(
        f"full Patcher.read view, {len(path.read_text().splitlines()):,} lines",
        ("Patcher.read", engine_read),
        ("Path.read_text", floor_read),
        repeats=repeats,
    )


async def _floor_read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def bench_patch(text: str, count: int, repeats: int) -> Comparison:
    edits = scattered_edits(len(text.splitlines()), count)
    patch = patch_text("0000", edits)
    expected = slice_floor(text, edits)

    def engine_patch() -> object:
        [section] = parse_patch(patch)
        applied = apply_edits(text, section.edits, label=section.header)
        assert applied.text == expected
        return applied

    return compare(
        f"{len(edits)} scattered edits, {len(text.splitlines()):,} lines",
        ("parse+apply_edits", engine_patch),
        ("list slicing", lambda: slice_floor(text, edits)),
        repeats=repeats,
        target=2.0,
    )


def main() -> None:
    args = parse_args(__doc__ or "engine benchmarks")
    lines, edits, repeats = (2_000, 10, 1) if args.smoke else (100_000, 100, args.repeats)
    text = make_text(lines)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.txt"
        path.write_text(text, encoding="utf-8")
        # one event loop for every async case, as in a server: a fresh loop per call would
        # charge the engine for starting a thread pool that a running server already has
        loop = asyncio.new_event_loop()
        try:
            rows = [
                bench_read_tag(path, repeats, loop),
                bench_read(path, repeats, loop),
                bench_patch(text, edits, repeats),
            ]
        finally:
            loop.close()
    report("engine (hashline read and patch)", rows, args.json)


if __name__ == "__main__":
    main()
