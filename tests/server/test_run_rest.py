"""`POST hashline/run` on a real Jupyter server (pytest-jupyter's, with jupyter-collaboration):
cells run in the notebook's own server kernel, stale cells are refused before any kernel
starts, timeouts leave the kernel usable, outputs reach the file (or, with the notebook open,
the person's view), runs show in the activity feed and on the event bus, and a server that
must not run cells (read-only, `allow_run` false, its overlay, an authorizer without kernel
execution) refuses with 403. Every reply is checked against the REST schema."""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path
from typing import Any

import nbformat
import pytest
from jsonschema import Draft7Validator
from jupyter_events.logger import EventLogger
from jupyter_server.auth.authorizer import Authorizer
from testkit.cells import ENDLESS, PNG_CELL
from testkit.rest import Api, write_notebook
from testkit.rooms import OpenInLab, until
from tornado.web import RequestHandler
from traitlets.config import Config

from jupyter_hashline.kernels.clients import own_client
from jupyter_hashline.server.events import ACTIVITY_EVENT, EVENT_NAMESPACE, event_schema
from jupyter_hashline.tools.catalog import QUERY_FLAGS

NB = "work/analysis.ipynb"
SLOW = "import time\nprint('first', flush=True)\ntime.sleep(1.5)\nprint('second')"


class NoKernelExecution(Authorizer):
    """A deployment that lets this user edit files but not execute code in kernels."""

    def is_authorized(self, handler: RequestHandler, user: Any, action: str, resource: str) -> bool:
        return not (resource == "kernels" and action == "execute")


@pytest.fixture
def root_overlay(request: pytest.FixtureRequest, jp_root_dir: Path) -> dict[str, Any]:
    """A workspace overlay file at the server root, written before the server starts."""
    overlay = dict(getattr(request, "param", {}))
    if overlay:
        (jp_root_dir / ".jupyter-hashline.json").write_text(json.dumps(overlay))
    return overlay


@pytest.fixture
def authorizer(request: pytest.FixtureRequest) -> type[Authorizer] | None:
    return getattr(request, "param", None)


@pytest.fixture
def jp_server_config(
    collaboration_server_config: Config,
    root_overlay: dict[str, Any],
    authorizer: type[Authorizer] | None,
) -> Config:
    if authorizer is not None:
        collaboration_server_config.ServerApp.authorizer_class = authorizer
    return collaboration_server_config


async def read_tag(api: Api, path: str = NB) -> str:
    status, read = await api("read", params={"path": path}, schema="ReadResponse")
    assert status == 200, read
    return str(read["tag"])


async def run(api: Api, **body: Any) -> tuple[int, dict[str, Any]]:
    return await api("run", method="POST", body={"path": NB, **body}, schema="RunResponse")


async def evaluate(api: Api, **body: Any) -> tuple[int, dict[str, Any]]:
    return await api("eval", method="POST", body={"path": NB, **body}, schema="EvalResponse")


def disk_cells(root: Path) -> list[dict[str, Any]]:
    return list(json.loads((root / NB).read_text("utf-8"))["cells"])


async def test_a_cell_computing_6_times_7_runs_and_its_output_lands_in_the_file(
    api: Api, jp_root_dir: Path, jp_serverapp: Any
) -> None:
    write_notebook(jp_root_dir / NB, "answer = 6 * 7\nprint(answer)", "later = 1")
    tag = await read_tag(api)
    status, reply = await run(api, tag=tag, cells=["cell-0"])
    assert status == 200, reply
    [cell] = reply["cells"]
    assert (cell["cell"], cell["status"], cell["execution_count"]) == ("cell-0", "ok", 1)
    assert cell["outputs"] == "[1] stream stdout\n42"
    assert reply["text"].startswith(f"[{NB}#{reply['tag']}] ran 1 of 1 cell in kernel python3")
    assert f"started a python3 kernel session for {NB}" in reply["notes"]
    stored = disk_cells(jp_root_dir)
    assert stored[0]["outputs"] == [{"name": "stdout", "output_type": "stream", "text": ["42\n"]}]
    assert stored[0]["execution_count"] == 1
    assert stored[1]["outputs"] == [] and stored[1]["execution_count"] is None
    sessions = await jp_serverapp.session_manager.list_sessions()
    assert [s["path"] for s in sessions] == [NB]  # the session JupyterLab will join
    _, activity = await api("activity", schema="ActivityResponse")
    [record] = activity["edits"]
    assert record == reply["activity"][0]
    assert (record["op"], record["who"], record["cells"]) == ("run", "ada", ["cell-0"])
    assert [(r["cell"], r["status"]) for r in record["runs"]] == [("cell-0", "ok")]


