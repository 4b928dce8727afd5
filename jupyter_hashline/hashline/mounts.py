"""Which filesystem a path is on, read from the kernel's mount table (`/proc/self/mounts`).

SQLite's WAL mode keeps its index in shared memory (a `-shm` file every connection maps), and
that does not work where several machines, or a userspace server, stand between the process
and the disk: SQLite's documentation says WAL does not work over a network filesystem. A store
on such a filesystem has to use a rollback journal instead; this module says when.

Invariants:
- Pure apart from `MountTable.read()`, which reads one file and gives an empty table when it
  cannot (no `/proc`: macOS, Windows, a sandbox). An empty table knows no filesystem, so no
  path counts as network: the caller keeps its default, as before this module existed.
- A path's filesystem is the mount with the longest mount point that contains the path's real
  path (symlinks resolved), the later of two entries on the same point (the one on top). A path
  that does not exist yet is judged by its nearest existing ancestor (that is where its file
  would be created): its symlinks resolved, the missing names kept as they are.
- Mount points are unescaped as the kernel escapes them (`\\040` space, `\\011` tab, `\\012`
  newline, `\\134` backslash: three octal digits after a backslash).
- Network means another machine or a userspace server holds the data: the types in
  `NETWORK_TYPES`, every FUSE filesystem (`fuse`, `fuse.<name>`: sshfs, gcsfuse, s3fs, rclone,
  juicefs, a desktop's portal; SQLite cannot know what a FUSE server does with shared memory
  or locks), and `autofs` (an automounted point not mounted yet is almost always a network
  one). `fuseblk` (ntfs-3g, exfat on a local block device) is local. Guessing network wrongly
  costs only speed (a rollback journal), guessing local wrongly costs a broken store.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["MOUNTS_FILE", "NETWORK_TYPES", "Mount", "MountTable", "is_network_type"]

MOUNTS_FILE = "/proc/self/mounts"

NETWORK_TYPES = frozenset(
    {
        "nfs",
        "nfs4",
        "cifs",
        "smb3",
        "smbfs",
        "ncpfs",
        "afs",
        "coda",
        "9p",  # WSL2's Windows drives, virtual machines' shared folders, gVisor
        "lustre",
        "gpfs",
        "ceph",
        "glusterfs",
        "beegfs",
        "ocfs2",  # shared-disk cluster filesystems: other machines write the same blocks
        "gfs2",
        "davfs",
        "autofs",
    }
)

_ESCAPE = re.compile(r"\\([0-7]{3})")


def is_network_type(fstype: str) -> bool:
    """Whether a filesystem type (as the mount table spells it) keeps data off this machine
    or behind a userspace server (see the module docstring)."""
    return fstype in NETWORK_TYPES or fstype == "fuse" or fstype.startswith("fuse.")


def _unescape(field: str) -> str:
    return _ESCAPE.sub(lambda match: chr(int(match.group(1), 8)), field)


@dataclass(frozen=True, slots=True)
class Mount:
    """One line of the mount table."""

    source: str
    point: str
    fstype: str

    def contains(self, real_path: str) -> bool:
        """Whether `real_path` (absolute, symlinks resolved) lies on or under this point."""
        if self.point == "/":
            return real_path.startswith("/")
        return real_path == self.point or real_path.startswith(self.point.rstrip("/") + "/")


@dataclass(frozen=True, slots=True)
class MountTable:
    """The mounts of this process, in the kernel's order (later entries mount on top)."""

    mounts: tuple[Mount, ...] = ()

    @classmethod
    def parse(cls, text: str) -> MountTable:
        """The table in `text` (the format of `/proc/self/mounts`; malformed lines skipped)."""
        mounts = []
        for line in text.splitlines():
            fields = line.split()
            if len(fields) >= 3:
                mounts.append(Mount(_unescape(fields[0]), _unescape(fields[1]), fields[2]))
        return cls(tuple(mounts))

    @classmethod
    def read(cls, source: str | os.PathLike[str] = MOUNTS_FILE) -> MountTable:
        """This process's mount table; empty when `source` cannot be read."""
        try:
            raw = Path(source).read_bytes()
        except OSError:
            return cls()
        return cls.parse(os.fsdecode(raw))

    def filesystem_of(self, path: str | os.PathLike[str]) -> tuple[str, str] | None:
        """(mount point, filesystem type) of the filesystem `path` is (or would be) on; None
        when no mount contains it (an empty table)."""
        real = _real_path(path)
        best: Mount | None = None
        for mount in self.mounts:
            if mount.contains(real) and (best is None or len(mount.point) >= len(best.point)):
                best = mount
        return None if best is None else (best.point, best.fstype)

    def is_network(self, path: str | os.PathLike[str]) -> bool:
        """Whether `path` is (or would be) on a network filesystem (see the module docstring)."""
        found = self.filesystem_of(path)
        return found is not None and is_network_type(found[1])


def _real_path(path: str | os.PathLike[str]) -> str:
    """`path` made absolute with the symlinks of its nearest existing ancestor resolved, the
    missing rest appended as written (a missing name cannot be a mount point, nor a link)."""
    here, missing = os.path.abspath(path), []
    while not os.path.exists(here) and os.path.dirname(here) != here:
        here, name = os.path.split(here)
        missing.append(name)
    return os.path.join(os.path.realpath(here), *reversed(missing))
