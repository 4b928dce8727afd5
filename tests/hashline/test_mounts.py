"""The mount table: parsing `/proc/self/mounts`, choosing a path's filesystem, network types."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from jupyter_hashline.hashline.mounts import Mount, MountTable, is_network_type

PROC_MOUNTS = """\
overlay / overlay rw,relatime,lowerdir=/var/lib/docker/l 0 0
proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0
tmpfs /dev tmpfs rw,nosuid,size=65536k,mode=755 0 0
10.0.0.7:/export/home /home nfs4 rw,relatime,vers=4.1,rsize=1048576 0 0
/dev/sda1 /home/jovyan/scratch ext4 rw,relatime 0 0
/dev/sdb1 /mnt/My\\040Data ext4 rw 0 0
/dev/sdc1 /mnt/tab\\011and\\134slash xfs rw 0 0
not enough
"""


def table() -> MountTable:
    return MountTable.parse(PROC_MOUNTS)


def test_parse_reads_source_point_and_type_and_skips_malformed_lines() -> None:
    mounts = table().mounts
    assert len(mounts) == 7
    assert mounts[3] == Mount("10.0.0.7:/export/home", "/home", "nfs4")
    assert mounts[0].fstype == "overlay"


def test_octal_escapes_in_mount_points_are_decoded() -> None:
    points = {mount.point for mount in table().mounts}
    assert "/mnt/My Data" in points
    assert "/mnt/tab\tand\\slash" in points


def test_the_longest_mount_point_containing_the_path_wins() -> None:
    mounts = table()
    assert mounts.filesystem_of("/home/jovyan/.local/share") == ("/home", "nfs4")
    assert mounts.filesystem_of("/home/jovyan/scratch/x") == ("/home/jovyan/scratch", "ext4")
    assert mounts.filesystem_of("/home") == ("/home", "nfs4")
    assert mounts.filesystem_of("/homework") == ("/", "overlay")  # a prefix, not a parent
    assert mounts.filesystem_of("/tmp") == ("/", "overlay")
    assert mounts.filesystem_of("/mnt/My Data/notes") == ("/mnt/My Data", "ext4")


def test_a_later_mount_on_the_same_point_is_the_one_on_top() -> None:
    mounts = MountTable.parse("a / ext4 rw 0 0\nb /data ext4 rw 0 0\nc /data nfs rw 0 0\n")
    assert mounts.filesystem_of("/data/x") == ("/data", "nfs")


def test_a_missing_path_is_judged_by_its_nearest_existing_ancestor(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    mounts = MountTable.parse(f"a / ext4 rw 0 0\nb {real} nfs4 rw 0 0\n")
    assert mounts.filesystem_of(link / "not" / "yet" / "there.sqlite3") == (str(real), "nfs4")
    assert mounts.is_network(link / "missing")
    assert not mounts.is_network(tmp_path / "elsewhere" / "missing")


def test_a_relative_path_is_taken_from_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    mounts = MountTable.parse(f"a / ext4 rw 0 0\nb {os.path.realpath(tmp_path)} cifs rw 0 0\n")
    assert mounts.is_network("store.sqlite3")


@pytest.mark.parametrize(
    "fstype",
    [
        *("nfs", "nfs4", "cifs", "smb3", "smbfs", "lustre", "gpfs", "ceph", "glusterfs"),
        *("afs", "9p", "autofs", "fuse", "fuse.sshfs", "fuse.gcsfuse", "fuse.s3fs", "fuse.portal"),
    ],
)
def test_network_types(fstype: str) -> None:
    assert is_network_type(fstype)
    assert MountTable.parse(f"a / ext4 rw 0 0\nb /home {fstype} rw 0 0\n").is_network("/home/x")


@pytest.mark.parametrize(
    "fstype", ["ext4", "xfs", "btrfs", "zfs", "overlay", "tmpfs", "apfs", "fuseblk", "nfsd"]
)
def test_local_types(fstype: str) -> None:
    assert not is_network_type(fstype)
    assert not MountTable.parse(f"a / nfs rw 0 0\nb /home {fstype} rw 0 0\n").is_network("/home")


def test_an_empty_table_knows_no_filesystem() -> None:
    empty = MountTable()
    assert empty.filesystem_of("/home") is None
    assert not empty.is_network("/home")


def test_an_unreadable_table_is_empty(tmp_path: Path) -> None:
    assert MountTable.read(tmp_path / "no-such-file") == MountTable()


def test_read_parses_the_file_it_is_given(tmp_path: Path) -> None:
    source = tmp_path / "mounts"
    source.write_bytes(PROC_MOUNTS.encode())
    assert MountTable.read(source) == table()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc is Linux's")
def test_this_machine_has_a_root_mount() -> None:
    found = MountTable.read().filesystem_of("/")
    assert found is not None and found[0] == "/"