async def test_the_same_call_after_a_person_changed_the_cell_is_409_and_nothing_runs(
    api: Api, jp_root_dir: Path, jp_serverapp: Any
) -> None:
    write_notebook(jp_root_dir / NB, "answer = 6 * 7\nprint(answer)")
    tag = await read_tag(api)
    nb = nbformat.read(jp_root_dir / NB, as_version=4)
    nb.cells[0].source = "answer = 6 * 7\nimport shutil; shutil.rmtree('work')"
    nbformat.write(nb, jp_root_dir / NB)
    before = (jp_root_dir / NB).read_bytes()
    status, reply = await run(api, tag=tag, cells=["cell-0"])
    assert (status, reply["error"]) == (409, "stale_cells")
    assert "Nothing ran" in reply["message"]
    assert "*3:import shutil; shutil.rmtree('work')" in reply["message"].splitlines()
    assert (jp_root_dir / NB).read_bytes() == before
    assert await jp_serverapp.session_manager.list_sessions() == []  # no kernel was started
    _, activity = await api("activity")
    assert activity["edits"] == []


async def test_a_timeout_interrupts_the_loop_and_the_next_run_in_that_kernel_succeeds(
    api: Api, jp_root_dir: Path, jp_serverapp: Any
) -> None:
    write_notebook(jp_root_dir / NB, "kept = 41", ENDLESS, "print(kept + 1)")
    tag = await read_tag(api)
    assert (await run(api, tag=tag, cells=["cell-0"]))[0] == 200
    status, stuck = await run(api, tag=tag, cells=["cell-1"], timeout_s=2)
    assert status == 200, stuck
    assert stuck["cells"][0]["status"] == "timeout"
    assert "interrupted after 2 s" in stuck["cells"][0]["note"]
    status, after = await run(api, tag=stuck["tag"], cells=["cell-2"])
    assert status == 200 and after["cells"][0]["status"] == "ok"
    assert after["cells"][0]["outputs"] == "[1] stream stdout\n42"  # the same kernel's `kept`
    assert len(await jp_serverapp.session_manager.list_sessions()) == 1


async def test_an_image_comes_back_as_a_placeholder_and_the_run_is_an_event(
    api: Api, jp_root_dir: Path, jp_serverapp: Any
) -> None:
    events: list[dict[str, Any]] = []

    async def listener(logger: EventLogger, schema_id: str, data: dict[str, Any]) -> None:
        if schema_id.startswith(EVENT_NAMESPACE):
            events.append(data)

    jp_serverapp.event_logger.add_listener(listener=listener)
    write_notebook(jp_root_dir / NB, PNG_CELL)
    status, reply = await run(api, tag=await read_tag(api), cells=["cell-0"], max_chars=300)
    assert status == 200, reply
    assert "[image/png 640x480, " in reply["cells"][0]["outputs"]
    assert "iVBOR" not in json.dumps(reply) and len(reply["text"]) < 400
    assert "image/png" in disk_cells(jp_root_dir)[0]["outputs"][0]["data"]
    await jp_serverapp.event_logger.gather_listeners()
    [event] = events
    payload = {k: v for k, v in event.items() if not k.startswith("__")}
    assert not list(Draft7Validator(event_schema(ACTIVITY_EVENT)).iter_errors(payload))
    assert payload["op"] == "run" and payload["runs"][0]["status"] == "ok"
    assert payload["runs"][0]["duration_ms"] == reply["cells"][0]["duration_ms"]


