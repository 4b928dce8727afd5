"""The server extension on a hub whose home (so Jupyter's data dir) is on NFS, seen through a
real server with a planted mount table: the default store goes to local disk and says so in
one line; an explicit `store_path` on NFS is used, without WAL."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import pytest
from testkit.rest import Api

from jupyter_hashline.hashline import MountTable, SqliteSnapshotStore

PLACEMENT = "jupyter_hashline: snapshot store"


def nfs_at(folder: Path) -> MountTable:
    return MountTable.parse(
        f"/dev/vda / ext4 rw 0 0\nfiler:/home {os.path.realpath(folder)} nfs4 rw 0 0\n"
    )


class Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@pytest.fixture
def extension_log() -> Lines:
    """What the extension logs, from before its server starts (its traitlets logger does not
    propagate while the server initializes, so caplog does not see it)."""
    return Lines()


@pytest.fixture
def hashline_config(
    request: pytest.FixtureRequest, jp_data_dir: Path, extension_log: Lines
) -> dict[str, Any]:
    """The data dir is NFS, unless the test's param says `local`; `store_in_data_dir` names
    an explicit store file there. The extension's log goes to `extension_log` too."""
    extra = dict(getattr(request, "param", {}))
    local = MountTable.parse("/dev/vda / ext4 rw 0 0\n")
    mounts = local if extra.pop("local", False) else nfs_at(jp_data_dir)
    if "store_in_data_dir" in extra:
        extra["store_path"] = str(jp_data_dir / extra.pop("store_in_data_dir"))
    logging_config = {
        "handlers": {"probe": {"()": lambda: extension_log}},
        "loggers": {"HashlineExtension": {"handlers": ["console", "probe"]}},
    }
    return {"mount_table": mounts, "logging_config": logging_config, **extra}


def store_of(serverapp: Any) -> SqliteSnapshotStore:
    app = serverapp.extension_manager.extension_points["jupyter_hashline"].app
    store = app.service.store
    assert isinstance(store, SqliteSnapshotStore)
    return store


async def test_a_data_dir_on_nfs_puts_the_default_store_in_the_local_runtime_dir(
    api: Api,
    jp_serverapp: Any,
    jp_root_dir: Path,
    jp_data_dir: Path,
    jp_runtime_dir: Path,
    extension_log: Lines,
) -> None:
    store = store_of(jp_serverapp)
    assert store.path is not None
    assert store.path.parent == jp_runtime_dir / "jupyter_hashline"
    assert store.journal_mode == "wal" and store.network_filesystem is None
    (jp_root_dir / "a.py").write_text("x = 1\n")
    status, _ = await api("read", params={"path": "a.py"})
    assert status == 200
    assert store.path.is_file()
    assert not (jp_data_dir / "jupyter_hashline").exists()
    (line,) = [m for m in extension_log.lines if PLACEMENT in m]
    assert str(store.path) in line and "network filesystem (nfs4" in line
    assert "c.HashlineExtension.store_path" in line
    with SqliteSnapshotStore(store.path) as other:  # the file a CLI on this root would open
        assert other.head("a.py") is not None


@pytest.mark.parametrize(
    "hashline_config", [{"store_in_data_dir": "on-nfs.sqlite3"}], indirect=True
)
async def test_an_explicit_store_path_on_nfs_wins_and_opens_without_wal(
    jp_serverapp: Any,
    jp_data_dir: Path,
    caplog: pytest.LogCaptureFixture,
    extension_log: Lines,
) -> None:
    explicit = jp_data_dir / "on-nfs.sqlite3"
    store = store_of(jp_serverapp)
    assert store.path == explicit
    assert store.journal_mode == "delete"
    store.record("a.py", "x = 1\n")
    assert sorted(p.name for p in jp_data_dir.iterdir() if p.name.startswith("on-nfs")) == [
        "on-nfs.sqlite3"
    ]
    assert [m for m in extension_log.lines if PLACEMENT in m] == []
    warnings = [r.getMessage() for r in caplog.get_records("setup")]
    (warning,) = [m for m in warnings if "is on a network filesystem" in m]
    assert str(explicit) in warning and "WAL" in warning


@pytest.mark.parametrize("hashline_config", [{"local": True}], indirect=True)
async def test_a_local_data_dir_keeps_the_store_there_quietly(
    jp_serverapp: Any, jp_data_dir: Path, extension_log: Lines
) -> None:
    store = store_of(jp_serverapp)
    assert store.path is not None and store.path.parent == jp_data_dir / "jupyter_hashline"
    assert store.journal_mode == "wal"
    assert [m for m in extension_log.lines if PLACEMENT in m] == []
    assert any("jupyter_hashline: store SqliteSnapshotStore" in m for m in extension_log.lines)
