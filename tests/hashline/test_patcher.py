"""The patcher end to end over the in-memory filesystem and store (DESIGN §2.4, §2.5)."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from jupyter_hashline.hashline.edits import Edit, PatchSection
from jupyter_hashline.hashline.errors import (
    AnchorError,
    HashlineError,
    NotFoundError,
    NotTextError,
    OverwriteRefusedError,
    PatchSyntaxError,
    RepeatedNoOpError,
    StaleTagError,
    TooLargeError,
    UnknownTagError,
    UnseenLinesError,
    WriteFailedError,
)
from jupyter_hashline.hashline.filesystem import Footprint, LineRebase, RebaseRefusal, WriteResult
from jupyter_hashline.hashline.memory_fs import InMemoryFilesystem
from jupyter_hashline.hashline.memory_store import InMemorySnapshotStore
from jupyter_hashline.hashline.patcher import Patcher
from jupyter_hashline.hashline.results import PartialWriteError, SectionOp
from jupyter_hashline.hashline.text import section_tag

DEMO = 'import pandas as pd\ndf = pd.read_csv("sales.csv")\ntotal = df["amount"].sum()\n'
TEN = "".join(f"line {n}\n" for n in range(1, 11))


def make(files: Mapping[str, str], **options: object) -> tuple[InMemoryFilesystem, Patcher]:
    fs = InMemoryFilesystem(files)
    return fs, Patcher(fs, InMemorySnapshotStore(), **options)  # type: ignore[arg-type]


# -- reads -------------------------------------------------------------------------------------


async def test_read_view_header_rows_and_tag() -> None:
    _, patcher = make({"demo.py": DEMO})
    read = await patcher.read("demo.py")
    assert read.tag == section_tag(DEMO)
    assert read.header == f"[demo.py#{read.tag}]"
    assert read.view.split("\n") == [
        read.header,
        "1:import pandas as pd",
        '2:df = pd.read_csv("sales.csv")',
        '3:total = df["amount"].sum()',
    ]
    assert read.text == DEMO


async def test_partial_read_tags_the_whole_text_and_records_only_shown_lines() -> None:
    _, patcher = make({"t.txt": TEN})
    read = await patcher.read("t.txt", offset=4, limit=3)
    assert read.tag == section_tag(TEN)
    assert read.view.split("\n")[1:] == [
        "4:line 4",
        "5:line 5",
        "6:line 6",
        "(showing 3 of 10 lines; use offset/limit to see others)",
    ]
    assert patcher.store.seen_lines("t.txt", read.tag) == {4, 5, 6}


async def test_read_normalizes_bom_and_crlf() -> None:
    _, patcher = make({"w.txt": "\ufeffa\r\nb\r\n"})
    read = await patcher.read("w.txt")
    assert read.text == "a\nb\n"
    tag = section_tag("a\nb\n")
    assert read.view == f"[w.txt#{tag}]\n1:a\n2:b"


async def test_read_notes_for_empty_file_and_offset_past_end() -> None:
    _, patcher = make({"e.txt": "", "t.txt": TEN})
    assert "(empty file" in (await patcher.read("e.txt")).view
    assert "offset 50 is past the end" in (await patcher.read("t.txt", offset=50)).view
    with pytest.raises(HashlineError, match="offset must be 1 or more"):
        await patcher.read("t.txt", offset=0)


async def test_read_of_a_missing_file() -> None:
    _, patcher = make({})
    with pytest.raises(NotFoundError, match=r"File not found: nope\.py"):
        await patcher.read("nope.py")


class NotebookishFs(InMemoryFilesystem):
    """Annotations after line 2, cells `a` (lines 1-2) and `b` (lines 3-4)."""

    def annotate_view(self, path: str, text: str) -> Mapping[int, tuple[str, ...]]:
        return {2: ("   ⎿ outputs: stream (1 line)",)}

    def select_cells(self, path: str, text: str, cell_ids: tuple[str, ...]) -> frozenset[int]:
        cells = {"a": {1, 2}, "b": {3, 4}}
        unknown = [c for c in cell_ids if c not in cells]
        if unknown:
            raise AnchorError(f"unknown cell id(s) {unknown}; known: a, b")
        return frozenset(n for c in cell_ids for n in cells[c])


async def test_annotations_and_cell_selection() -> None:
    fs = NotebookishFs({"n.ipynb": "# a\nx = 1\n# b\ny = 2\n"})
    patcher = Patcher(fs, InMemorySnapshotStore())
    full = await patcher.read("n.ipynb")
    assert full.view.split("\n")[1:] == [
        "1:# a",
        "2:x = 1",
        "   ⎿ outputs: stream (1 line)",
        "3:# b",
        "4:y = 2",
    ]
    part = await patcher.read("n.ipynb", cells="b")
    assert part.view.split("\n")[1:3] == ["3:# b", "4:y = 2"]
    assert patcher.store.seen_lines("n.ipynb", part.tag) == {1, 2, 3, 4}
    with pytest.raises(AnchorError, match="unknown cell"):
        await patcher.read("n.ipynb", cells=["zz"])


async def test_cells_on_a_filesystem_without_cells_is_a_clear_error() -> None:
    _, patcher = make({"t.txt": TEN})
    with pytest.raises(HashlineError, match="`cells` only works for notebooks"):
        await patcher.read("t.txt", cells=["a"])


# -- fresh edits -------------------------------------------------------------------------------


async def test_edit_then_chain_a_second_edit_from_the_reply() -> None:
    fs, patcher = make({"demo.py": DEMO})
    read = await patcher.read("demo.py")
    result = await patcher.apply(
        f'{read.header}\nreplace 2:\n+df = pd.read_csv("sales.csv", parse_dates=["date"])\n'
        "insert after 2:\n+df = df.dropna()\n"
    )
    [section] = result.sections
    assert section.op is SectionOp.UPDATE and section.written
    assert fs.get("demo.py") == section.after
    assert section.tag == section_tag(section.after)
    assert section.first_changed_line == 2
    assert section.preview.split("\n") == [
        "1:import pandas as pd",
        '2:df = pd.read_csv("sales.csv", parse_dates=["date"])',
        "3:df = df.dropna()",
        '4:total = df["amount"].sum()',
    ]
    assert result.to_text().startswith(f"{section.header} updated\n1:import pandas")
    chained = await patcher.apply(f"{section.header}\ndelete 3\n")
    assert fs.get("demo.py") == DEMO.replace('"sales.csv")', '"sales.csv", parse_dates=["date"])')
    assert chained.sections[0].op is SectionOp.UPDATE


async def test_json_form_applies_like_the_text_form() -> None:
    fs, patcher = make({"t.txt": TEN})
    read = await patcher.read("t.txt")
    await patcher.apply(
        {"path": "t.txt", "tag": read.tag, "edits": [{"op": "delete", "start": 2, "end": 9}]}
    )
    assert fs.get("t.txt") == "line 1\nline 10\n"


async def test_bom_and_crlf_are_restored_on_write() -> None:
    fs, patcher = make({"w.txt": "\ufeffa\r\nb\r\n"})
    read = await patcher.read("w.txt")
    await patcher.apply(f"{read.header}\ninsert after 1:\n+mid\n")
    assert fs.get("w.txt") == "\ufeffa\r\nmid\r\nb\r\n"


async def test_file_without_final_newline_keeps_none() -> None:
    fs, patcher = make({"n.txt": "a\nb"})
    read = await patcher.read("n.txt")
    await patcher.apply(f"{read.header}\ninsert tail:\n+c\n")
    assert fs.get("n.txt") == "a\nb\nc"


async def test_landed_text_is_recorded_and_a_difference_warns() -> None:
    fs = InMemoryFilesystem({"f.py": "x=1\n"}, transform_on_write=lambda _p, c: c.upper())
    patcher = Patcher(fs, InMemorySnapshotStore())
    read = await patcher.read("f.py")
    result = await patcher.apply(f"{read.header}\ninsert tail:\n+y=2\n")
    [section] = result.sections
    assert section.after == "X=1\nY=2\n"
    assert section.tag == section_tag("X=1\nY=2\n")
    assert "differs from your edit" in section.warnings[0]
    assert patcher.store.head("f.py") is not None
    assert patcher.store.head("f.py").text == "X=1\nY=2\n"  # type: ignore[union-attr]


# -- bad input leaves the file untouched -------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "error", "expected"),
    [
        ("frobnicate 1:\n+x", PatchSyntaxError, "unknown verb"),
        ("replace 0:\n+x", AnchorError, "line numbers start at 1"),
        ("replace 5..3:\n+x", AnchorError, "reversed"),
        ("delete 11", AnchorError, "past the end"),
        ("delete 2..4\nreplace 3:\n+x", AnchorError, "both consume line 3"),
    ],
)
async def test_bad_edits_leave_the_file_untouched(
    body: str, error: type[Exception], expected: str
) -> None:
    fs, patcher = make({"t.txt": TEN})
    read = await patcher.read("t.txt")
    with pytest.raises(error, match=expected):
        await patcher.apply(f"{read.header}\n{body}\n")
    assert fs.get("t.txt") == TEN


async def test_missing_header_and_missing_tag() -> None:
    fs, patcher = make({"t.txt": TEN})
    with pytest.raises(PatchSyntaxError, match="before any `\\[path#TAG\\]` header"):
        await patcher.apply("delete 1\n")
    with pytest.raises(PatchSyntaxError, match="has no tag"):
        await patcher.apply("[t.txt]\ndelete 1\n")
    assert fs.get("t.txt") == TEN


async def test_missing_target_points_at_the_write_tool() -> None:
    _, patcher = make({})
    with pytest.raises(NotFoundError) as caught:
        await patcher.apply("[new.py#ABCD]\ninsert head:\n+x\n")
    assert str(caught.value) == "File not found: new.py. Use the write tool to create new files."
    assert caught.value.path == "new.py"


async def test_binary_file_is_not_text() -> None:
    fs, patcher = make({"b.bin": "PK\x00\x03"})
    with pytest.raises(NotTextError, match="not a text file"):
        await patcher.read("b.bin")
    with pytest.raises(NotTextError):
        await patcher.apply("[b.bin#ABCD]\ndelete 1\n")
    assert fs.get("b.bin") == "PK\x00\x03"


class UndecodableFs(InMemoryFilesystem):
    async def read_text(self, path: str) -> str:
        raise UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte")


async def test_undecodable_file_is_not_text() -> None:
    patcher = Patcher(UndecodableFs({}), InMemorySnapshotStore())
    with pytest.raises(NotTextError, match="not valid UTF-8"):
        await patcher.read("x.dat")


async def test_a_nul_is_never_written() -> None:
    fs, patcher = make({"t.txt": TEN})
    read = await patcher.read("t.txt")
    with pytest.raises(NotTextError, match="NUL"):
        await patcher.apply(f"{read.header}\nreplace 1:\n+a\x00b\n")
    with pytest.raises(NotTextError, match="NUL"):
        await patcher.write("t.txt", "a\x00b")
    assert fs.get("t.txt") == TEN


async def test_size_limits() -> None:
    fs, patcher = make(
        {"t.txt": TEN, "big.txt": "x" * 200}, max_patch_bytes=100, max_file_bytes=150
    )
    read = await patcher.read("t.txt")
    with pytest.raises(TooLargeError, match="over the limit of 100 bytes") as caught:
        await patcher.apply(f"{read.header}\ninsert tail:\n+{'y' * 120}\n")
    assert caught.value.status == 413
    with pytest.raises(TooLargeError, match="over the limit of 150 bytes"):
        await patcher.read("big.txt")
    roomy = Patcher(fs, patcher.store, max_file_bytes=150)
    with pytest.raises(TooLargeError, match="The edited file"):
        await roomy.apply(f"{read.header}\ninsert tail:\n+{'y' * 60}\n+{'z' * 20}\n")
    with pytest.raises(TooLargeError):
        await patcher.write("new.txt", "q" * 151)
    assert fs.get("t.txt") == TEN


async def test_two_sections_for_one_file_are_refused() -> None:
    fs, patcher = make({"t.txt": TEN})
    read = await patcher.read("t.txt")
    with pytest.raises(HashlineError, match="two sections for the same file"):
        await patcher.apply(f"{read.header}\ndelete 1\n{read.header}\ndelete 2\n")
    assert fs.get("t.txt") == TEN


# -- stale tags --------------------------------------------------------------------------------


async def test_collision_pair_is_a_change_not_a_match() -> None:
    first, second = "line one 263\nline two 4471\n", "line one 410\nline two 6970\n"
    fs, patcher = make({"c.txt": first})
    read = await patcher.read("c.txt")
    fs.set("c.txt", second)
    with pytest.raises(StaleTagError) as caught:
        await patcher.apply(f"{read.header}\nreplace 1:\n+changed\n")
    assert not isinstance(caught.value, UnknownTagError)
    assert "changed since your read" in str(caught.value)
    assert fs.get("c.txt") == second


async def test_stale_with_only_head_and_tail_applies_to_live_text_with_a_warning() -> None:
    fs, patcher = make({"t.txt": TEN})
    read = await patcher.read("t.txt")
    fs.set("t.txt", "person\n" + TEN)
    result = await patcher.apply(f"{read.header}\ninsert tail:\n+agent\n")
    assert fs.get("t.txt") == "person\n" + TEN + "agent\n"
    assert "changed since your read" in result.sections[0].warnings[0]


async def test_stale_edit_recovers_by_one_offset_with_a_banner() -> None:
    fs, patcher = make({"t.txt": TEN})
    read = await patcher.read("t.txt")
    fs.set("t.txt", "new 1\nnew 2\n" + TEN)
    result = await patcher.apply(f"{read.header}\nreplace 5:\n+FIVE\n")
    assert fs.get("t.txt") == "new 1\nnew 2\n" + TEN.replace("line 5\n", "FIVE\n")
    [section] = result.sections
    assert section.banner == "recovered: line 5 moved to 7 since your read"
    assert "updated (recovered: line 5 moved to 7" in result.to_text()
    assert "7:FIVE" in section.preview


async def test_stale_edit_on_an_edited_line_is_rejected_with_marked_context() -> None:
    fs, patcher = make({"t.txt": TEN})
    read = await patcher.read("t.txt")
    live = TEN.replace("line 5\n", "line five\n")
    fs.set("t.txt", live)
    with pytest.raises(StaleTagError) as caught:
        await patcher.apply(f"{read.header}\nreplace 5:\n+FIVE\n")
    message = str(caught.value)
    current = f"[t.txt#{section_tag(live)}]"
    assert f"Current header: {current}" in message
    assert "line 5 itself was edited" in message
    assert "*5:line five" in message and " 4:line 4" in message
    assert "Nothing was written" in message
    assert caught.value.status == 409
    assert fs.get("t.txt") == live
    # the live text is now known, and the context rows count as seen: a retry works
    retry = await patcher.apply(f"{current}\nreplace 5:\n+FIVE\n")
    assert retry.sections[0].written


async def test_stale_edits_that_moved_by_different_amounts_each_land_on_their_line() -> None:
    fs, patcher = make({"t.txt": TEN})
    read = await patcher.read("t.txt")
    fs.set("t.txt", TEN.replace("line 5\n", "line 5\nextra\n"))
    result = await patcher.apply(f"{read.header}\nreplace 2:\n+a\nreplace 8:\n+b\n")
    assert "each was found unchanged" in result.sections[0].banner
    assert fs.get("t.txt") == TEN.replace("line 5\n", "line 5\nextra\n").replace(
        "line 2\n", "a\n"
    ).replace("line 8\n", "b\n")


async def test_stale_insert_into_a_gap_the_person_filled_is_rejected() -> None:
    fs, patcher = make({"t.txt": TEN})
    read = await patcher.read("t.txt")
    live = TEN.replace("line 5\n", "line 5\nextra\n")
    fs.set("t.txt", live)
    with pytest.raises(StaleTagError, match="lines were added between lines 5 and 6"):
        await patcher.apply(f"{read.header}\ninsert after 5:\n+mine\n")
    assert fs.get("t.txt") == live


async def test_unknown_tag_is_rejected_and_the_live_text_becomes_known() -> None:
    fs, patcher = make({"t.txt": TEN})
    with pytest.raises(UnknownTagError) as caught:
        await patcher.apply("[t.txt#0000]\nreplace 3:\n+x\n")
    message = str(caught.value)
    assert "hash #0000 is not from this session" in message
    assert "3:line 3" in message
    assert fs.get("t.txt") == TEN
    assert patcher.store.by_hash("t.txt", section_tag(TEN)) is not None


async def test_tag_matching_live_text_but_never_issued_is_unknown() -> None:
    fs, patcher = make({"t.txt": TEN})
    with pytest.raises(UnknownTagError):
        await patcher.apply(f"[t.txt#{section_tag(TEN)}]\nreplace 3:\n+x\n")
    assert fs.get("t.txt") == TEN


class RebasingFs(InMemoryFilesystem):
    """A filesystem with its own rebaser, answering from a script."""

    def __init__(self, files: Mapping[str, str], answer: LineRebase | RebaseRefusal | None) -> None:
        super().__init__(files)
        self.answer = answer
        self.calls: list[Footprint] = []

    def rebase_lines(
        self, path: str, snapshot_text: str, live_text: str, footprint: Footprint
    ) -> LineRebase | RebaseRefusal | None:
        self.calls.append(footprint)
        return self.answer


async def test_filesystem_rebaser_is_used_when_it_answers() -> None:
    fs = RebasingFs({"t.txt": TEN}, LineRebase({2: 9, 3: 10}, ("cell b moved",)))
    patcher = Patcher(fs, InMemorySnapshotStore())
    read = await patcher.read("t.txt")
    fs.set("t.txt", TEN.replace("line 1\n", "LINE 1\n"))
    result = await patcher.apply(f"{read.header}\nreplace 2..3:\n+X\n")
    assert [call.lines for call in fs.calls] == [frozenset({2, 3})]
    assert fs.calls[0].replaced == frozenset({2, 3}) and fs.calls[0].rows == ("X",)
    assert fs.get("t.txt").endswith("line 8\nX\n")
    assert result.sections[0].banner == "recovered: cell b moved"


async def test_filesystem_rebaser_refusal_and_fallback() -> None:
    refusing = RebasingFs({"t.txt": TEN}, RebaseRefusal("cell b was edited", (2,), (1, 2, 3)))
    patcher = Patcher(refusing, InMemorySnapshotStore())
    read = await patcher.read("t.txt")
    refusing.set("t.txt", "top\n" + TEN)
    with pytest.raises(StaleTagError, match="cell b was edited") as caught:
        await patcher.apply(f"{read.header}\nreplace 2:\n+X\n")
    assert "*2:line 1" in str(caught.value)
    deferring = RebasingFs({"t.txt": TEN}, None)
    patcher = Patcher(deferring, InMemorySnapshotStore())
    read = await patcher.read("t.txt")
    deferring.set("t.txt", "top\n" + TEN)
    await patcher.apply(f"{read.header}\nreplace 2:\n+X\n")
    assert deferring.get("t.txt") == "top\nline 1\nX\n" + TEN.split("\n", 2)[2]


async def test_rebaser_mapping_that_splits_a_range_is_refused() -> None:
    fs = RebasingFs({"t.txt": TEN}, LineRebase({2: 5, 3: 9}))
    patcher = Patcher(fs, InMemorySnapshotStore())
    read = await patcher.read("t.txt")
    fs.set("t.txt", "top\n" + TEN)
    with pytest.raises(StaleTagError, match="no longer together"):
        await patcher.apply(f"{read.header}\nreplace 2..3:\n+X\n")


# -- seen lines --------------------------------------------------------------------------------


async def test_unseen_lines_are_rejected_revealed_then_accepted_on_retry() -> None:
    fs, patcher = make({"t.txt": TEN})
    read = await patcher.read("t.txt", offset=1, limit=3)
    with pytest.raises(UnseenLinesError) as caught:
        await patcher.apply(f"{read.header}\nreplace 7..8:\n+X\n")
    message = str(caught.value)
    assert "line(s) 7..8" in message
    assert "7:line 7\n8:line 8" in message
    assert fs.get("t.txt") == TEN
    await patcher.apply(f"{read.header}\nreplace 7..8:\n+X\n")
    assert "X\n" in fs.get("t.txt")


async def test_unseen_reveal_is_capped_and_then_nothing_becomes_seen() -> None:
    text = "".join(f"row {n}\n" for n in range(1, 101))
    fs, patcher = make({"t.txt": text})
    read = await patcher.read("t.txt", limit=1)
    patch = f"{read.header}\ndelete 10..60\n"
    with pytest.raises(UnseenLinesError, match="at most 40 lines") as caught:
        await patcher.apply(patch)
    assert "49:row 49" in str(caught.value) and "50:row 50" not in str(caught.value)
    with pytest.raises(UnseenLinesError):
        await patcher.apply(patch)
    assert fs.get("t.txt") == text


async def test_long_unseen_lines_are_cut_and_not_marked_seen() -> None:
    text = "short\n" + "y" * 600 + "\n"
    _, patcher = make({"t.txt": text})
    read = await patcher.read("t.txt", limit=1)
    with pytest.raises(UnseenLinesError, match="cut at 512 columns"):
        await patcher.apply(f"{read.header}\nreplace 2:\n+z\n")
    with pytest.raises(UnseenLinesError):
        await patcher.apply(f"{read.header}\nreplace 2:\n+z\n")


async def test_seen_lines_warn_and_off_policies() -> None:
    fs, warn = make({"t.txt": TEN}, seen_lines="warn")
    read = await warn.read("t.txt", limit=1)
    result = await warn.apply(f"{read.header}\ndelete 9\n")
    assert "never shown" in result.sections[0].warnings[0]
    fs, off = make({"t.txt": TEN}, seen_lines="off")
    read = await off.read("t.txt", limit=1)
    result = await off.apply(f"{read.header}\ndelete 9\n")
    assert result.sections[0].warnings == ()
    assert "line 9" not in fs.get("t.txt")


async def test_seen_lines_carry_over_to_the_new_version() -> None:
    _, patcher = make({"t.txt": TEN})
    read = await patcher.read("t.txt")
    first = await patcher.apply(f"{read.header}\ninsert head:\n+new\n")
    # line 10 of the old text is line 11 now, outside the preview, but it was seen
    second = await patcher.apply(f"{first.sections[0].header}\nreplace 11:\n+LAST\n")
    assert second.sections[0].after.endswith("line 9\nLAST\n")


# -- multi-file patches ------------------------------------------------------------------------


class FailingFs(InMemoryFilesystem):
    """Write failures for chosen paths that only show at write time (preflight passes)."""

    def __init__(self, files: Mapping[str, str], failing: set[str]) -> None:
        super().__init__(files)
        self.failing = failing

    async def write_text(self, path: str, content: str) -> WriteResult:
        if path in self.failing:
            raise OSError(28, "No space left on device")
        return await super().write_text(path, content)


async def test_all_sections_are_prepared_before_any_write() -> None:
    fs, patcher = make({"a.txt": TEN, "b.txt": TEN})
    a = await patcher.read("a.txt")
    b = await patcher.read("b.txt")
    with pytest.raises(AnchorError):
        await patcher.apply(f"{a.header}\ndelete 1\n{b.header}\ndelete 99\n")
    assert fs.get("a.txt") == TEN and fs.get("b.txt") == TEN
    result = await patcher.apply(f"{a.header}\ndelete 1\n{b.header}\ndelete 2\n")
    assert [s.written for s in result.sections] == [True, True]


async def test_a_write_failing_midway_says_which_files_landed() -> None:
    fs = FailingFs({"a.txt": TEN, "b.txt": TEN, "c.txt": TEN}, failing={"b.txt"})
    patcher = Patcher(fs, InMemorySnapshotStore())
    headers = [(await patcher.read(p)).header for p in ("a.txt", "b.txt", "c.txt")]
    patch = "".join(f"{h}\ndelete 1\n" for h in headers)
    with pytest.raises(PartialWriteError) as caught:
        await patcher.apply(patch)
    err = caught.value
    assert "No space left on device" in err.message
    assert "NOT written: b.txt, c.txt" in err.message
    assert [(s.path, s.written) for s in err.result.sections] == [
        ("a.txt", True),
        ("b.txt", False),
        ("c.txt", False),
    ]
    assert fs.get("a.txt") == TEN.replace("line 1\n", "", 1)
    assert fs.get("b.txt") == TEN and fs.get("c.txt") == TEN
    assert patcher.store.head("a.txt").text == fs.get("a.txt")  # type: ignore[union-attr]


async def test_a_first_write_failing_is_a_plain_write_failure() -> None:
    fs = FailingFs({"a.txt": TEN}, failing={"a.txt"})
    patcher = Patcher(fs, InMemorySnapshotStore())
    read = await patcher.read("a.txt")
    with pytest.raises(WriteFailedError) as caught:
        await patcher.apply(f"{read.header}\ndelete 1\n")
    assert not isinstance(caught.value, PartialWriteError)
    assert "Landed (new headers): none" in caught.value.message


async def test_preflight_refusal_stops_the_patch_before_any_write() -> None:
    fs, patcher = make({"a.txt": TEN, "b.txt": TEN})
    a, b = await patcher.read("a.txt"), await patcher.read("b.txt")
    fs.refuse_writes("b.txt", "read-only")
    with pytest.raises(WriteFailedError, match="read-only"):
        await patcher.apply(f"{a.header}\ndelete 1\n{b.header}\ndelete 1\n")
    assert fs.get("a.txt") == TEN


# -- no-ops and the write tool -----------------------------------------------------------------


async def test_repeated_noops_escalate_to_an_error() -> None:
    times = iter([0.0, 1.0, 2.0, 3.0])
    fs, patcher = make({"t.txt": TEN}, clock=lambda: next(times))
    read = await patcher.read("t.txt")
    patch = f"{read.header}\nreplace 2:\n+line 2\n"
    first = await patcher.apply(patch)
    assert first.sections[0].op is SectionOp.NOOP and not first.sections[0].written
    assert "no changes" in first.to_text()
    second = await patcher.apply(patch)
    assert "changed nothing twice" in second.to_text()
    with pytest.raises(RepeatedNoOpError, match="re-read the file"):
        await patcher.apply(patch)
    assert fs.get("t.txt") == TEN


async def test_a_real_change_resets_the_noop_count() -> None:
    _, patcher = make({"t.txt": TEN})
    read = await patcher.read("t.txt")
    noop = f"{read.header}\nreplace 2:\n+line 2\n"
    await patcher.apply(noop)
    await patcher.apply(noop)
    changed = await patcher.apply(f"{read.header}\ndelete 10\n")
    again = await patcher.apply(f"{changed.sections[0].header}\nreplace 2:\n+line 2\n")
    assert again.sections[0].op is SectionOp.NOOP


async def test_write_creates_updates_and_detects_noops() -> None:
    fs, patcher = make({"old.txt": "\ufeffa\r\n"})
    created = await patcher.write("new.py", "x = 1\n")
    assert created.sections[0].op is SectionOp.CREATE
    assert fs.get("new.py") == "x = 1\n"
    assert "created" in created.to_text()
    edit = await patcher.apply(f"{created.sections[0].header}\nreplace 1:\n+x = 2\n")
    assert fs.get("new.py") == "x = 2\n" and edit.sections[0].written
    read = await patcher.read("old.txt")
    updated = await patcher.write("old.txt", "a\nb\n", tag=read.tag)
    assert updated.sections[0].op is SectionOp.UPDATE
    assert fs.get("old.txt") == "\ufeffa\r\nb\r\n"
    same = await patcher.write("old.txt", "a\nb\n", tag=updated.sections[0].tag)
    assert same.sections[0].op is SectionOp.NOOP


async def test_replacing_a_file_needs_the_tag_of_the_version_it_replaces() -> None:
    fs, patcher = make({"t.txt": TEN})
    with pytest.raises(OverwriteRefusedError, match=r"needs the tag") as caught:
        await patcher.write("t.txt", "new\n")
    assert caught.value.status == 409 and caught.value.kind == "tag_required"
    current = section_tag(TEN)
    assert f"Current header: [t.txt#{current}]" in str(caught.value)
    assert fs.get("t.txt") == TEN
    read = await patcher.read("t.txt")
    fs.set("t.txt", TEN + "a person's line\n")  # changed since the read
    with pytest.raises(StaleTagError, match="changed since your read") as stale:
        await patcher.write("t.txt", "new\n", tag=read.tag)
    assert stale.value.status == 409
    changed = TEN + "a person's line\n"
    assert f"[t.txt#{section_tag(changed)}]" in str(stale.value)
    assert fs.get("t.txt") == TEN + "a person's line\n"
    again = await patcher.read("t.txt")
    done = await patcher.write("t.txt", "new\n", tag=again.tag)
    assert done.sections[0].written and fs.get("t.txt") == "new\n"


async def test_overwrite_replaces_without_a_tag_unless_forbidden() -> None:
    fs, patcher = make({"t.txt": TEN})
    await patcher.write("t.txt", "one\n", overwrite=True)
    assert fs.get("t.txt") == "one\n"
    strict = Patcher(fs, patcher.store, allow_overwrite=False)
    with pytest.raises(OverwriteRefusedError, match="turned off"):
        await strict.write("t.txt", "two\n", overwrite=True)
    assert fs.get("t.txt") == "one\n"
    read = await strict.read("t.txt")
    await strict.write("t.txt", "two\n", tag=read.tag)
    assert fs.get("t.txt") == "two\n"


async def test_a_new_file_needs_no_tag_and_a_tag_for_a_gone_file_is_stale() -> None:
    fs, patcher = make({"t.txt": TEN})
    read = await patcher.read("t.txt")
    fs.delete("t.txt")
    with pytest.raises(StaleTagError, match="gone since your read"):
        await patcher.write("t.txt", "x\n", tag=read.tag)
    assert not fs.entries()
    await patcher.write("t.txt", "x\n")
    assert fs.get("t.txt") == "x\n"


async def test_parsed_sections_are_accepted() -> None:
    fs, patcher = make({"t.txt": TEN})
    read = await patcher.read("t.txt")
    await patcher.apply([PatchSection("t.txt", read.tag, (Edit.delete(1, 9),))])
    assert fs.get("t.txt") == "line 10\n"


# -- agents, shared locks and repair warnings --------------------------------------------------


async def test_seen_lines_belong_to_the_agent_that_was_shown_them() -> None:
    fs = InMemoryFilesystem({"t.txt": TEN})
    store = InMemorySnapshotStore()
    alice = Patcher(fs, store, agent="alice")
    bob = Patcher(fs, store, agent="bob", locks=alice.locks)
    read = await alice.read("t.txt", offset=1, limit=5)
    await bob.read("t.txt", offset=6, limit=5)
    with pytest.raises(UnseenLinesError, match="line 3"):
        await bob.apply(f"{read.header}\nreplace 3:\n+THREE\n")
    result = await alice.apply(f"{read.header}\nreplace 3:\n+THREE\n")
    assert result.sections[0].written and fs.get("t.txt").split("\n")[2] == "THREE"


async def test_noop_streaks_are_counted_per_patcher() -> None:
    fs = InMemoryFilesystem({"t.txt": TEN})
    store = InMemorySnapshotStore()
    alice, bob = Patcher(fs, store, agent="alice"), Patcher(fs, store, agent="bob")
    header = (await alice.read("t.txt")).header
    await bob.read("t.txt")
    same = f"{header}\nreplace 1:\n+line 1\n"
    await alice.apply(same)
    await alice.apply(same)
    first_of_bob = await bob.apply(same)  # alice's streak does not escalate bob's
    assert "no changes" in first_of_bob.to_text()
    with pytest.raises(RepeatedNoOpError):
        await alice.apply(same)


async def test_pasted_prefixes_are_repaired_with_a_warning_on_an_applied_edit() -> None:
    fs, patcher = make({"t.txt": TEN})
    read = await patcher.read("t.txt")
    result = await patcher.apply(f"{read.header}\nreplace 2..3:\n+2:TWO\n+3:THREE\n")
    assert fs.get("t.txt").split("\n")[1:3] == ["TWO", "THREE"]
    [section] = result.sections
    assert section.written and any("prefix" in w for w in section.warnings), section.warnings
    assert any("prefix" in line for line in result.to_text().split("\n"))


async def test_repair_warnings_survive_a_recovered_stale_edit() -> None:
    fs, patcher = make({"t.txt": TEN})
    read = await patcher.read("t.txt")
    fs.set("t.txt", "new 1\nnew 2\n" + TEN)
    result = await patcher.apply(f"{read.header}\nreplace 5:\n+5:FIVE\n")
    assert fs.get("t.txt") == "new 1\nnew 2\n" + TEN.replace("line 5\n", "FIVE\n")
    [section] = result.sections
    assert section.banner.startswith("recovered:")
    assert any("prefix" in w for w in section.warnings), section.warnings


async def test_boundary_echo_repair_warns_on_an_applied_edit() -> None:
    fs, patcher = make({"t.txt": TEN})
    read = await patcher.read("t.txt")
    result = await patcher.apply(f"{read.header}\nreplace 5:\n+line 4\n+FIVE\n+line 6\n")
    assert fs.get("t.txt") == TEN.replace("line 5\n", "FIVE\n")
    assert any("line 4" in w or "echo" in w for w in result.sections[0].warnings)


async def test_too_many_edits_or_too_long_a_view_are_refused_naming_the_limit() -> None:
    fs, patcher = make({"t.txt": TEN}, max_edits=3, max_view_lines=5)
    with pytest.raises(TooLargeError, match=r"10 lines, over the limit of 5 lines per read") as big:
        await patcher.read("t.txt")
    assert big.value.status == 413 and "max_view_lines" in str(big.value)
    read = await patcher.read("t.txt", offset=1, limit=5)
    edits = [{"op": "replace", "start": n, "end": n, "lines": [f"x{n}"]} for n in range(1, 5)]
    section = {"path": "t.txt", "tag": read.tag, "edits": edits}
    for form in (section, [section], f"{read.header}\n" + "".join(
        f"replace {n}:\n+x{n}\n" for n in range(1, 5)
    )):  # fmt: skip
        with pytest.raises(TooLargeError, match=r"4 edit operations, over the limit of 3"):
            await patcher.apply(form)
    assert fs.get("t.txt") == TEN
    done = await patcher.apply({**section, "edits": edits[:3]})
    assert done.sections[0].written


async def test_too_many_edits_are_refused_before_the_edit_is_parsed() -> None:
    fs, patcher = make({"t.txt": TEN}, max_edits=3)
    read = await patcher.read("t.txt")
    # four verb lines and then a line no parser reads: refused for its count, unparsed
    text = f"{read.header}\n" + "delete 1\n" * 4 + "this is not an edit row\n"
    with pytest.raises(TooLargeError, match=r"4 edit operations, over the limit of 3"):
        await patcher.apply(text)
    with pytest.raises(PatchSyntaxError):  # within the limit, it is parsed and refused
        await patcher.apply(f"{read.header}\n" + "delete 1\n" * 3 + "this is not an edit row\n")
    assert fs.get("t.txt") == TEN