@pytest.mark.parametrize(
    ("hashline_config", "phrase"),
    [({"read_only": True}, "read-only"), ({"allow_run": False}, "allow_run is false")],
    indirect=["hashline_config"],
)
async def test_a_server_that_must_not_run_refuses_with_403(
    api: Api, jp_root_dir: Path, jp_serverapp: Any, phrase: str
) -> None:
    write_notebook(jp_root_dir / NB, "print(1)")
    before = (jp_root_dir / NB).read_bytes()
    status, reply = await run(api, tag=await read_tag(api), cells=["cell-0"])
    assert (status, reply["error"]) == (403, "run_not_allowed")
    assert phrase in reply["message"] and "nothing ran" in reply["message"]
    assert (jp_root_dir / NB).read_bytes() == before
    status, reply = await evaluate(api, code="print(1)")
    assert (status, reply["error"]) == (403, "run_not_allowed")
    assert await jp_serverapp.session_manager.list_sessions() == []


@pytest.mark.parametrize("root_overlay", [{"allow_run": False}], indirect=True)
async def test_the_workspace_overlay_turns_runs_off(
    api: Api, jp_root_dir: Path, jp_serverapp: Any
) -> None:
    write_notebook(jp_root_dir / NB, "print(1)")
    status, reply = await run(api, tag=await read_tag(api), cells=["cell-0"])
    assert (status, reply["error"]) == (403, "run_not_allowed")
    assert "workspace overlay" in reply["message"]
    # edits are still allowed: the overlay turned off running only
    header = f"[{NB}#{await read_tag(api)}]"
    status, _ = await api("patch", method="POST", body={"patch": f"{header}\nreplace 2:\n+2\n"})
    assert status == 200


@pytest.mark.parametrize("authorizer", [NoKernelExecution], indirect=True)
async def test_a_user_who_may_edit_but_not_execute_kernels_gets_403(
    api: Api, jp_root_dir: Path, jp_serverapp: Any
) -> None:
    write_notebook(jp_root_dir / NB, "print(1)")
    tag = await read_tag(api)
    status, reply = await run(api, tag=tag, cells=["cell-0"])
    assert (status, reply["error"]) == (403, "forbidden")
    assert "execute on resource: kernels" in reply["message"]
    status, reply = await evaluate(api, code="print(1)")
    assert (status, reply["error"]) == (403, "forbidden")
    assert await jp_serverapp.session_manager.list_sessions() == []
    status, _ = await api("patch", method="POST", body={"patch": f"[{NB}#{tag}]\nreplace 2:\n+2\n"})
    assert status == 200


async def test_with_the_notebook_open_the_person_sees_the_output_arrive(
    api: Api, jp_root_dir: Path, open_in_lab: OpenInLab
) -> None:
    write_notebook(jp_root_dir / NB, "a = 1", SLOW)
    tag = await read_tag(api)
    async with open_in_lab(NB) as person:
        running = asyncio.create_task(run(api, tag=tag, cells=["cell-1"]))

        def outputs() -> list[dict[str, Any]]:
            return list(person.get_cell(1).get("outputs", []))

        await until(lambda: any("first" in str(o.get("text")) for o in outputs()), "'first'")
        assert not running.done()  # the first line arrived while the cell still ran
        status, reply = await running
        assert status == 200, reply
        await until(lambda: person.get_cell(1)["execution_count"] == 1, "the execution count")
        assert outputs() == [{"output_type": "stream", "name": "stdout", "text": "first\nsecond\n"}]
    assert reply["cells"][0]["outputs"] == "[1] stream stdout\nfirst\nsecond"
    stored = disk_cells(jp_root_dir)  # the room saved right after the run
    assert stored[1]["outputs"][0]["text"] == ["first\n", "second\n"]
    assert stored[1]["execution_count"] == 1


async def test_with_the_notebook_open_a_persons_typing_in_the_cell_refuses_the_run(
    api: Api, jp_root_dir: Path, jp_serverapp: Any, open_in_lab: OpenInLab
) -> None:
    write_notebook(jp_root_dir / NB, "print(6 * 7)")
    tag = await read_tag(api)
    async with open_in_lab(NB) as person:
        person.ycells[0]["source"].insert(0, "import shutil  # half-typed\n")
        for _ in range(250):  # until the typing reached the server's document
            _, view = await api("read", params={"path": NB})
            if "half-typed" in view["view"]:
                break
            await asyncio.sleep(0.02)
        status, reply = await run(api, tag=tag, cells=["cell-0"])
        assert (status, reply["error"]) == (409, "stale_cells")
        assert "*2:import shutil  # half-typed" in reply["message"].splitlines()
        assert person.get_cell(0)["execution_count"] is None
    assert await jp_serverapp.session_manager.list_sessions() == []


