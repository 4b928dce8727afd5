"""Agent edits into a notebook open in a collaborative room (issue 6), through a real server.

The server runs jupyter_hashline with jupyter-collaboration (jupyter_server_ydoc + fileid). The
"person" is a real Yjs client on the room's websocket, as JupyterLab is: their typing reaches
the server's shared document as updates and is unsaved until the room saves.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat
import pytest
from jupyter_server_ydoc.rooms import DocumentRoom
from jupyter_server_ydoc.utils import JUPYTER_COLLABORATION_EVENTS_URI
from jupyter_ydoc import YNotebook
from testkit.rest import Api, read_view, write_notebook
from testkit.rooms import OpenInLab, until
from traitlets.config import Config

from jupyter_hashline.hashline import section_tag
from jupyter_hashline.notebook import project_notebook
from jupyter_hashline.server.adapters.live import LiveWriteGuard

NB = "work/analysis.ipynb"


@pytest.fixture
def jp_server_config(collaboration_server_config: Config) -> Config:
    return collaboration_server_config


@pytest.fixture
def room_events(jp_serverapp: Any) -> list[str]:
    """Actions the collaboration rooms report ('overwrite' = reloaded from disk)."""
    actions: list[str] = []

    async def listener(logger: Any, schema_id: str, data: dict[str, Any]) -> None:
        actions.append(str(data.get("action", "")))

    jp_serverapp.event_logger.add_listener(
        schema_id=JUPYTER_COLLABORATION_EVENTS_URI, listener=listener
    )
    return actions


def server_room(jp_serverapp: Any) -> Any:
    """The server's one open notebook room."""
    rooms = jp_serverapp.web_app.settings["jupyter_server_ydoc"].ywebsocket_server.rooms
    [room] = [r for key, r in rooms.items() if key.startswith("json:notebook:")]
    return room


def server_document(jp_serverapp: Any) -> YNotebook:
    document: YNotebook = server_room(jp_serverapp)._document
    return document


def file_loader(jp_serverapp: Any) -> Any:
    """The file loader (disk bookkeeping and watcher) of the room's notebook, NB."""
    settings = jp_serverapp.web_app.settings
    return settings["jupyter_server_ydoc"].file_loaders[settings["file_id_manager"].get_id(NB)]


@dataclass
class Polls:
    completed: int = 0
    saw_change: int = 0  # polls that found the file newer than the room's copy


def watcher_polls(jp_serverapp: Any) -> Polls:
    """Count, from now on, the polls of the open notebook's file watcher and those that found
    the file changed on disk (after which the room reloads and drops unsaved typing)."""
    loader = file_loader(jp_serverapp)
    polls, real = Polls(), loader.maybe_notify

    async def counted() -> None:
        seen = loader.last_modified
        await real()
        polls.completed += 1
        polls.saw_change += int(seen is not None and loader.last_modified != seen)

    loader.maybe_notify = counted
    return polls


def source(document: YNotebook, index: int) -> str:
    return str(document.ycells[index]["source"])


def disk_sources(path: Path) -> list[str]:
    return [cell.source for cell in nbformat.read(path, as_version=4).cells]


def saved_notebook(path: Path) -> Any:
    """The notebook on disk, or None while the file is not a whole notebook (being saved)."""
    try:
        return nbformat.read(path, as_version=4)
    except (nbformat.reader.NotJSONError, ValueError):
        return None


def type_into(person: YNotebook, index: int, at: int, text: str) -> None:
    """A keystroke burst in JupyterLab (pycrdt offsets are UTF-8 bytes; tests type ASCII)."""
    person.ycells[index]["source"].insert(at, text)


async def read(api: Api, path: str = NB) -> dict[str, Any]:
    return await read_view(api, path)


async def patch(api: Api, text: str) -> tuple[int, dict[str, Any]]:
    return await api("patch", method="POST", body={"patch": text})


