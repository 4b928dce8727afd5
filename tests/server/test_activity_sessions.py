"""The activity log, the session registry and the per-path locks (no server needed)."""

from __future__ import annotations

import asyncio
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_hashline.hashline.locks import PathLocks
from jupyter_hashline.server.errors import BadRequestError, SessionNotFoundError
from jupyter_hashline.server.sessions import SessionRegistry
from jupyter_hashline.tools.activity import ActivityLog, cells_in_changed_lines, unified_diff

NB_BEFORE = (
    "# %% [markdown] id=intro\n# Title\n"
    "# %% [code] id=load\nimport pandas as pd\ndf = load()\n"
    "# %% [code] id=plot\ndf.plot()\n"
)


def snapshot(turns: int = 2, edits: int = 1) -> dict[str, object]:
    return {
        "zones": {"prefix": {"short_id": "abcdef012345"}, "log": {}, "scratch": {}},
        "cache": {"hit_ratio": 0.5, "turns": [{}] * turns},
        "audit": [],
        "edits": [{}] * edits,
    }


def test_cells_in_changed_lines_names_edited_inserted_and_deleted_cells() -> None:
    edited = NB_BEFORE.replace("df = load()", "df = load(parse_dates=True)")
    assert cells_in_changed_lines(NB_BEFORE, edited) == ("load",)
    appended = NB_BEFORE + "df.describe()\n"
    assert cells_in_changed_lines(NB_BEFORE, appended) == ("plot",)
    without_plot = NB_BEFORE.replace("# %% [code] id=plot\ndf.plot()\n", "")
    assert cells_in_changed_lines(NB_BEFORE, without_plot) == ("plot",)
    two = edited.replace("# Title", "# New title")
    assert cells_in_changed_lines(NB_BEFORE, two) == ("intro", "load")


def test_activity_is_newest_first_bounded_and_attributed() -> None:
    clock = iter(range(1000, 2000))
    log = ActivityLog(limit=3, clock_ms=lambda: next(clock))
    for n in range(5):
        log.record(
            path="nb.ipynb",
            op="update",
            who=f"user{n}",
            source="patch",
            before=NB_BEFORE,
            after=NB_BEFORE.replace("df.plot()", f"df.plot({n})"),
            warnings=[f"w{n}"] if n == 4 else [],
        )
    recent = log.recent()
    assert [r.id for r in recent] == [5, 4, 3]
    assert recent[0].who == "user4" and recent[0].warnings == ("w4",)
    assert recent[0].cells == ("plot",)
    assert recent[0].header_before.startswith("[nb.ipynb#")
    assert "-df.plot()" in recent[0].diff and "+df.plot(4)" in recent[0].diff
    assert [r.id for r in log.recent(1)] == [5]
    assert recent[0].to_json()["cells"] == ["plot"]


def test_plain_text_files_touch_no_cells_and_long_diffs_are_clipped() -> None:
    log = ActivityLog(max_diff_chars=50)
    record = log.record(
        path="a.py", op="update", who="u", source="write", before="x\n" * 100, after="y\n" * 100
    )
    assert record.cells == ()
    assert "diff clipped" in record.diff
    assert len(unified_diff("a.py", "a\n", "b\n", 10_000).splitlines()) == 5


def test_session_registry_creates_updates_and_evicts() -> None:
    ids = iter(["s1", "s2", "s3"])
    registry = SessionRegistry(max_sessions=2, clock_ms=lambda: 7, new_id=lambda: next(ids))
    first, created = registry.post(None, snapshot(), label="agent A")
    assert created and first.id == "s1" and first.updates == 1
    again, created = registry.post("s1", snapshot(turns=5))
    assert not created and again.updates == 2 and again.label == "agent A"
    assert again.summary()["turns"] == 5
    registry.post("mine", snapshot())
    registry.post(None, snapshot())  # evicts the least recently updated: s1
    assert [e.id for e in registry.entries()] == ["s2", "mine"]
    with pytest.raises(SessionNotFoundError, match="GET sessions"):
        registry.get("s1")


