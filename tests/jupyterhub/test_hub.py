"""jupyter-hashline on JupyterHub: a real hub (the jupyterhub package, configurable-http-proxy
from npm, a dummy authenticator, `SimpleLocalProcessSpawner`) starts a single-user server for
each of two users, alice and bob, in this environment, where the package is installed and its
server extension enabled by its own config file. Each user has a home of their own (so their
own Jupyter data dir, snapshot store and activity) and a server root of their own, holding a
notebook of the same name.

Everything goes through the hub's public proxy URL, under the hub's `/user/NAME/` prefix, with
API tokens the hub issued for each user (the kind an agent holds: the user's own permissions):
each user reads and patches their own notebook (a stale edit rejected with 409 and nothing
written); one user's token cannot read or edit the other's server, by hashline or by Jupyter's
contents API (only a hub admin's token reaches every server, unless narrowed to the admin's
own); each server's activity feed has its own user's edits only; paths in replies are API
paths in the user's root, not URLs under the prefix or folders on disk.

The hub costs about 6 s to start and the two single-user servers about 6 s to spawn together
(idle 2-core machine), once per module; the teardown stops both servers, then the hub.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

import httpx
import nbformat
import pytest
from testkit.rest import check_schema

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
PROXY = REPO / "tests" / "jupyterhub" / "node_modules" / ".bin" / "configurable-http-proxy"
SINGLEUSER = Path(sys.executable).with_name("jupyterhub-singleuser")
HUB = Path(sys.executable).with_name("jupyterhub")
SERVICE_TOKEN = "hashline-hub-test-service-token"
USERS = ("alice", "bob")  # each with a server
ADMIN = "carol"  # a hub admin, with no server: a token of hers is all the test needs
NOTEBOOK = "analysis.ipynb"  # the same name in both roots: an edit sent to the wrong one lands


@dataclass(frozen=True, slots=True)
class Hub:
    url: str  # the proxy's public URL, as a browser or an agent sees the hub
    homes: Path  # each user's home is homes/NAME, their server's root homes/NAME/notebooks
    log: Path

    def root(self, user: str) -> Path:
        return self.homes / user / "notebooks"


@dataclass(frozen=True, slots=True)
class HubUser:
    """A hub user with a running server, and the API token their agent holds."""

    name: str
    token: str
    root: Path  # their server's root directory, on disk
    base: str  # their server's public URL: the hub's URL and /user/NAME/

    def url(self, route: str) -> str:
        return f"{self.base}{route}"

    def hashline(self, route: str) -> str:
        return self.url(f"hashline/{route}")

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"token {self.token}"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def hub_proxy() -> Path:
    """configurable-http-proxy, installed by `make hub-proxy` (npm ci, cached)."""
    done = subprocess.run(
        ["make", "--no-print-directory", "hub-proxy"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if done.returncode != 0:
        pytest.fail(f"`make hub-proxy` failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return PROXY


def hub_config(where: Path, homes: Path, proxy: Path, port: int) -> str:
    """The hub's config file: loopback ports, state in `where`, one service with a token.

    Each user's home is `homes/NAME` (the spawner sets HOME there, so each server has its own
    Jupyter config, data and runtime dirs, and its own snapshot store); their server's root is
    `notebooks` in it. Only HOME differs: the hub passes PATH and PYTHONPATH through, so the
    servers import this checkout's package."""
    settings = {
        "JupyterHub.ip": "127.0.0.1",
        "JupyterHub.port": port,
        "JupyterHub.hub_ip": "127.0.0.1",
        "JupyterHub.hub_port": free_port(),
        "ConfigurableHTTPProxy.api_url": f"http://127.0.0.1:{free_port()}",
        "ConfigurableHTTPProxy.command": [str(proxy)],
        "JupyterHub.db_url": f"sqlite:///{where / 'hub.sqlite'}",
        "JupyterHub.cookie_secret_file": str(where / "cookie_secret"),
        "JupyterHub.authenticator_class": "dummy",
        "DummyAuthenticator.password": "not-used-by-the-test",
        "Authenticator.allowed_users": [*USERS, ADMIN],
        "Authenticator.admin_users": [ADMIN],
        "JupyterHub.spawner_class": "simple",
        "SimpleLocalProcessSpawner.home_dir_template": str(homes / "{username}"),
        "Spawner.notebook_dir": str(homes / "{username}" / "notebooks"),
        "Spawner.cmd": [str(SINGLEUSER)],
        "Spawner.args": ["--allow-root"] if os.geteuid() == 0 else [],
        # a spawn request answers at once (202), so both servers start together
        "JupyterHub.tornado_settings": {"slow_spawn_timeout": 0},
        "Spawner.start_timeout": 120,
        "Spawner.http_timeout": 120,
        "JupyterHub.services": [{"name": "tester", "api_token": SERVICE_TOKEN}],
        "JupyterHub.load_roles": [
            {
                "name": "tester",
                "scopes": ["admin:users", "admin:servers", "tokens", "access:servers"],
                "services": ["tester"],
            }
        ],
    }
    lines = ["c = get_config()  # noqa: F821"]
    for key, value in settings.items():
        section, name = key.split(".")
        lines.append(f"c.{section}.{name} = {json.dumps(value)}")
    return "\n".join(lines) + "\n"