async def test_patch_lands_live_and_the_persons_unsaved_typing_survives(
    api: Api, jp_root_dir: Path, jp_serverapp: Any, open_in_lab: OpenInLab, room_events: list[str]
) -> None:
    write_notebook(jp_root_dir / NB, "a = 1", "b = 2")
    async with open_in_lab(NB) as person:
        type_into(person, 0, 5, "  # typed, not saved")
        shared = server_document(jp_serverapp)
        await until(lambda: "typed" in source(shared, 0), "the keystrokes to reach the server")
        assert "typed" not in disk_sources(jp_root_dir / NB)[0]
        header = (await read(api))["header"]
        status, body = await patch(api, f"{header}\nreplace 4:\n+b = 20\n")
        assert status == 200, body
        assert source(shared, 0) == "a = 1  # typed, not saved"
        assert source(shared, 1) == "b = 20"
        await until(lambda: source(person, 1) == "b = 20", "the edit to reach JupyterLab")
        assert source(person, 0) == "a = 1  # typed, not saved"
        assert disk_sources(jp_root_dir / NB) == ["a = 1  # typed, not saved", "b = 20"]
        # the room's file watcher is what would reload it from disk: three of its polls after
        # the save have seen the file, and none found it changed behind the room's back
        polls = watcher_polls(jp_serverapp)
        await until(lambda: polls.completed >= 3, "three file-watcher polls after the save")
        assert polls.saw_change == 0
        assert "overwrite" not in room_events
        assert source(person, 0) == "a = 1  # typed, not saved"
    service = jp_serverapp.web_app.settings["jupyter_hashline_service"]
    assert isinstance(service.filesystem.guard, LiveWriteGuard)


async def test_a_save_the_room_drops_for_a_newer_change_is_made_again(
    api: Api, jp_root_dir: Path, jp_serverapp: Any, open_in_lab: OpenInLab
) -> None:
    """A change reaching the room while it saves (a keystroke; JupyterLab marking the document
    dirty) schedules a newer save, which cancels the running one, and that one then ends
    quietly as if done. The edit's save is made again: the reply's file holds the edit. (The
    room saves the edit itself when the manager has a save hook: it must run.)"""
    jp_serverapp.contents_manager.register_pre_save_hook(lambda **kwargs: None)
    write_notebook(jp_root_dir / NB, "a = 1", "b = 2")
    async with open_in_lab(NB) as person:
        type_into(person, 0, 5, "  # typed, not saved")
        shared = server_document(jp_serverapp)
        await until(lambda: "typed" in source(shared, 0), "the keystrokes to reach the server")
        loader = file_loader(jp_serverapp)
        real, saves = loader.maybe_save_content, {"dropped": 0, "done": 0}

        async def interrupted(model: dict[str, Any]) -> Any:
            if not saves["dropped"]:
                saves["dropped"] += 1
                shared.dirty = True  # a change mid-save: the room schedules a newer save
                await asyncio.sleep(0.5)  # cancelled here, before writing anything
            saves["done"] += 1
            return await real(model)

        loader.maybe_save_content = interrupted
        header = (await read(api))["header"]
        status, body = await patch(api, f"{header}\nreplace 4:\n+b = 20\n")
        assert status == 200, body
        assert saves == {"dropped": 1, "done": 1}
        assert disk_sources(jp_root_dir / NB) == ["a = 1  # typed, not saved", "b = 20"]
        on_disk = nbformat.read(jp_root_dir / NB, as_version=4)
        assert body["sections"][0]["tag"] == section_tag(project_notebook(on_disk))


async def test_the_edit_is_saved_as_built_and_the_room_neither_saves_it_again_nor_reloads(
    api: Api, jp_root_dir: Path, jp_serverapp: Any, open_in_lab: OpenInLab, room_events: list[str]
) -> None:
    """With the stock manager the edit's reply writes the document's bytes itself, off the
    event loop, and tells the room its file is current: the room's autosave of the edit is
    called off (it would convert and save the whole document on the loop), its watcher sees
    no change on disk, and the document is clean with the file's hash. A person's typing
    after the reply is still saved by the room."""
    write_notebook(jp_root_dir / NB, "a = 1", "b = 2")
    async with open_in_lab(NB) as person:
        type_into(person, 0, 5, "  # typed, not saved")
        shared = server_document(jp_serverapp)
        await until(lambda: "typed" in source(shared, 0), "the keystrokes to reach the server")
        loader, room = file_loader(jp_serverapp), server_room(jp_serverapp)
        real, room_saves = loader.maybe_save_content, []

        async def counted(model: dict[str, Any]) -> Any:
            room_saves.append([cell["source"] for cell in model["content"]["cells"]])
            return await real(model)

        loader.maybe_save_content = counted
        header = (await read(api))["header"]
        status, body = await patch(api, f"{header}\nreplace 4:\n+b = 20\n")
        assert status == 200, body
        want = ["a = 1  # typed, not saved", "b = 20"]
        assert disk_sources(jp_root_dir / NB) == want  # durable when acknowledged
        assert not any("JupyterLab" in note for note in body["sections"][0]["notes"]), body
        edits_save = room._saving_document
        await until(edits_save.done, "the room's autosave scheduled by the edit to end")
        assert room_saves == []  # called off: the file holds it already
        data = (jp_root_dir / NB).read_bytes()
        assert shared.dirty is False
        assert shared.hash == hashlib.sha256(data).hexdigest()
        polls = watcher_polls(jp_serverapp)
        await until(lambda: polls.completed >= 3, "three file-watcher polls after the save")
        assert polls.saw_change == 0
        assert "overwrite" not in room_events
        type_into(person, 1, 6, "0")
        await until(
            lambda: source(shared, 1) == "b = 200", "the next keystroke to reach the server"
        )

        def typing_saved() -> bool:
            on_disk = saved_notebook(jp_root_dir / NB)
            return on_disk is not None and on_disk.cells[1].source == "b = 200"

        await until(typing_saved, "the room's own save of the person's typing", 15.0)
        assert room_saves and room_saves[-1][1] == "b = 200"
        assert source(person, 0) == "a = 1  # typed, not saved"


