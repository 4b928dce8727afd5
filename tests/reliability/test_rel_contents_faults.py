"""A contents manager that fails is mapped to a clear error; nothing is lost or advanced.

Through a real Jupyter server: the server's own contents manager is made to fail (a save
that dies halfway with ENOSPC/EIO inside its atomic writer; a custom backend whose `save` or
`get` raises anything at all). Each REST call answers with the engine's status and kind and a
message naming the file that tells the agent what to do (never a traceback); the file keeps
its bytes, GET snapshots is unchanged, and once the storage recovers the same edit lands.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from testkit.faults import Edit, tree_bytes
from testkit.rest import Api, write_notebook
from tornado.web import HTTPError

TARGETS = [("script.py", 1, "a = 2"), ("nb.ipynb", 2, "a = 2")]
ORACLE = {
    "script.py": Edit("script.py", "replace", 1, "a = 2"),
    "nb.ipynb": Edit("nb.ipynb", "replace", 1, "a = 2", cell=0),
}


class HalfWriter:
    """A file object that lands half of the first write, then fails like a full disk."""

    def __init__(self, inner: Any, code: int) -> None:
        self.inner, self.code = inner, code

    def write(self, data: Any) -> int:
        self.inner.write(data[: max(1, len(data) // 2)])
        raise OSError(self.code, os.strerror(self.code))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def break_atomic_writer(cm: Any, monkeypatch: pytest.MonkeyPatch, code: int) -> list[int]:
    """Make the manager's real atomic writer fail halfway; returns a one-item fault counter."""
    real = cm.atomic_writing
    count = [0]

    @contextlib.contextmanager
    def failing(os_path: str, *args: Any, **kwargs: Any) -> Iterator[Any]:
        with real(os_path, *args, **kwargs) as handle:
            count[0] += 1
            yield HalfWriter(handle, code)

    monkeypatch.setattr(cm, "atomic_writing", failing)
    return count


def setup_files(root: Path) -> None:
    (root / "script.py").write_text("a = 1\n")
    write_notebook(root / "nb.ipynb", "a = 1", outputs=True)


async def snapshots(api: Api) -> dict[str, Any]:
    status, body = await api("snapshots", schema="SnapshotsResponse")
    assert status == 200
    return body


def assert_clear(body: dict[str, Any], path: str) -> None:
    message = body["message"]
    assert path in message, message
    assert "Traceback" not in message and 'File "' not in message


@pytest.mark.parametrize(("path", "line", "new"), TARGETS)
@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EIO])
async def test_save_dying_halfway_keeps_the_file(
    api: Api,
    jp_root_dir: Path,
    jp_serverapp: Any,
    monkeypatch: pytest.MonkeyPatch,
    fault: Any,
    path: str,
    line: int,
    new: str,
    code: int,
) -> None:
    setup_files(jp_root_dir)
    _, read = await api("read", params={"path": path})
    files, snaps = tree_bytes(jp_root_dir), await snapshots(api)
    count = break_atomic_writer(jp_serverapp.contents_manager, monkeypatch, code)
    patch = {"patch": f"{read['header']}\nreplace {line}:\n+{new}\n"}

    with fault(jp_root_dir) as trial:
        status, body = await api("patch", method="POST", body=patch)

        assert count[0] == 1
        assert (status, body["error"]) == (500, "write_failed")
        assert_clear(body, path)
        assert os.strerror(code) in body["message"] and "unchanged" in body["message"]
        assert tree_bytes(jp_root_dir) == files
        assert await snapshots(api) == snaps
        monkeypatch.undo()
        status, body = await api("patch", method="POST", body=patch, schema="PatchResponse")
        assert status == 200 and body["sections"][0]["written"] is True
        trial.acknowledge(ORACLE[path])


SAVE_FAILURES: list[tuple[BaseException, int, str]] = [
    (RuntimeError("backend exploded"), 500, "write_failed"),
    (TimeoutError("storage timed out"), 500, "write_failed"),
    (ConnectionError("object store unreachable"), 500, "write_failed"),
    (HTTPError(500, "quota service down"), 500, "write_failed"),
    (HTTPError(507, "insufficient storage"), 500, "write_failed"),
    (HTTPError(403, "bucket is read-only"), 403, "permission_denied"),
    (PermissionError(errno.EACCES, "Permission denied"), 403, "permission_denied"),
    (OSError(errno.EROFS, "Read-only file system"), 500, "write_failed"),
]


