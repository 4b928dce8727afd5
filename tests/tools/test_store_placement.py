"""Where the default snapshot store goes when the Jupyter data dir is on NFS: local disk, in a
folder that is ours alone; an explicit store still wins. Mount tables are planted."""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

import pytest

from jupyter_hashline.hashline import MountTable
from jupyter_hashline.tools import (
    default_store_path,
    default_store_placement,
    open_directory,
    resolve_store_path,
)
from jupyter_hashline.tools.store_placement import (
    place_store,
    private_temp_folder,
    store_file_name,
)

posix_only = pytest.mark.skipif(os.name != "posix", reason="uids and modes are POSIX's")


def table(*network: Path) -> MountTable:
    lines = ["/dev/vda / ext4 rw 0 0"]
    lines += [
        f"filer:/export{n} {os.path.realpath(folder)} nfs4 rw 0 0"
        for n, folder in enumerate(network)
    ]
    return MountTable.parse("\n".join(lines) + "\n")


@pytest.fixture
def dirs(tmp_path: Path) -> dict[str, Path]:
    found = {name: tmp_path / name for name in ("root", "data", "runtime", "temp")}
    for folder in found.values():
        folder.mkdir()
    return found


def test_a_local_data_dir_keeps_the_store_and_says_nothing(dirs: dict[str, Path]) -> None:
    placement = place_store(
        dirs["root"], data_dir=dirs["data"], runtime_dir=dirs["runtime"], mount_table=table()
    )
    assert placement.path == dirs["data"] / "jupyter_hashline" / store_file_name(dirs["root"])
    assert placement.note is None


def test_a_network_data_dir_puts_the_store_in_a_local_runtime_dir(dirs: dict[str, Path]) -> None:
    placement = place_store(
        dirs["root"],
        data_dir=dirs["data"],
        runtime_dir=dirs["runtime"],
        mount_table=table(dirs["data"]),
    )
    assert placement.path == dirs["runtime"] / "jupyter_hashline" / store_file_name(dirs["root"])
    assert placement.note is not None
    assert str(placement.path) in placement.note and "nfs4" in placement.note
    assert "WAL" in placement.note and "c.HashlineExtension.store_path" in placement.note
    assert not placement.path.parent.exists()  # made by whoever opens the store


@posix_only
def test_network_data_and_runtime_dirs_put_it_in_a_private_temp_folder(
    dirs: dict[str, Path],
) -> None:
    placement = place_store(
        dirs["root"],
        data_dir=dirs["data"],
        runtime_dir=dirs["runtime"],
        mount_table=table(dirs["data"], dirs["runtime"]),
        temp_dir=dirs["temp"],
    )
    folder = dirs["temp"] / f"jupyter-hashline-{os.getuid()}"
    assert placement.path == folder / store_file_name(dirs["root"])
    info = os.lstat(folder)
    assert stat.S_IMODE(info.st_mode) == 0o700 and info.st_uid == os.getuid()
    assert placement.note is not None and str(placement.path) in placement.note


@posix_only
def test_the_temp_folder_is_0700_whatever_the_umask(tmp_path: Path) -> None:
    previous = os.umask(0o277)  # would make it 0500: not even ours to write
    try:
        folder, refusal = private_temp_folder(tmp_path)
    finally:
        os.umask(previous)
    assert refusal is None and folder is not None
    assert stat.S_IMODE(os.lstat(folder).st_mode) == 0o700


@posix_only
def test_an_existing_folder_of_ours_readable_by_others_is_made_private(tmp_path: Path) -> None:
    existing = tmp_path / f"jupyter-hashline-{os.getuid()}"
    existing.mkdir()
    existing.chmod(0o755)
    folder, refusal = private_temp_folder(tmp_path)
    assert (folder, refusal) == (existing, None)
    assert stat.S_IMODE(os.lstat(existing).st_mode) == 0o700


@posix_only
@pytest.mark.parametrize("mode", [0o770, 0o777, 0o702, 0o1777])
def test_a_temp_folder_others_may_write_to_is_refused(tmp_path: Path, mode: int) -> None:
    existing = tmp_path / f"jupyter-hashline-{os.getuid()}"
    existing.mkdir()
    existing.chmod(mode)
    folder, refusal = private_temp_folder(tmp_path)
    assert folder is None and refusal is not None and "writable by others" in refusal
    assert stat.S_IMODE(os.lstat(existing).st_mode) == mode  # left as it was