async def test_with_the_notebook_open_a_persons_deleting_the_cell_refuses_the_run(
    api: Api, jp_root_dir: Path, jp_serverapp: Any, open_in_lab: OpenInLab
) -> None:
    """Erasing and deleting are pure deletions in the shared document (its state vector does
    not move): the run still sees them and refuses."""
    write_notebook(jp_root_dir / NB, "print(6 * 7)", "print('kept')")
    async with open_in_lab(NB) as person:
        tag = await read_tag(api)  # read through the room: the live read is now cached
        rooms = jp_serverapp.web_app.settings["jupyter_server_ydoc"].ywebsocket_server.rooms
        [shared] = [r._document for key, r in rooms.items() if key.startswith("json:notebook:")]
        del person.ycells[1]["source"][0:]  # the person empties the second cell
        await until(lambda: str(shared.ycells[1]["source"]) == "", "the erasing to arrive")
        status, reply = await run(api, tag=tag, cells=["cell-1"])
        assert (status, reply["error"]) == (409, "stale_cells")
        del person.ycells[0]  # and deletes the first
        await until(lambda: len(shared.ycells) == 1, "the deletion to arrive")
        status, reply = await run(api, tag=tag, cells=["cell-0"])
        assert (status, reply["error"]) == (409, "stale_cells")
        assert "Nothing ran" in reply["message"]
    assert await jp_serverapp.session_manager.list_sessions() == []


async def test_after_a_recovered_edit_the_new_tag_edits_and_runs_the_lines_the_agent_saw(
    api: Api, jp_root_dir: Path
) -> None:
    write_notebook(jp_root_dir / NB, "a = 1\nb = 2", "c = a + b\nprint(c)", "z = 0")
    tag = await read_tag(api)  # 1-3 cell-0, 4-6 cell-1, 7-8 cell-2
    other = {"X-Hashline-Agent": "other"}
    _, read_b = await api("read", params={"path": NB}, headers=other)
    status, moved = await api(
        "patch",
        method="POST",
        body={"patch": f"[{NB}#{read_b['tag']}]\nreplace 8:\n+z = 1\n"},
        headers=other,
    )
    assert status == 200, moved
    body = {"patch": f"[{NB}#{tag}]\nreplace 2:\n+a = 10\n"}
    status, stale = await api("patch", method="POST", body=body, schema="PatchResponse")
    assert status == 200 and "recovered" in stale["text"], stale
    new_tag = stale["sections"][0]["tag"]
    status, ran = await run(api, tag=new_tag, cells=["cell-0", "cell-1"])
    assert status == 200, ran
    assert ran["cells"][1]["outputs"] == "[1] stream stdout\n12"
    body = {"patch": f"[{NB}#{ran['tag']}]\nreplace 5:\n+c = a - b\n"}
    status, follow = await api("patch", method="POST", body=body, schema="PatchResponse")
    assert status == 200, follow
    status, ran = await run(api, tag=follow["sections"][0]["tag"], cells=["cell-0", "cell-1"])
    assert status == 200, ran
    assert ran["cells"][1]["outputs"] == "[1] stream stdout\n8"