async def test_the_room_saves_when_the_file_changed_on_disk_behind_it(
    jp_root_dir: Path, jp_serverapp: Any, open_in_lab: OpenInLab
) -> None:
    """`save_as` writes nothing when the file on disk is not the one the room last loaded or
    saved: the room's own save must meet that change (it reloads, as it does for any)."""
    from jupyter_hashline.server.adapters.live_rooms import LiveRoom

    write_notebook(jp_root_dir / NB, "a = 1")
    async with open_in_lab(NB):
        room, loader = server_room(jp_serverapp), file_loader(jp_serverapp)
        live = LiveRoom("json:notebook:x", room, room._document)
        writes: list[bytes] = []

        async def write() -> None:
            writes.append(b"written")

        loader.last_modified = loader.last_modified.replace(year=2001)  # a change behind it
        assert not await live.save_as(b"{}", write, None, lambda: True)
        assert writes == []
        loader.last_modified = (await jp_serverapp.contents_manager.get(NB, content=False))[
            "last_modified"
        ]
        assert await live.save_as(b"{}", write, None, lambda: False)  # planted: it can write
        assert writes == [b"written"]


async def test_landed_text_is_the_projection_of_the_file_on_disk(
    api: Api, jp_root_dir: Path, open_in_lab: OpenInLab
) -> None:
    write_notebook(jp_root_dir / NB, "import math", "x = math.pi\nprint(x)")
    async with open_in_lab(NB) as person:
        type_into(person, 0, 0, "# note\n")
        header = (await read(api))["header"]
        status, body = await patch(
            api, f"{header}\ninsert after 6:\n+# %% [markdown]\n+Done: **é** ✓\n"
        )
        assert status == 200, body
        on_disk = nbformat.read(jp_root_dir / NB, as_version=4)
        assert body["sections"][0]["tag"] == section_tag(project_notebook(on_disk))
        assert [c.cell_type for c in on_disk.cells] == ["code", "code", "markdown"]
        assert on_disk.cells[2].source == "Done: **é** ✓"
        assert (await read(api))["tag"] == body["sections"][0]["tag"]


async def test_same_cell_other_lines_both_changes_survive(
    api: Api, jp_root_dir: Path, jp_serverapp: Any, open_in_lab: OpenInLab
) -> None:
    write_notebook(jp_root_dir / NB, "x = 1\ny = 2\nz = 3")
    async with open_in_lab(NB) as person:
        header = (await read(api))["header"]
        type_into(person, 0, 5, "  # person")  # line 1 of the cell, after the agent's read
        shared = server_document(jp_serverapp)
        await until(lambda: "person" in source(shared, 0), "the keystrokes to reach the server")
        status, body = await patch(api, f"{header}\nreplace 4:\n+z = 30\n")
        assert status == 200, body
        assert "recovered" in body["text"]
        assert source(shared, 0) == "x = 1  # person\ny = 2\nz = 30"
        await until(lambda: source(person, 0) == source(shared, 0), "JupyterLab to catch up")
        assert disk_sources(jp_root_dir / NB) == ["x = 1  # person\ny = 2\nz = 30"]