def wait_for(check: Callable[[], bool], what: str, log: Path, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except httpx.TransportError:
            pass
        time.sleep(0.25)
    raise AssertionError(f"{what} did not happen in {seconds} s; the hub's log:\n{log_tail(log)}")


def log_tail(log: Path) -> str:
    return log.read_text(errors="replace")[-4000:] if log.is_file() else "(no log)"


def alive(pid: int) -> bool:
    """True while process `pid` runs (a zombie, exited but not yet reaped, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def kill_if_alive(pid: int, grace: float = 30) -> None:
    """Wait up to `grace` seconds for `pid` to end, then SIGKILL it."""
    deadline = time.monotonic() + grace
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    if alive(pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def stop_hub(process: subprocess.Popen[bytes], where: Path) -> None:
    """SIGTERM: the hub stops the single-user servers and the proxy it started, then exits.
    Should it hang, the hub and whatever its pid files name are killed."""
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        for pid_file in where.glob("*.pid"):  # the proxy's
            with contextlib.suppress(ValueError, ProcessLookupError):
                os.kill(int(pid_file.read_text().strip()), signal.SIGKILL)


@pytest.fixture(scope="module")
def hub(hub_proxy: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hub]:
    where = tmp_path_factory.mktemp("hub")
    homes = where / "home"
    port = free_port()
    config = where / "jupyterhub_config.py"
    config.write_text(hub_config(where, homes, hub_proxy, port))
    log = where / "hub.log"
    hub = Hub(url=f"http://127.0.0.1:{port}", homes=homes, log=log)
    for user in USERS:  # the spawner makes the home, not the root inside it
        hub.root(user).mkdir(parents=True)
    with log.open("wb") as out:
        process = subprocess.Popen(
            [str(HUB), "-f", str(config), "--JupyterHub.pid_file=jupyterhub.pid"],
            cwd=where,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        wait_for(lambda: httpx.get(f"{hub.url}/hub/api/").status_code == 200, "the hub start", log)
        assert "not recognized" not in log.read_text(), log_tail(log)  # a setting mistyped
        yield hub
    finally:
        stop_hub(process, where)


def service() -> dict[str, str]:
    return {"Authorization": f"token {SERVICE_TOKEN}"}


def user_token(hub: Hub, user: str, scopes: list[str] | None = None) -> str:
    """A token for `user`, issued as a hub admin service would. With no `scopes` it has all
    of the user's own permissions, as one from the hub's Token page has by default."""
    issued = httpx.post(
        f"{hub.url}/hub/api/users/{user}/tokens",
        headers=service(),
        json={"expires_in": 900, "note": "hashline agent", "scopes": scopes},
    )
    assert issued.status_code == 201, issued.text
    return str(issued.json()["token"])


def server_model(hub: Hub, user: str) -> dict[str, object]:
    model = httpx.get(f"{hub.url}/hub/api/users/{user}", headers=service()).json()
    return dict(model["servers"].get("", {}))


def server_ready(hub: Hub, user: str) -> bool:
    return bool(server_model(hub, user).get("ready"))


def stop_server(hub: Hub, user: str, pid: int | None) -> None:
    """Ask the hub to stop `user`'s server and wait until it has; whatever still runs of it
    then is killed."""
    with contextlib.suppress(httpx.HTTPError):
        url = f"{hub.url}/hub/api/users/{user}/server"
        stopped = httpx.delete(url, headers=service(), timeout=60)
        if stopped.status_code == 202:  # stopping: the hub says when it is done
            with contextlib.suppress(AssertionError):
                wait_for(lambda: not server_model(hub, user), f"{user}'s stop", hub.log, 60)
    if pid is not None:
        kill_if_alive(pid)


@pytest.fixture(scope="module")
def users(hub: Hub) -> Iterator[dict[str, HubUser]]:
    """alice's and bob's servers, spawned together and stopped after; yields each user with
    their token."""
    pids: dict[str, int | None] = dict.fromkeys(USERS)
    try:
        for user in USERS:
            url = f"{hub.url}/hub/api/users/{user}/server"
            started = httpx.post(url, headers=service(), timeout=120)
            assert started.status_code in (201, 202), started.text
        for user in USERS:
            wait_for(partial(server_ready, hub, user), f"{user}'s start", hub.log)
            pids[user] = int(server_model(hub, user)["state"]["pid"])  # type: ignore[index]
        yield {
            user: HubUser(
                name=user,
                token=user_token(hub, user),
                root=hub.root(user),
                base=f"{hub.url}/user/{user}/",
            )
            for user in USERS
        }
    finally:
        for user, pid in pids.items():
            stop_server(hub, user, pid)


def write_analysis(user: HubUser, path: str = NOTEBOOK) -> Path:
    """A notebook in `user`'s root whose text names them: each user's differs from the other's."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell(f"# Sales, kept by {user.name}", id="intro"),
        nbformat.v4.new_code_cell(f"owner = {user.name!r}\ntotal = 1", id="total"),
    ]
    file = user.root / path
    file.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, file)
    return file