def test_listeners_hear_stored_records_and_accepted_posts_until_they_unsubscribe() -> None:
    log, registry = ActivityLog(), SessionRegistry(new_id=lambda: "fresh")
    records: list[tuple[int, int]] = []
    posts: list[tuple[str, bool, int]] = []
    stop_records = log.subscribe(lambda r: records.append((r.id, len(log.recent()))))
    stop_posts = registry.subscribe(lambda e, created: posts.append((e.id, created, e.updates)))
    log.record(path="a.py", op="update", who="u", source="patch", before="a\n", after="b\n")
    registry.post(None, snapshot())
    registry.post("fresh", snapshot())
    with pytest.raises(BadRequestError):
        registry.post("fresh", {"zones": {}})
    assert records == [(1, 1)]  # heard after it was stored
    assert posts == [("fresh", True, 1), ("fresh", False, 2)]  # a refused post is not heard
    stop_records()
    stop_posts()
    stop_posts()  # twice is harmless
    log.record(path="a.py", op="update", who="u", source="patch", before="b\n", after="c\n")
    registry.post("fresh", snapshot())
    assert (len(records), len(posts)) == (1, 2)


@pytest.mark.parametrize("bad", [[], "x", {"zones": {}, "cache": {}, "audit": []}, {"edits": []}])
def test_session_snapshots_need_the_four_parts(bad: object) -> None:
    with pytest.raises(BadRequestError):
        SessionRegistry().post(None, bad)


@pytest.mark.parametrize("bad_id", ["", "a/b", "x" * 65, "sp ace"])
def test_session_ids_are_checked(bad_id: str) -> None:
    with pytest.raises(BadRequestError, match="Session id"):
        SessionRegistry().post(bad_id, snapshot())


def test_summary_survives_odd_snapshots() -> None:
    entry, _ = SessionRegistry().post(
        "odd", {"zones": 3, "cache": {"hit_ratio": "high"}, "audit": None, "edits": "?"}
    )
    summary = entry.summary()
    assert summary["prefix_short_id"] is None and summary["hit_ratio"] is None
    assert summary["turns"] is None and summary["edits"] is None


async def test_path_locks_serialize_one_path_and_clean_up() -> None:
    locks = PathLocks()
    order: list[str] = []

    async def worker(name: str, paths: list[str]) -> None:
        async with locks.hold(paths):
            order.append(f"{name}+")
            await asyncio.sleep(0.01)
            order.append(f"{name}-")

    await asyncio.gather(
        worker("a", ["x", "y"]), worker("b", ["y", "x"]), worker("c", ["x"]), worker("d", ["z"])
    )
    holders = [o for o in order if o[0] != "d"]
    for i in range(0, len(holders), 2):  # a, b, c never overlap: each + is followed by its -
        assert holders[i][0] == holders[i + 1][0]
    assert order.index("d+") < order.index("a-")  # another path is not held up
    assert len(locks) == 0


def apply_unified_diff(old: str, diff: str) -> str:
    """Apply a unified diff of whole lines (the activity log's format) to `old`."""
    lines, out, pos = old.splitlines(keepends=True), [], 0
    rows = diff.splitlines(keepends=True)[2:]
    for row in rows:
        hunk = re.match(r"@@ -(\d+),(\d+) \+\d+,\d+ @@", row)
        if hunk:
            start, length = int(hunk.group(1)), int(hunk.group(2))
            first = start - 1 if length else start
            out += lines[pos:first]
            pos = first
        elif row[0] in " -":
            assert lines[pos] == row[1:]
            out += [row[1:]] if row[0] == " " else []
            pos += 1
        else:
            out.append(row[1:])
    return "".join(out + lines[pos:])


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(["a\n", "b\n", "c\n", "# %% [code] id=x\n", "d"]), max_size=12),
    st.lists(st.sampled_from(["a\n", "b\n", "e\n", "# %% [code] id=y\n"]), max_size=12),
    st.integers(0, 12),
)
def test_activity_diffs_apply_back(old: list[str], new_part: list[str], cut: int) -> None:
    """Diffing only the changed middle still yields a diff that turns before into after."""
    before = "".join(old).replace("d", "d\n")
    after = "".join(old[:cut] + new_part + old[cut + 2 :]).replace("d", "d\n")
    diff = unified_diff("p", before, after, 10**6)
    assert (diff == "") == (before == after)
    if diff:
        assert apply_unified_diff(before, diff) == after