async def test_same_line_is_rejected_with_the_current_cell(
    api: Api, jp_root_dir: Path, jp_serverapp: Any, open_in_lab: OpenInLab
) -> None:
    write_notebook(jp_root_dir / NB, "x = 1\ny = 2\nz = 3")
    before = (jp_root_dir / NB).read_bytes()
    async with open_in_lab(NB) as person:
        header = (await read(api))["header"]
        type_into(person, 0, 11, "22")  # "y = 2" -> "y = 222": the line the agent edits
        shared = server_document(jp_serverapp)
        await until(lambda: "222" in source(shared, 0), "the keystrokes to reach the server")
        status, body = await patch(api, f"{header}\nreplace 3:\n+y = 5\n")
        assert status == 409, body
        assert "y = 222" in body["message"]
        assert source(shared, 0) == "x = 1\ny = 222\nz = 3"
        assert source(person, 0) == "x = 1\ny = 222\nz = 3"
    assert (jp_root_dir / NB).read_bytes() == before or "y = 222" in (jp_root_dir / NB).read_text()


async def test_typing_between_read_and_write_is_never_overwritten(
    api: Api, jp_root_dir: Path, jp_serverapp: Any, open_in_lab: OpenInLab
) -> None:
    """A keystroke that lands while the edit is being prepared: the edit is retried (stale,
    recovered cell by cell) instead of merging into text the patcher never saw."""
    write_notebook(jp_root_dir / NB, "a = 1", "b = 2")
    service = jp_serverapp.web_app.settings["jupyter_hashline_service"]
    inner = service.filesystem.inner
    real_preflight = inner.preflight_write
    calls: list[str] = []

    async with open_in_lab(NB):
        shared = server_document(jp_serverapp)

        async def preflight_with_typing(path: str) -> None:
            calls.append(path)
            if len(calls) == 2:  # the write's own preflight, after the patcher's
                shared.ycells[0]["source"].insert(5, "  # mid-edit")
            await real_preflight(path)

        inner.preflight_write = preflight_with_typing
        header = (await read(api))["header"]
        status, body = await patch(api, f"{header}\nreplace 4:\n+b = 3\n")
        assert status == 200, body
        assert len(calls) > 2  # retried
        assert [source(shared, 0), source(shared, 1)] == ["a = 1  # mid-edit", "b = 3"]
        assert disk_sources(jp_root_dir / NB) == ["a = 1  # mid-edit", "b = 3"]


async def test_a_persons_erasing_in_the_room_is_seen_by_the_next_read(
    api: Api, jp_root_dir: Path, jp_serverapp: Any, open_in_lab: OpenInLab
) -> None:
    """A pure deletion leaves the document's state vector as it was: the next read still sees
    it (it is not served the text cached before)."""
    write_notebook(jp_root_dir / NB, "a = 1  # note", "b = 2")
    async with open_in_lab(NB) as person:
        first = await read(api)
        assert "a = 1  # note" in first["view"]
        del person.ycells[0]["source"][5:13]  # the person erases "  # note"
        shared = server_document(jp_serverapp)
        await until(lambda: source(shared, 0) == "a = 1", "the erasing to reach the server")
        again = await read(api)
        assert again["tag"] != first["tag"]
        assert "2:a = 1\n" in again["view"] and "# note" not in again["view"]
        status, body = await patch(api, f"{first['header']}\nreplace 4:\n+b = 20\n")
        assert status == 200, body
        assert [source(shared, 0), source(shared, 1)] == ["a = 1", "b = 20"]


async def test_a_cell_deleted_between_read_and_write_is_never_written_over(
    api: Api, jp_root_dir: Path, jp_serverapp: Any, open_in_lab: OpenInLab
) -> None:
    """A person deletes a cell while the edit is being prepared (a pure deletion): the edit
    is retried against the document as it is, and lands on the cell it named."""
    write_notebook(jp_root_dir / NB, "a = 1", "b = 2")
    service = jp_serverapp.web_app.settings["jupyter_hashline_service"]
    inner = service.filesystem.inner
    real_preflight = inner.preflight_write
    calls: list[str] = []

    async with open_in_lab(NB):
        shared = server_document(jp_serverapp)

        async def preflight_with_deletion(path: str) -> None:
            calls.append(path)
            if len(calls) == 2:  # the write's own preflight, after the patcher's
                del shared.ycells[0]
            await real_preflight(path)

        inner.preflight_write = preflight_with_deletion
        header = (await read(api))["header"]
        status, body = await patch(api, f"{header}\nreplace 4:\n+b = 3\n")
        assert status == 200, body
        assert len(calls) > 2  # retried
        assert [source(shared, n) for n in range(len(shared.ycells))] == ["b = 3"]
        assert disk_sources(jp_root_dir / NB) == ["b = 3"]