def other(users: dict[str, HubUser], user: str) -> HubUser:
    return next(person for name, person in users.items() if name != user)


def read(user: HubUser, path: str = NOTEBOOK) -> dict[str, str]:
    answer = httpx.get(user.hashline("read"), params={"path": path}, headers=user.auth)
    assert answer.status_code == 200, answer.text
    check_schema("ReadResponse", answer.json())
    return dict(answer.json())


def activity(user: HubUser) -> list[dict[str, object]]:
    answer = httpx.get(user.hashline("activity"), headers=user.auth)
    assert answer.status_code == 200, answer.text
    return list(answer.json()["edits"])


@pytest.mark.parametrize("token", ["default", "narrowed"])
@pytest.mark.parametrize("name", USERS)
def test_each_user_edits_their_own_notebook_through_the_proxy(
    hub: Hub, users: dict[str, HubUser], name: str, token: str
) -> None:
    """With the user's default token, and with one narrowed to their servers, as the
    deployment page advises for agents."""
    user, neighbour = users[name], other(users, name)
    if token == "narrowed":
        user = replace(user, token=user_token(hub, name, [f"access:servers!user={name}"]))
    path = write_analysis(user)
    theirs = write_analysis(neighbour)
    untouched = theirs.read_bytes()
    got = read(user)
    assert "5:total = 1" in got["view"].split("\n")
    assert f"4:owner = {name!r}" in got["view"].split("\n")

    patch = {"patch": f"{got['header']}\nreplace 5:\n+total = 2\n"}
    patched = httpx.post(user.hashline("patch"), json=patch, headers=user.auth)
    assert patched.status_code == 200, patched.text
    check_schema("PatchResponse", patched.json())
    cell = nbformat.read(path, as_version=4).cells[1]
    assert cell.id == "total" and cell.source == f"owner = {name!r}\ntotal = 2"
    assert theirs.read_bytes() == untouched  # the same name in the other root: not edited

    # the same edit again, on the tag it was made from: that line has changed since
    before = path.read_bytes()
    stale = httpx.post(user.hashline("patch"), json=patch, headers=user.auth)
    assert stale.status_code == 409, stale.text
    check_schema("ErrorResponse", stale.json())
    assert "Nothing was written" in stale.json()["message"]
    assert path.read_bytes() == before


def intrusions(intruder: HubUser, owner: HubUser, header: str) -> list[httpx.Request]:
    """Every way `intruder` might read or change `owner`'s files: hashline's routes and
    Jupyter's contents API, on `owner`'s server, with `intruder`'s token. The patch is a
    valid edit of `owner`'s notebook (made from `owner`'s own read), so only the hub's
    authorization can stop it."""
    auth = intruder.auth
    notebook = owner.url(f"api/contents/{NOTEBOOK}")
    edit = {"patch": f"{header}\nreplace 5:\n+total = 666\n"}
    model = {"type": "file", "format": "text", "content": "stolen"}
    return [
        httpx.Request("GET", owner.hashline("read"), params={"path": NOTEBOOK}, headers=auth),
        httpx.Request("POST", owner.hashline("patch"), json=edit, headers=auth),
        httpx.Request(
            "POST",
            owner.hashline("write"),
            json={"path": NOTEBOOK, "content": "stolen", "overwrite": True},
            headers=auth,
        ),
        httpx.Request("GET", owner.hashline("activity"), headers=auth),
        httpx.Request("GET", notebook, headers=auth),
        httpx.Request("GET", owner.url("api/contents"), headers=auth),
        httpx.Request("PUT", notebook, json=model, headers=auth),
        httpx.Request("PUT", owner.url("api/contents/planted.txt"), json=model, headers=auth),
    ]