async def test_asked_for_images_run_and_outputs_list_the_png_a_cell_displayed(
    api: Api, jp_root_dir: Path
) -> None:
    write_notebook(jp_root_dir / NB, PNG_CELL)
    status, ran = await run(api, tag=await read_tag(api), cells=["cell-0"], images=True)
    assert status == 200, ran
    [image] = ran["images"]
    assert {k: image[k] for k in ("cell", "output_index", "mime", "width", "height")} == {
        "cell": "cell-0", "output_index": 1, "mime": "image/png", "width": 640, "height": 480
    }  # fmt: skip
    assert base64.b64decode(image["data"]).startswith(b"\x89PNG")
    assert "image attached: cell cell-0 output [1], image/png 640x480" in ran["text"]
    query = {"path": NB, "cell": "cell-0"}
    status, asked = await api(
        "outputs", params={**query, "images": "true"}, schema="OutputsResponse"
    )
    assert status == 200 and asked["images"] == ran["images"]
    status, plain = await api("outputs", params=query, schema="OutputsResponse")
    assert status == 200 and "images" not in plain and "iVBOR" not in plain["text"]
    for spelling, wanted in QUERY_FLAGS.items():  # Jupyter's own are 1 / 0 (`content=1`)
        params = {**query, "images": spelling}
        status, got = await api("outputs", params=params, schema="OutputsResponse")
        assert (status, got.get("images") == ran["images"]) == (200, wanted), (spelling, got)
    status, wrong = await api("outputs", params={**query, "images": "yes"})
    assert status == 400 and "`images` must be true or false" in wrong["message"]


async def test_eval_sees_what_the_cells_defined_in_the_server_kernel_and_writes_nothing(
    api: Api, jp_root_dir: Path, jp_serverapp: Any
) -> None:
    write_notebook(jp_root_dir / NB, "answer = 6 * 7")
    tag = await read_tag(api)
    status, ran = await run(api, tag=tag, cells=["cell-0"])
    assert status == 200, ran
    before = (jp_root_dir / NB).read_bytes()
    status, probe = await evaluate(api, code="answer + 1", timeout_s=30)
    assert status == 200, probe
    [cell] = probe["cells"]
    assert (cell["cell"], cell["status"], cell["outputs"]) == (
        "(eval)", "ok", "[1] execute_result\n43"
    )  # fmt: skip
    assert probe["header"] == f"[{NB}#{ran['tag']}]"
    assert (jp_root_dir / NB).read_bytes() == before
    sessions = await jp_serverapp.session_manager.list_sessions()
    assert len(sessions) == 1  # the notebook's own kernel, no other
    _, activity = await api("activity", schema="ActivityResponse")
    latest = activity["edits"][0]
    assert (latest["op"], latest["source"], latest["diff"]) == ("run", "eval", "answer + 1")


async def test_an_interrupt_of_a_persons_running_cell_says_it_stopped_someone_elses_work(
    api: Api, jp_root_dir: Path, jp_serverapp: Any
) -> None:
    write_notebook(jp_root_dir / NB, "x = 1")
    status, ran = await run(api, tag=await read_tag(api), cells=["cell-0"])
    assert status == 200, ran
    [session] = await jp_serverapp.session_manager.list_sessions()
    manager = jp_serverapp.kernel_manager.get_kernel(session["kernel"]["id"])
    person = own_client(manager)  # a person's own connection, as JupyterLab's
    await person.wait_for_ready(timeout=30)
    try:
        msg_id = person.execute("while True: pass")
        await until(lambda: manager.execution_state == "busy", "the person's cell to start")
        status, seen = await api(
            "kernel", method="POST", body={"path": NB, "action": "status"}, schema="KernelResponse"
        )
        assert status == 200 and seen["state"] == "busy", seen
        assert seen["running"].startswith("an execution not started through jupyter-hashline")
        status, stopped = await api(
            "kernel", method="POST", body={"path": NB, "action": "interrupt"},
            schema="KernelResponse",
        )  # fmt: skip
        assert status == 200, stopped
        assert (
            "this stopped an execution not started through jupyter-hashline (a person's"
            in (stopped["text"])
        )
        while True:
            reply = await person.get_shell_msg(timeout=30)
            if reply["parent_header"].get("msg_id") == msg_id:
                break
        assert reply["content"]["ename"] == "KeyboardInterrupt"
    finally:
        person.stop_channels()
    status, restarted = await api(
        "kernel", method="POST", body={"path": NB, "action": "restart"}, schema="KernelResponse"
    )
    assert status == 200 and "variables defined before are gone" in restarted["text"]
    status, probe = await evaluate(api, code="x")
    assert status == 200 and "NameError" in probe["text"]