@posix_only
def test_a_symlinked_temp_folder_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    (tmp_path / f"jupyter-hashline-{os.getuid()}").symlink_to(elsewhere)
    folder, refusal = private_temp_folder(tmp_path)
    assert folder is None and refusal is not None and "not a directory" in refusal


@posix_only
def test_a_temp_folder_owned_by_someone_else_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another user made the folder first (here: we pretend to be another uid than its
    owner, since a test cannot give a folder away)."""
    owner = os.getuid()
    existing = tmp_path / f"jupyter-hashline-{owner + 1}"
    existing.mkdir(mode=0o700)
    monkeypatch.setattr(os, "getuid", lambda: owner + 1)
    folder, refusal = private_temp_folder(tmp_path)
    assert folder is None and refusal is not None and f"owned by uid {owner}" in refusal


@posix_only
def test_a_refused_temp_folder_leaves_the_store_in_the_data_dir(dirs: dict[str, Path]) -> None:
    squatted = dirs["temp"] / f"jupyter-hashline-{os.getuid()}"
    squatted.mkdir()
    squatted.chmod(0o777)
    placement = place_store(
        dirs["root"],
        data_dir=dirs["data"],
        runtime_dir=dirs["runtime"],
        mount_table=table(dirs["data"], dirs["runtime"]),
        temp_dir=dirs["temp"],
    )
    assert placement.path.parent == dirs["data"] / "jupyter_hashline"
    assert placement.note is not None
    assert "refused" in placement.note and "rollback journal" in placement.note


def test_a_network_temp_dir_is_not_used_either(dirs: dict[str, Path]) -> None:
    placement = place_store(
        dirs["root"],
        data_dir=dirs["data"],
        runtime_dir=dirs["runtime"],
        mount_table=table(dirs["data"], dirs["runtime"], dirs["temp"]),
        temp_dir=dirs["temp"],
    )
    assert placement.path.parent == dirs["data"] / "jupyter_hashline"
    assert list(dirs["temp"].iterdir()) == []


def test_the_same_root_gets_the_same_file_name_wherever_it_goes(dirs: dict[str, Path]) -> None:
    local = default_store_path(dirs["root"], dirs["data"], mount_table=table())
    moved = default_store_path(
        dirs["root"], dirs["data"], runtime_dir=dirs["runtime"], mount_table=table(dirs["data"])
    )
    assert local.name == moved.name == store_file_name(dirs["root"])
    assert moved.parent == dirs["runtime"] / "jupyter_hashline"


def test_the_defaults_are_jupyters_dirs(
    dirs: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(dirs["data"]))
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(dirs["runtime"]))
    placement = default_store_placement(dirs["root"], mount_table=table(dirs["data"]))
    assert placement.path.parent == dirs["runtime"] / "jupyter_hashline"


def test_the_directory_mode_places_and_logs_once_and_an_explicit_store_wins(
    dirs: dict[str, Path],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    tmp_path: Path,
) -> None:
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(dirs["data"]))
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(dirs["runtime"]))
    monkeypatch.delenv("JUPYTER_HASHLINE_STORE", raising=False)
    planted = table(dirs["data"])
    monkeypatch.setattr(MountTable, "read", classmethod(lambda cls, source="": planted))
    with caplog.at_level(logging.INFO, logger="jupyter_hashline.tools.directory"):
        chosen = resolve_store_path(dirs["root"], None)
    assert Path(chosen).parent == dirs["runtime"] / "jupyter_hashline"
    (line,) = [r.getMessage() for r in caplog.records if "snapshot store" in r.getMessage()]
    assert chosen in line and "network filesystem" in line
    explicit = str(dirs["data"] / "mine.sqlite3")  # on the "network", and still used
    assert resolve_store_path(dirs["root"], explicit) == explicit
    monkeypatch.setenv("JUPYTER_HASHLINE_STORE", explicit)
    assert resolve_store_path(dirs["root"], None) == explicit


async def test_an_explicit_store_on_nfs_opens_without_wal(
    dirs: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    planted = table(dirs["data"])
    monkeypatch.setattr(MountTable, "read", classmethod(lambda cls, source="": planted))
    explicit = dirs["data"] / "mine.sqlite3"
    workspace = open_directory(dirs["root"], str(explicit))
    try:
        assert workspace.store.path == explicit
        assert workspace.store.journal_mode == "delete"
        # its advice names the directory tools' own ways to choose the file
        assert "--store or $JUPYTER_HASHLINE_STORE" in workspace.store.choose_file
    finally:
        await workspace.aclose()