@pytest.mark.parametrize("name", USERS)
def test_a_users_token_cannot_read_or_edit_the_other_users_server(
    users: dict[str, HubUser], name: str
) -> None:
    intruder, owner = users[name], other(users, name)
    path = write_analysis(owner)
    before = path.read_bytes()
    header = read(owner)["header"]
    records_before = activity(owner)
    files_before = sorted(owner.root.rglob("*"))
    for request in intrusions(intruder, owner, header):
        with httpx.Client() as client:
            answer = client.send(request)
        assert answer.status_code == 403, (request.method, request.url, answer.status_code)
        assert f"owner = {owner.name!r}" not in answer.text
    assert path.read_bytes() == before
    assert sorted(owner.root.rglob("*")) == files_before  # nothing planted either
    assert activity(owner) == records_before


def test_without_a_token_there_is_no_access(users: dict[str, HubUser]) -> None:
    alice = users["alice"]
    path = write_analysis(alice)
    before = path.read_bytes()
    for request in (
        httpx.Request("GET", alice.hashline("read"), params={"path": NOTEBOOK}),
        httpx.Request("POST", alice.hashline("patch"), json={"patch": "x"}),
        httpx.Request("GET", alice.url(f"api/contents/{NOTEBOOK}")),
    ):
        with httpx.Client() as client:
            answer = client.send(request)
        assert answer.status_code == 403 or (
            answer.status_code == 302 and "/hub/" in answer.headers["location"]
        ), (request.method, request.url, answer.status_code)
        assert "owner = 'alice'" not in answer.text
    assert path.read_bytes() == before


def test_a_hub_admins_token_reaches_every_server_unless_narrowed(
    hub: Hub, users: dict[str, HubUser]
) -> None:
    """Hub admins may use every user's server, and a token with no scopes named has all of its
    owner's permissions: an admin's agent holding one reaches bob's notebooks. Narrowed to the
    admin's own servers (`access:servers!user=NAME`), it does not. The deployment page says so."""
    bob = users["bob"]
    write_analysis(bob)
    for scopes, status in ((None, 200), ([f"access:servers!user={ADMIN}"], 403)):
        auth = {"Authorization": f"token {user_token(hub, ADMIN, scopes)}"}
        answer = httpx.get(bob.hashline("read"), params={"path": NOTEBOOK}, headers=auth)
        assert answer.status_code == status, (scopes, answer.status_code, answer.text)


def test_each_servers_activity_has_its_own_users_edits_only(users: dict[str, HubUser]) -> None:
    marks = {}
    for name, user in users.items():  # each user makes one edit of their own notebook
        write_analysis(user)
        marks[name] = f"total = 2  # {name} was here"
        patch = {"patch": f"{read(user)['header']}\nreplace 5:\n+{marks[name]}\n"}
        patched = httpx.post(user.hashline("patch"), json=patch, headers=user.auth)
        assert patched.status_code == 200, patched.text
    for name, user in users.items():
        feed = activity(user)
        diffs = "\n".join(str(record["diff"]) for record in feed)
        assert marks[name] in diffs
        assert marks[other(users, name).name] not in diffs
        # behind the hub, each edit is attributed to the hub's user, not an anonymous one
        assert {record["who"] for record in feed} == {name}


def test_paths_in_replies_are_the_users_own_not_the_hubs(users: dict[str, HubUser]) -> None:
    """The server runs under the hub's prefix /user/alice/ and its root is a folder deep in
    alice's home; an agent names files by their path in that root, and replies do too."""
    alice = users["alice"]
    nested = "reports/q1.ipynb"
    write_analysis(alice, nested)
    got = read(alice, nested)
    assert got["path"] == nested and got["header"].startswith(f"[{nested}#")
    assert read(alice, f"/{nested}")["header"] == got["header"]  # "/" is the user's root

    patch = {"patch": f"{got['header']}\nreplace 5:\n+total = 3\n"}
    patched = httpx.post(alice.hashline("patch"), json=patch, headers=alice.auth)
    assert patched.status_code == 200, patched.text
    (section,) = patched.json()["sections"]
    assert section["path"] == nested and section["header"].startswith(f"[{nested}#")
    assert nbformat.read(alice.root / nested, as_version=4).cells[1].source.endswith("total = 3")
    records = [r for r in activity(alice) if r["header_after"] == section["header"]]
    assert [record["path"] for record in records] == [nested]

    replies = json.dumps([got, patched.json(), records])
    for elsewhere in ("/user/alice", str(alice.root.parent)):  # the prefix; alice's home on disk
        assert elsewhere not in replies, elsewhere
    # the prefix is the URL's, not part of a path: a path that includes it is not found
    prefixed = httpx.get(
        alice.hashline("read"), params={"path": f"user/alice/{nested}"}, headers=alice.auth
    )
    assert prefixed.status_code == 404, prefixed.text