@pytest.mark.parametrize(("path", "line", "new"), TARGETS)
@pytest.mark.parametrize(("error", "status", "kind"), SAVE_FAILURES, ids=repr)
async def test_a_raising_save_is_a_clear_error(
    api: Api,
    jp_root_dir: Path,
    jp_serverapp: Any,
    monkeypatch: pytest.MonkeyPatch,
    fault: Any,
    path: str,
    line: int,
    new: str,
    error: BaseException,
    status: int,
    kind: str,
) -> None:
    setup_files(jp_root_dir)
    _, read = await api("read", params={"path": path})
    files, snaps = tree_bytes(jp_root_dir), await snapshots(api)

    async def save(model: Any, path: str = "") -> Any:
        raise error

    monkeypatch.setattr(jp_serverapp.contents_manager, "save", save)
    patch = {"patch": f"{read['header']}\nreplace {line}:\n+{new}\n"}
    with fault(jp_root_dir) as trial:
        got, body = await api("patch", method="POST", body=patch)
        assert (got, body["error"]) == (status, kind)
        assert_clear(body, path)
        assert tree_bytes(jp_root_dir) == files
        assert await snapshots(api) == snaps
        got, body = await api("write", method="POST", body={"path": "fresh.py", "content": "x\n"})
        assert (got, body["error"]) == (status, kind)
        assert not (jp_root_dir / "fresh.py").exists()
        monkeypatch.undo()
        got, body = await api("patch", method="POST", body=patch)
        assert got == 200, body
        trial.acknowledge(ORACLE[path])


GET_FAILURES: list[tuple[BaseException, int, str]] = [
    (RuntimeError("backend exploded"), 500, "storage_error"),
    (OSError(errno.EIO, "Input/output error"), 500, "storage_error"),
    (HTTPError(500, "upstream failed"), 500, "storage_error"),
    (HTTPError(403, "no access"), 403, "permission_denied"),
    (HTTPError(404, "gone"), 404, "not_found"),
    (FileNotFoundError(errno.ENOENT, "gone"), 404, "not_found"),
]


@pytest.mark.parametrize(("error", "status", "kind"), GET_FAILURES, ids=repr)
async def test_a_raising_get_is_a_clear_error_for_every_file_route(
    api: Api,
    jp_root_dir: Path,
    jp_serverapp: Any,
    monkeypatch: pytest.MonkeyPatch,
    fault: Any,
    error: BaseException,
    status: int,
    kind: str,
) -> None:
    setup_files(jp_root_dir)
    _, read = await api("read", params={"path": "nb.ipynb"})
    files, snaps = tree_bytes(jp_root_dir), await snapshots(api)

    async def get(path: str, **kwargs: Any) -> Any:
        raise error

    monkeypatch.setattr(jp_serverapp.contents_manager, "get", get)
    calls: list[tuple[str, dict[str, Any]]] = [
        ("read", {"params": {"path": "nb.ipynb"}}),
        ("outputs", {"params": {"path": "nb.ipynb", "cell": "cell-0"}}),
        (
            "patch",
            {"method": "POST", "body": {"patch": f"{read['header']}\nreplace 2:\n+a = 2\n"}},
        ),
        ("write", {"method": "POST", "body": {"path": "nb.ipynb", "content": "# %% [code]\n"}}),
    ]
    with fault(jp_root_dir):
        for route, kwargs in calls:
            got, body = await api(route, **kwargs)
            assert (got, body["error"]) == (status, kind), (route, body)
            assert_clear(body, "nb.ipynb")
    assert tree_bytes(jp_root_dir) == files
    assert await snapshots(api) == snaps


async def test_a_new_file_in_a_missing_folder_is_a_clear_404(api: Api, jp_root_dir: Path) -> None:
    """Contents managers do not create folders on save: say so instead of failing with 500."""
    for path in ("no/such/folder/new.py", "missing/new.ipynb"):
        status, body = await api("write", method="POST", body={"path": path, "content": "x\n"})
        assert (status, body["error"]) == (404, "not_found")
        assert "does not exist" in body["message"] and str(jp_root_dir) not in body["message"]
    assert not (jp_root_dir / "no").exists() and not (jp_root_dir / "missing").exists()
