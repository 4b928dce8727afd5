"""One contract suite for every Filesystem, plus what only DiskFilesystem promises.

Shared: round trip, missing files, `exists`, `canonical_path`, overwrite, unicode, raw BOM and
CRLF. Disk only: confinement to the root (`..`, absolute paths, symlinks), atomic writes,
permission bits, undecodable files, read-only files. In-memory only: its sync helpers and the
write hooks other tests use to simulate format-on-save and failing storage.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jupyter_hashline.hashline.callscope import call_scope
from jupyter_hashline.hashline.disk import DiskFilesystem, decode_text
from jupyter_hashline.hashline.errors import (
    NotFoundError,
    NotTextError,
    PathOutsideRootError,
    WriteFailedError,
    is_not_found,
)
from jupyter_hashline.hashline.filesystem import ByteStorage, Filesystem, WriteResult
from jupyter_hashline.hashline.memory_fs import InMemoryFilesystem


@pytest.fixture(params=["disk", "memory"])
def fs(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "disk":
        root = tmp_path / "root"
        root.mkdir()
        yield DiskFilesystem(root)
    else:
        yield InMemoryFilesystem()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    directory = tmp_path / "root"
    directory.mkdir()
    return directory


@pytest.fixture
def disk(root: Path) -> DiskFilesystem:
    return DiskFilesystem(root)


# -- the shared contract -------------------------------------------------------------------------


def test_is_a_filesystem(fs: Any) -> None:
    assert isinstance(fs, Filesystem)


async def test_round_trip(fs: Any) -> None:
    result = await fs.write_text("a.py", "x = 1\n")
    assert result == WriteResult(text="x = 1\n")
    assert await fs.read_text("a.py") == "x = 1\n"


async def test_missing_file_is_not_found(fs: Any) -> None:
    with pytest.raises(NotFoundError) as caught:
        await fs.read_text("missing.py")
    assert caught.value.path == "missing.py"
    assert caught.value.status == 404
    assert "File not found: missing.py" in str(caught.value)
    assert is_not_found(caught.value)


async def test_exists(fs: Any) -> None:
    assert await fs.exists("a.py") is False
    await fs.write_text("a.py", "")
    assert await fs.exists("a.py") is True
    assert await fs.read_text("a.py") == ""


async def test_overwrite_replaces_everything(fs: Any) -> None:
    await fs.write_text("a.py", "first version, long\n" * 10)
    await fs.write_text("a.py", "second\n")
    assert await fs.read_text("a.py") == "second\n"


async def test_unicode_round_trips(fs: Any) -> None:
    text = "# ünïcødé ✓ 🐍 中文\nπ = 3.14159\n\u2028separator inside a line\n"
    await fs.write_text("ü.py", text)
    assert await fs.read_text("ü.py") == text


@pytest.mark.parametrize(
    "raw",
    ["\ufeffwith bom\n", "crlf\r\nlines\r\n", "\ufeffboth\r\n", "lone\rcr\n", "no newline at end"],
)
async def test_raw_text_is_kept_exactly(fs: Any, raw: str) -> None:
    await fs.write_text("raw.txt", raw)
    assert await fs.read_text("raw.txt") == raw


async def test_canonical_path_is_a_stable_key(fs: Any) -> None:
    assert await fs.canonical_path("b.py") == await fs.canonical_path("b.py")
    assert await fs.canonical_path("b.py") != await fs.canonical_path("c.py")


async def test_preflight_accepts_a_new_file(fs: Any) -> None:
    await fs.preflight_write("new.py")
    assert await fs.exists("new.py") is False


# -- DiskFilesystem: paths -----------------------------------------------------------------------


async def test_canonical_path_normalizes(disk: DiskFilesystem, root: Path) -> None:
    (root / "sub").mkdir()
    assert await disk.canonical_path("b.py") == "b.py"
    assert await disk.canonical_path("./b.py") == "b.py"
    assert await disk.canonical_path("sub/../b.py") == "b.py"
    assert await disk.canonical_path("sub//c.py") == "sub/c.py"
    assert await disk.canonical_path(str(root / "sub" / "c.py")) == "sub/c.py"


async def test_canonical_path_follows_links_inside_the_root(
    disk: DiskFilesystem, root: Path
) -> None:
    (root / "real.py").write_text("x\n")
    (root / "link.py").symlink_to(root / "real.py")
    assert await disk.canonical_path("link.py") == "real.py"


async def test_relative_paths_are_relative_to_the_root(root: Path) -> None:
    (root / "a.py").write_text("in root\n")
    assert await DiskFilesystem(root).read_text("a.py") == "in root\n"


@pytest.mark.parametrize("escape", ["../outside.py", "sub/../../outside.py", "../root2/x.py"])
async def test_dot_dot_out_of_the_root_is_refused(
    disk: DiskFilesystem, root: Path, escape: str
) -> None:
    (root.parent / "outside.py").write_text("secret\n")
    for attempt in (disk.read_text(escape), disk.write_text(escape, "x"), disk.exists(escape)):
        with pytest.raises(PathOutsideRootError) as caught:
            await attempt
        assert caught.value.status == 403
    assert (root.parent / "outside.py").read_text() == "secret\n"


async def test_dot_dot_that_stays_inside_is_fine(disk: DiskFilesystem, root: Path) -> None:
    (root / "sub").mkdir()
    await disk.write_text("sub/../inside.py", "ok\n")
    assert (root / "inside.py").read_text() == "ok\n"


async def test_absolute_path_outside_the_root_is_refused(disk: DiskFilesystem, root: Path) -> None:
    outside = root.parent / "outside.py"
    outside.write_text("secret\n")
    with pytest.raises(PathOutsideRootError, match="outside the root"):
        await disk.read_text(str(outside))
    with pytest.raises(PathOutsideRootError):
        await disk.canonical_path("/etc/passwd")


async def test_absolute_path_inside_the_root_is_allowed(disk: DiskFilesystem, root: Path) -> None:
    await disk.write_text(str(root / "abs.py"), "abs\n")
    assert await disk.read_text("abs.py") == "abs\n"


async def test_symlink_out_of_the_root_is_refused(disk: DiskFilesystem, root: Path) -> None:
    outside_dir = root.parent / "elsewhere"
    outside_dir.mkdir()
    (outside_dir / "secret.py").write_text("secret\n")
    (root / "file_link.py").symlink_to(outside_dir / "secret.py")
    (root / "dir_link").symlink_to(outside_dir)
    (root / "dangling.py").symlink_to(outside_dir / "new.py")
    for path in ["file_link.py", "dir_link/secret.py", "dangling.py"]:
        with pytest.raises(PathOutsideRootError, match="symlink"):
            await disk.read_text(path)
        with pytest.raises(PathOutsideRootError):
            await disk.write_text(path, "overwritten\n")
    assert (outside_dir / "secret.py").read_text() == "secret\n"
    assert not (outside_dir / "new.py").exists()


async def test_symlink_inside_the_root_is_followed_and_kept(
    disk: DiskFilesystem, root: Path
) -> None:
    (root / "real.py").write_text("old\n")
    (root / "link.py").symlink_to("real.py")
    assert await disk.read_text("link.py") == "old\n"
    await disk.write_text("link.py", "new\n")
    assert (root / "link.py").is_symlink()
    assert (root / "real.py").read_text() == "new\n"


async def test_nul_in_a_path_is_refused(disk: DiskFilesystem) -> None:
    with pytest.raises(PathOutsideRootError, match="NUL"):
        await disk.read_text("a\x00.py")


def test_root_must_be_an_existing_directory(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError, match="Root directory not found"):
        DiskFilesystem(tmp_path / "absent")


async def test_without_a_root_paths_are_used_as_given(tmp_path: Path) -> None:
    fs = DiskFilesystem()
    target = tmp_path / "free.py"
    await fs.write_text(str(target), "free\n")
    assert await fs.read_text(str(target)) == "free\n"
    assert await fs.canonical_path(str(tmp_path / "x" / ".." / "free.py")) == target.as_posix()


# -- DiskFilesystem: reading ---------------------------------------------------------------------


async def test_raw_bytes_are_read_without_translation(disk: DiskFilesystem, root: Path) -> None:
    (root / "raw.txt").write_bytes(b"\xef\xbb\xbfa\r\nb\rc\n")
    assert await disk.read_text("raw.txt") == "\ufeffa\r\nb\rc\n"


async def test_undecodable_file_is_not_text(disk: DiskFilesystem, root: Path) -> None:
    (root / "latin1.txt").write_bytes("café\n".encode("latin-1"))
    with pytest.raises(NotTextError) as caught:
        await disk.read_text("latin1.txt")
    assert "latin1.txt" in str(caught.value) and "UTF-8" in str(caught.value)
    assert caught.value.status == 415


async def test_binary_file_with_nul_is_not_text(disk: DiskFilesystem, root: Path) -> None:
    (root / "blob.bin").write_bytes(b"PK\x03\x04\x00\x00")
    with pytest.raises(NotTextError, match=r"blob\.bin"):
        await disk.read_text("blob.bin")


async def test_directory_is_not_text(disk: DiskFilesystem, root: Path) -> None:
    (root / "sub").mkdir()
    with pytest.raises(NotTextError, match="directory"):
        await disk.read_text("sub")
    assert await disk.exists("sub") is False


async def test_path_through_a_file_is_not_found(disk: DiskFilesystem, root: Path) -> None:
    (root / "file.py").write_text("x\n")
    with pytest.raises(NotFoundError):
        await disk.read_text("file.py/inner.py")


# -- DiskFilesystem: writing ---------------------------------------------------------------------


async def test_write_creates_missing_parent_directories(disk: DiskFilesystem, root: Path) -> None:
    await disk.preflight_write("deep/er/new.py")
    await disk.write_text("deep/er/new.py", "made\n")
    assert (root / "deep" / "er" / "new.py").read_bytes() == b"made\n"


async def test_write_is_byte_exact(disk: DiskFilesystem, root: Path) -> None:
    await disk.write_text("w.txt", "\ufeffa\r\nü\n")
    assert (root / "w.txt").read_bytes() == b"\xef\xbb\xbfa\r\n\xc3\xbc\n"


async def test_failed_replace_leaves_old_file_and_no_temp(
    disk: DiskFilesystem, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (root / "keep.py").write_text("original\n")

    def broken_replace(src: Any, dst: Any) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(WriteFailedError) as caught:
        await disk.write_text("keep.py", "replacement\n")
    assert "Input/output error" in str(caught.value) and "intact" in str(caught.value)
    assert caught.value.status == 500
    assert (root / "keep.py").read_text() == "original\n"
    assert sorted(p.name for p in root.iterdir()) == ["keep.py"]


async def test_full_disk_is_reported(
    disk: DiskFilesystem, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (root / "keep.py").write_text("original\n")

    def full_write(fd: int, data: Any) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", full_write)
    with pytest.raises(WriteFailedError, match="disk is full"):
        await disk.write_text("keep.py", "replacement\n")
    assert (root / "keep.py").read_text() == "original\n"
    assert sorted(p.name for p in root.iterdir()) == ["keep.py"]


async def test_permission_bits_are_kept(disk: DiskFilesystem, root: Path) -> None:
    for mode in (0o640, 0o755, 0o600):
        target = root / f"mode{mode:o}.sh"
        target.write_text("old\n")
        target.chmod(mode)
        await disk.write_text(target.name, "new\n")
        assert stat.S_IMODE(target.stat().st_mode) == mode
        assert target.read_text() == "new\n"


async def test_new_files_get_the_usual_mode(disk: DiskFilesystem, root: Path) -> None:
    umask = os.umask(0o022)
    try:
        await disk.write_text("fresh.py", "x\n")
    finally:
        os.umask(umask)
    assert stat.S_IMODE((root / "fresh.py").stat().st_mode) == 0o644


async def test_read_only_file_is_refused_and_untouched(disk: DiskFilesystem, root: Path) -> None:
    target = root / "locked.py"
    target.write_text("precious\n")
    target.chmod(0o444)
    with pytest.raises(WriteFailedError, match="read-only"):
        await disk.preflight_write("locked.py")
    with pytest.raises(WriteFailedError, match="read-only"):
        await disk.write_text("locked.py", "clobbered\n")
    assert target.read_text() == "precious\n"
    assert sorted(p.name for p in root.iterdir()) == ["locked.py"]


async def test_writing_onto_a_directory_fails_cleanly(disk: DiskFilesystem, root: Path) -> None:
    (root / "sub").mkdir()
    with pytest.raises(WriteFailedError, match="directory"):
        await disk.write_text("sub", "x\n")
    assert (root / "sub").is_dir()


async def test_parent_that_is_a_file_fails_preflight(disk: DiskFilesystem, root: Path) -> None:
    (root / "file.py").write_text("x\n")
    with pytest.raises(WriteFailedError, match=r"(?i)not a directory"):
        await disk.preflight_write("file.py/inner.py")
    with pytest.raises(WriteFailedError):
        await disk.write_text("file.py/inner.py", "y\n")
    assert (root / "file.py").read_text() == "x\n"


@pytest.mark.parametrize("content", ["nul \x00 inside\n", "lone \ud800 surrogate\n"])
async def test_unwritable_text_is_refused(disk: DiskFilesystem, root: Path, content: str) -> None:
    (root / "t.py").write_text("old\n")
    with pytest.raises(NotTextError, match=r"t\.py"):
        await disk.write_text("t.py", content)
    assert (root / "t.py").read_text() == "old\n"
    assert sorted(p.name for p in root.iterdir()) == ["t.py"]


# -- DiskFilesystem: bytes (ByteStorage) ---------------------------------------------------------


async def test_disk_is_byte_storage(disk: DiskFilesystem) -> None:
    assert isinstance(disk, ByteStorage)
    assert not isinstance(InMemoryFilesystem(), ByteStorage)


async def test_bytes_round_trip_exactly(disk: DiskFilesystem, root: Path) -> None:
    data = "\ufeffa\r\nü\n".encode()
    await disk.write_bytes("deep/b.bin", data)
    assert (root / "deep" / "b.bin").read_bytes() == data
    assert await disk.read_bytes("deep/b.bin") == data


async def test_read_bytes_does_not_judge_the_encoding(disk: DiskFilesystem, root: Path) -> None:
    (root / "latin1.txt").write_bytes("café\n".encode("latin-1"))
    assert await disk.read_bytes("latin1.txt") == b"caf\xe9\n"
    with pytest.raises(NotTextError):
        decode_text("latin1.txt", await disk.read_bytes("latin1.txt"))


async def test_bytes_keep_the_other_promises(disk: DiskFilesystem, root: Path) -> None:
    with pytest.raises(NotFoundError):
        await disk.read_bytes("absent.bin")
    with pytest.raises(PathOutsideRootError):
        await disk.read_bytes("../outside.bin")
    (root / "locked.bin").write_bytes(b"precious")
    (root / "locked.bin").chmod(0o444)
    with pytest.raises(WriteFailedError, match="read-only"):
        await disk.write_bytes("locked.bin", b"clobbered")
    with pytest.raises(NotTextError, match="NUL"):
        await disk.write_bytes("nul.bin", b"a\x00b")
    assert sorted(p.name for p in root.iterdir()) == ["locked.bin"]
    assert (root / "locked.bin").read_bytes() == b"precious"


# -- DiskFilesystem: one resolution per engine call ----------------------------------------------


async def test_within_one_call_a_path_resolves_once(disk: DiskFilesystem, root: Path) -> None:
    (root / "a.py").write_text("A\n")
    (root / "b.py").write_text("B\n")
    (root / "link.py").symlink_to(root / "a.py")
    with call_scope():
        assert await disk.read_text("link.py") == "A\n"
        (root / "link.py").unlink()
        (root / "link.py").symlink_to(root / "b.py")
        assert await disk.read_text("link.py") == "A\n"  # the file this call read
        await disk.write_text("link.py", "A2\n")
    assert (root / "a.py").read_text() == "A2\n"
    with call_scope():  # the next call resolves again
        assert await disk.read_text("link.py") == "B\n"
    assert await disk.read_text("link.py") == "B\n"  # and so does every use outside a call


async def test_a_link_turned_outward_between_calls_is_refused(
    disk: DiskFilesystem, root: Path, tmp_path: Path
) -> None:
    (root / "a.py").write_text("A\n")
    (tmp_path / "secret.py").write_text("S\n")
    (root / "link.py").symlink_to(root / "a.py")
    with call_scope():
        assert await disk.read_text("link.py") == "A\n"
    (root / "link.py").unlink()
    (root / "link.py").symlink_to(tmp_path / "secret.py")
    with call_scope(), pytest.raises(PathOutsideRootError):
        await disk.read_text("link.py")


# -- InMemoryFilesystem: helpers and hooks -------------------------------------------------------


async def test_memory_sync_helpers() -> None:
    fs = InMemoryFilesystem({"b.py": "b\n", "a.py": "a\n"})
    assert fs.entries() == {"a.py": "a\n", "b.py": "b\n"}
    assert list(fs.entries()) == ["a.py", "b.py"]
    fs.set("c.py", "c\r\n")
    assert fs.get("c.py") == "c\r\n"
    assert await fs.read_text("c.py") == "c\r\n"
    fs.delete("a.py")
    with pytest.raises(NotFoundError):
        fs.get("a.py")
    with pytest.raises(NotFoundError):
        fs.delete("a.py")
    fs.clear()
    assert fs.entries() == {}


async def test_memory_entries_is_a_copy() -> None:
    fs = InMemoryFilesystem({"a.py": "a\n"})
    fs.entries()["a.py"] = "changed"
    assert fs.get("a.py") == "a\n"


async def test_memory_transform_on_write_reports_the_landed_text() -> None:
    fs = InMemoryFilesystem(transform_on_write=lambda path, text: text.rstrip("\n") + "\n")
    result = await fs.write_text("a.py", "x = 1\n\n\n")
    assert result.text == "x = 1\n"
    assert fs.get("a.py") == "x = 1\n"


async def test_memory_refused_writes_leave_the_file_intact() -> None:
    fs = InMemoryFilesystem({"a.py": "old\n"})
    fs.refuse_writes("a.py", "disk on fire")
    with pytest.raises(WriteFailedError, match="disk on fire"):
        await fs.preflight_write("a.py")
    with pytest.raises(WriteFailedError, match="disk on fire"):
        await fs.write_text("a.py", "new\n")
    assert fs.get("a.py") == "old\n"
    fs.allow_writes("a.py")
    await fs.write_text("a.py", "new\n")
    assert fs.get("a.py") == "new\n"