async def test_without_a_room_nothing_is_registered_or_opened(
    api: Api, jp_root_dir: Path, jp_serverapp: Any
) -> None:
    write_notebook(jp_root_dir / NB, "a = 1")
    header = (await read(api))["header"]
    status, _ = await patch(api, f"{header}\nreplace 2:\n+a = 2\n")
    assert status == 200
    assert disk_sources(jp_root_dir / NB) == ["a = 2"]
    settings = jp_serverapp.web_app.settings
    assert settings["file_id_manager"].get_id(NB) is None
    assert not settings["jupyter_server_ydoc"].ywebsocket_server.rooms


async def test_a_missing_save_hook_degrades_to_the_contents_path(
    api: Api,
    jp_root_dir: Path,
    jp_serverapp: Any,
    open_in_lab: OpenInLab,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.delattr(DocumentRoom, "_save_to_disc")
    service = jp_serverapp.web_app.settings["jupyter_hashline_service"]
    monkeypatch.setattr(service.filesystem.inner.rooms, "_log", logging.getLogger("hashline-t"))
    write_notebook(jp_root_dir / NB, "a = 1", "b = 2")
    async with open_in_lab(NB):
        shared = server_document(jp_serverapp)
        with caplog.at_level(logging.WARNING, logger="hashline-t"):
            header = (await read(api))["header"]
            status, body = await patch(api, f"{header}\nreplace 4:\n+b = 20\n")
        assert status == 200, body
        assert disk_sources(jp_root_dir / NB) == ["a = 1", "b = 20"]
        assert any("_save_to_disc" in r.getMessage() for r in caplog.records)
        await until(lambda: source(shared, 1) == "b = 20", "the room to reload from disk")


@pytest.mark.parametrize("hashline_config", [{"live_save": "room"}], indirect=True)
async def test_live_save_room_replies_from_the_room_and_the_room_saves_it(
    api: Api, jp_root_dir: Path, jp_serverapp: Any, open_in_lab: OpenInLab, room_events: list[str]
) -> None:
    write_notebook(jp_root_dir / NB, "a = 1", "b = 2")
    want = ["a = 1  # typed, not saved", "b = 20"]
    async with open_in_lab(NB) as person:
        type_into(person, 0, 5, "  # typed, not saved")
        shared = server_document(jp_serverapp)
        await until(lambda: "typed" in source(shared, 0), "the keystrokes to reach the server")
        header = (await read(api))["header"]
        status, body = await patch(api, f"{header}\nreplace 4:\n+b = 20\n")
        assert status == 200, body
        assert [source(shared, 0), source(shared, 1)] == want
        assert any("the room saves it" in n for n in body["sections"][0]["notes"]), body
        # the reply's tag names the shared document as it is now: the next read agrees
        assert (await read(api))["tag"] == body["sections"][0]["tag"]
        # Jupyter's writer rewrites the file in place: a read during the room's save can see it
        # empty or half written, so wait for a whole file that holds the edit
        seen: list[Any] = []

        def saved() -> bool:
            seen[:] = [saved_notebook(jp_root_dir / NB)]
            return seen[0] is not None and [c.source for c in seen[0].cells] == want

        await until(saved, "the room's own save", 15.0)
        on_disk = seen[0]
        assert body["sections"][0]["tag"] == section_tag(project_notebook(on_disk))
        assert "overwrite" not in room_events
        assert source(person, 0) == "a = 1  # typed, not saved"


def test_a_save_counts_as_cancelled_only_when_the_room_cancelled_it() -> None:
    """Python 3.11+ tasks count the cancel requests they got; a task without that count (3.10)
    counts as cancelled once it is no longer the room's latest save."""
    from types import SimpleNamespace

    from jupyter_hashline.server.adapters.live_rooms import _cancelled

    ours, newer = SimpleNamespace(), SimpleNamespace()
    assert _cancelled(SimpleNamespace(_saving_document=newer), ours)
    assert not _cancelled(SimpleNamespace(_saving_document=ours), ours)
    counted = SimpleNamespace(cancelling=lambda: 0)
    assert not _cancelled(SimpleNamespace(_saving_document=newer), counted)  # done, then a newer
    asked = SimpleNamespace(cancelling=lambda: 1)
    assert _cancelled(SimpleNamespace(_saving_document=asked), asked)
