"""`ContentsFilesystem`: the engine's storage seam over a Jupyter contents manager."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import nbformat
import pytest
from jupyter_server.services.contents.filecheckpoints import AsyncFileCheckpoints
from jupyter_server.services.contents.filemanager import (
    AsyncFileContentsManager,
    FileContentsManager,
)
from jupytext import TextFileContentsManager
from tornado.web import HTTPError

from jupyter_hashline.hashline.callscope import call_scope
from jupyter_hashline.hashline.errors import (
    HashlineError,
    NotFoundError,
    NotTextError,
    PathOutsideRootError,
    TooLargeError,
    WriteFailedError,
)
from jupyter_hashline.notebook import InvalidNotebookError
from jupyter_hashline.server.adapters.contents_fs import ContentsFilesystem, _names_jupytext
from jupyter_hashline.server.errors import (
    BadRequestError,
    HiddenPathError,
    PathNotAllowedError,
    PermissionDeniedError,
    ReadOnlyError,
)


def notebook_text(*sources: str, formats: str | None = None) -> str:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s, id=f"c{i}") for i, s in enumerate(sources)]
    if formats:
        nb.metadata["jupytext"] = {"formats": formats}
    return nbformat.writes(nb) + "\n"


@pytest.fixture(params=["async", "sync"])
def manager(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    root = tmp_path / "root"
    root.mkdir()
    cls = AsyncFileContentsManager if request.param == "async" else FileContentsManager
    return cls(root_dir=str(root))


def root_of(manager: Any) -> Path:
    return Path(manager.root_dir)


async def test_text_round_trip_keeps_raw_text(manager: Any) -> None:
    fs = ContentsFilesystem(manager)
    raw = "\ufeffline one\r\nline two\r\n"
    landed = await fs.write_text("/dir-less.txt", raw)
    assert landed.text == raw
    assert await fs.read_text("dir-less.txt") == raw
    assert (root_of(manager) / "dir-less.txt").read_bytes() == raw.encode()
    assert await fs.exists("dir-less.txt")
    assert not await fs.exists("missing.txt")


async def test_notebooks_are_saved_byte_for_byte_with_their_checkpoint(manager: Any) -> None:
    fs = ContentsFilesystem(manager)
    text = notebook_text("x = 1")
    assert text.endswith("}\n")
    landed = await fs.write_text("fresh.ipynb", text)
    assert landed.text == text == (root_of(manager) / "fresh.ipynb").read_text()
    checkpoints = manager.list_checkpoints("fresh.ipynb")
    if hasattr(checkpoints, "__await__"):
        checkpoints = await checkpoints
    assert len(checkpoints) == 1  # as the first save of a notebook model makes one


@pytest.mark.parametrize("how", ["text", "bytes"])
async def test_every_save_keeps_one_checkpoint_as_jupyters_own_does(manager: Any, how: str) -> None:
    """A save keeps the checkpoint there is (a person's restore point), and makes one when
    there is none (deleted meanwhile), whichever way the notebook is stored."""
    fs = ContentsFilesystem(manager)

    async def save(source: str) -> None:
        text = notebook_text(source)
        if how == "text":
            await fs.write_text("nb.ipynb", text)
        else:
            await fs.write_bytes("nb.ipynb", text.encode())

    await save("x = 1")
    checkpoint = Path(manager.checkpoints.checkpoint_path("checkpoint", "nb.ipynb"))
    assert '"x = 1"' in checkpoint.read_text()
    await save("x = 2")
    assert '"x = 1"' in checkpoint.read_text()  # kept: a later save never moves it
    checkpoint.unlink()
    await save("x = 3")
    assert '"x = 3"' in checkpoint.read_text()  # none left: made anew, as Jupyter's save does


async def test_checkpoints_kept_another_way_are_listed_through_the_manager(tmp_path: Path) -> None:
    """A checkpoints class of its own (here a subclass of Jupyter's) is asked whether the
    notebook has a checkpoint, never second-guessed by looking for Jupyter's file."""
    asked: list[str] = []

    class Recorded(AsyncFileCheckpoints):
        async def list_checkpoints(self, path: str) -> list[dict[str, Any]]:
            asked.append(path)
            return [{"id": "elsewhere", "last_modified": None}]

    manager = AsyncFileContentsManager(root_dir=str(tmp_path), checkpoints_class=Recorded)
    fs = ContentsFilesystem(manager)
    await fs.write_bytes("nb.ipynb", notebook_text("x = 1").encode())
    assert asked == ["nb.ipynb"]
    assert not Path(manager.checkpoints.checkpoint_path("checkpoint", "nb.ipynb")).exists()


async def test_notebooks_are_saved_as_notebook_models_when_hooks_run(manager: Any) -> None:
    seen: list[str] = []
    manager.pre_save_hook = lambda model, path, contents_manager: seen.append(model["type"])
    fs = ContentsFilesystem(manager)
    text = notebook_text("x = 1")
    landed = await fs.write_text("nb.ipynb", text)
    assert seen == ["notebook"]
    assert landed.text == (root_of(manager) / "nb.ipynb").read_text()
    assert nbformat.reads(landed.text, as_version=4).cells[0].source == "x = 1"
    await fs.write_text("plain.py", "print(1)\n")
    assert seen == ["notebook", "file"]


async def test_jupytext_pairing_runs_on_save(tmp_path: Path) -> None:
    manager = TextFileContentsManager(root_dir=str(tmp_path))
    fs = ContentsFilesystem(manager)
    await fs.write_text("paired.ipynb", notebook_text("y = 2", formats="ipynb,py:percent"))
    paired = (tmp_path / "paired.py").read_text()
    assert "# %%\ny = 2" in paired
    raw = await fs.read_text("paired.ipynb")
    assert nbformat.reads(raw, as_version=4).cells[0].source == "y = 2"
    assert await fs.read_text("paired.py") == paired  # text files stay text, not notebooks


@pytest.mark.parametrize("raw", ["../x.txt", "a/../../x.txt", "%2e%2e/x.txt"])
async def test_escapes_are_refused(manager: Any, raw: str) -> None:
    fs = ContentsFilesystem(manager)
    with pytest.raises(PathOutsideRootError):
        await fs.read_text(raw)
    with pytest.raises(PathOutsideRootError):
        await fs.write_text(raw, "x\n")
    assert not (root_of(manager).parent / "x.txt").exists()


async def test_symlinks_out_of_the_root_are_refused(manager: Any, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "s.txt").write_text("secret\n")
    os.symlink(outside, root_of(manager) / "link")
    fs = ContentsFilesystem(manager)
    with pytest.raises(PathOutsideRootError, match="symlink"):
        await fs.read_text("link/s.txt")
    with pytest.raises(PathOutsideRootError):
        await fs.write_text("link/s.txt", "overwritten\n")
    assert (outside / "s.txt").read_text() == "secret\n"


async def test_symlinks_inside_share_one_canonical_path(manager: Any) -> None:
    (root_of(manager) / "real.txt").write_text("r\n")
    os.symlink(root_of(manager) / "real.txt", root_of(manager) / "alias.txt")
    fs = ContentsFilesystem(manager)
    assert await fs.canonical_path("/alias.txt") == "real.txt"
    assert await fs.canonical_path("real.txt") == "real.txt"


async def test_hidden_files_follow_the_server(manager: Any) -> None:
    (root_of(manager) / ".secret").write_text("token\n")
    with pytest.raises(HiddenPathError, match="allow_hidden"):
        await ContentsFilesystem(manager).read_text(".secret")
    with pytest.raises(HiddenPathError):
        await ContentsFilesystem(manager).write_text(".config/x.txt", "x\n")
    manager.allow_hidden = True
    assert await ContentsFilesystem(manager).read_text(".secret") == "token\n"


async def test_allowed_paths_and_read_only(manager: Any) -> None:
    (root_of(manager) / "work").mkdir()
    (root_of(manager) / "other.txt").write_text("o\n")
    fs = ContentsFilesystem(manager, allowed_paths=("work",))
    await fs.write_text("work/a.txt", "a\n")
    with pytest.raises(PathNotAllowedError, match="work"):
        await fs.read_text("other.txt")
    frozen = ContentsFilesystem(manager, read_only=True)
    assert await frozen.read_text("other.txt") == "o\n"
    with pytest.raises(ReadOnlyError):
        await frozen.preflight_write("other.txt")
    with pytest.raises(ReadOnlyError):
        await frozen.write_text("other.txt", "x\n")
    assert (root_of(manager) / "other.txt").read_text() == "o\n"


async def test_read_only_files_are_not_written(manager: Any) -> None:
    target = root_of(manager) / "locked.txt"
    target.write_text("keep\n")
    target.chmod(0o444)
    fs = ContentsFilesystem(manager)
    with pytest.raises(PermissionDeniedError, match="read-only"):
        await fs.preflight_write("locked.txt")
    with pytest.raises(PermissionDeniedError):
        await fs.write_text("locked.txt", "changed\n")
    assert target.read_text() == "keep\n"


async def test_a_passed_preflight_holds_for_the_rest_of_one_engine_call(
    manager: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An edit checks before it prepares and again before it lands: within one call the
    contents manager is asked once; the next call asks again, and refusals are never kept."""
    (root_of(manager) / "a.txt").write_text("a\n")
    asked: list[str] = []
    original = manager.get

    def counted(path: str, *args: Any, **kwargs: Any) -> Any:
        asked.append(path)
        return original(path, *args, **kwargs)

    monkeypatch.setattr(manager, "get", counted)
    fs = ContentsFilesystem(manager)
    with call_scope():
        await fs.preflight_write("a.txt")
        await fs.preflight_write("a.txt")
    assert asked == ["a.txt"]
    await fs.preflight_write("a.txt")
    await fs.preflight_write("a.txt")
    assert asked == ["a.txt"] * 3
    (root_of(manager) / "a.txt").chmod(0o444)
    with call_scope():
        for _ in range(2):
            with pytest.raises(PermissionDeniedError):
                await fs.preflight_write("a.txt")


@pytest.mark.parametrize("jupytext_over_it", [False, True])
async def test_a_stock_manager_is_not_asked_to_preflight_a_write(
    manager: Any, jupytext_over_it: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stock manager (or jupytext's over one) says a file exists and is writable from the
    disk alone: the disk is asked directly, with the same answers, and no model is built."""
    if jupytext_over_it:
        manager = TextFileContentsManager(root_dir=manager.root_dir)
    (root_of(manager) / "a.txt").write_text("a\n")
    (root_of(manager) / "folder").mkdir()
    asked: list[str] = []
    for cls in [c for c in type(manager).__mro__[:2] if "get" in vars(c)]:
        original = cls.get

        def counted(self: Any, path: str, *a: Any, _original: Any = original, **k: Any) -> Any:
            asked.append(path)
            return _original(self, path, *a, **k)

        monkeypatch.setattr(cls, "get", counted)
    fs = ContentsFilesystem(manager)
    await fs.preflight_write("a.txt")
    await fs.preflight_write("folder/new.txt")
    with pytest.raises(NotFoundError, match="does not exist"):
        await fs.preflight_write("missing/new.txt")
    assert asked == []
    with monkeypatch.context() as denied:  # what `writable: false` in the model would say
        denied.setattr(os, "access", lambda *args, **kwargs: False)
        with pytest.raises(PermissionDeniedError, match="not writable on this server"):
            await fs.preflight_write("a.txt")


async def test_content_checks_come_before_any_write(manager: Any) -> None:
    fs = ContentsFilesystem(manager, max_file_bytes=64)
    with pytest.raises(NotTextError, match="NUL"):
        await fs.write_text("n.txt", "a\x00b")
    with pytest.raises(TooLargeError, match="64 bytes"):
        await fs.write_text("big.txt", "é" * 40)
    with pytest.raises(InvalidNotebookError, match="not JSON"):
        await fs.write_text("bad.ipynb", "# %% [code]\nnot json")
    assert sorted(p.name for p in root_of(manager).iterdir()) == []
    (root_of(manager) / "huge.txt").write_text("x" * 100)
    with pytest.raises(TooLargeError):
        await fs.read_text("huge.txt")


async def test_read_errors_are_engine_errors(manager: Any) -> None:
    (root_of(manager) / "bin.dat").write_bytes(b"\xff\xfe\x00binary")
    (root_of(manager) / "folder").mkdir()
    fs = ContentsFilesystem(manager)
    with pytest.raises(NotFoundError, match=r"File not found: nope\.txt"):
        await fs.read_text("nope.txt")
    with pytest.raises(NotTextError, match=r"UTF-8"):
        await fs.read_text("bin.dat")
    with pytest.raises(BadRequestError, match="directory"):
        await fs.read_text("folder")
    with pytest.raises(WriteFailedError, match="unchanged"):
        await fs.write_text("no/such/dir/x.txt", "x\n")


class RefusingManager(AsyncFileContentsManager):
    """Stands in for a storage backend that refuses or fails saves."""

    status = 403

    async def save(self, model: dict[str, Any], path: str = "") -> dict[str, Any]:
        raise HTTPError(self.status, f"backend said no to {path}")


@pytest.mark.parametrize(
    ("status", "error"),
    [(403, PermissionDeniedError), (400, BadRequestError), (500, WriteFailedError)],
)
async def test_http_errors_map_to_the_error_tree(
    tmp_path: Path, status: int, error: type[HashlineError]
) -> None:
    manager = RefusingManager(root_dir=str(tmp_path))
    manager.status = status
    with pytest.raises(error, match="backend said no"):
        await ContentsFilesystem(manager).write_text("a.txt", "x\n")


async def test_a_notebook_torn_by_a_dead_save_reads_as_the_previous_one(manager: Any) -> None:
    """Jupyter's atomic writer keeps the previous file as `.~<name>` while it overwrites the
    target; a server killed in between leaves the target torn. The read serves the previous
    notebook and touches nothing; without that intermediate the torn text is what it is."""
    root, fs = root_of(manager), ContentsFilesystem(manager)
    old, new = notebook_text("a = 1"), notebook_text("a = 2")
    (root / "nb.ipynb").write_text(new[: len(new) // 2])
    assert await fs.read_text("nb.ipynb") == new[: len(new) // 2]
    (root / ".~nb.ipynb").write_text(old)
    assert await fs.read_text("nb.ipynb") == old
    assert (root / "nb.ipynb").read_text() == new[: len(new) // 2]  # untouched
    (root / "nb.ipynb").write_text(new)  # a whole target is read as it is
    assert await fs.read_text("nb.ipynb") == new


def test_only_the_notebooks_own_metadata_pairs_it_in_nbformats_layout() -> None:
    def file(top: dict[str, Any], cell: dict[str, Any], indent: int | None = None) -> bytes:
        nb = nbformat.v4.new_notebook(metadata=top)
        nb.cells.append(nbformat.v4.new_code_cell("x = 1", metadata=cell))
        text = nbformat.writes(nb) if indent is None else json.dumps(nb, indent=indent)
        return text.encode("utf-8")

    paired = {"jupytext": {"formats": "ipynb,py:percent"}}
    assert _names_jupytext(file(paired, {}))
    assert not _names_jupytext(file({}, {}))
    assert not _names_jupytext(file({}, {"jupytext": {"x": 1}}))  # a cell's, in nbformat's layout
    assert _names_jupytext(file({}, {"jupytext": {"x": 1}}, indent=2))  # elsewhere: in doubt
    assert _names_jupytext(file(paired, {}, indent=2))
