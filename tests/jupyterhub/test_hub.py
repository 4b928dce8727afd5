"""jupyter-hashline on JupyterHub: a real hub (the jupyterhub package, configurable-http-proxy
from npm, a dummy authenticator, `SimpleLocalProcessSpawner`) starts a single-user server in
this environment, where the package is installed and its server extension enabled by its own
config file. A hub user's API token then edits a notebook through the hub's proxy URL: read,
patch, a stale edit rejected with 409 and nothing written; without that user's token there
is no access at all.

The hub costs about 6 s to start and the single-user server about 8 s to spawn (idle 2-core
machine), once per module.
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
from dataclasses import dataclass
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
NOTEBOOK = "analysis.ipynb"


@dataclass(frozen=True, slots=True)
class Hub:
    url: str  # the proxy's public URL, as a browser or an agent sees the hub
    root: Path  # the single-user server's root directory
    log: Path


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


def hub_config(where: Path, root: Path, proxy: Path) -> str:
    """The hub's config file: loopback ports, state in `where`, one service with a token."""
    home = where / "home"
    settings = {
        "JupyterHub.ip": "127.0.0.1",
        "JupyterHub.port": free_port(),
        "JupyterHub.hub_ip": "127.0.0.1",
        "JupyterHub.hub_port": free_port(),
        "ConfigurableHTTPProxy.api_url": f"http://127.0.0.1:{free_port()}",
        "ConfigurableHTTPProxy.command": [str(proxy)],
        "JupyterHub.db_url": f"sqlite:///{where / 'hub.sqlite'}",
        "JupyterHub.cookie_secret_file": str(where / "cookie_secret"),
        "JupyterHub.authenticator_class": "dummy",
        "DummyAuthenticator.password": "not-used-by-the-test",
        "Authenticator.allowed_users": ["ada", "bob"],
        "JupyterHub.spawner_class": "simple",
        "SimpleLocalProcessSpawner.home_dir_template": str(home / "{username}"),
        "Spawner.cmd": [str(SINGLEUSER)],
        "Spawner.args": [
            f"--ServerApp.root_dir={root}",
            *(["--allow-root"] if os.geteuid() == 0 else []),
        ],
        "Spawner.environment": {
            "JUPYTER_CONFIG_DIR": str(home / "jupyter-config"),
            "JUPYTER_DATA_DIR": str(home / "jupyter-data"),
            "JUPYTER_RUNTIME_DIR": str(home / "jupyter-runtime"),
        },
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


def stop(process: subprocess.Popen[bytes], where: Path) -> None:
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
    root = where / "root"
    root.mkdir()
    config = where / "jupyterhub_config.py"
    config.write_text(hub_config(where, root, hub_proxy))
    port = int(config.read_text().split("c.JupyterHub.port = ", 1)[1].split("\n", 1)[0])
    log = where / "hub.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [str(HUB), "-f", str(config), "--JupyterHub.pid_file=jupyterhub.pid"],
            cwd=where,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: httpx.get(f"{url}/hub/api/").status_code == 200, "the hub start", log)
        yield Hub(url=url, root=root, log=log)
    finally:
        stop(process, where)


def service() -> dict[str, str]:
    return {"Authorization": f"token {SERVICE_TOKEN}"}


def user_token(hub: Hub, user: str) -> str:
    """A token for `user` that may use their server, issued as a hub admin service would."""
    issued = httpx.post(
        f"{hub.url}/hub/api/users/{user}/tokens",
        headers=service(),
        json={"scopes": [f"access:servers!user={user}"], "expires_in": 900, "note": "hashline"},
    )
    assert issued.status_code == 201, issued.text
    return str(issued.json()["token"])


def ada_server(hub: Hub) -> dict[str, object]:
    model = httpx.get(f"{hub.url}/hub/api/users/ada", headers=service()).json()
    return dict(model["servers"].get("", {}))


@pytest.fixture(scope="module")
def ada(hub: Hub) -> Iterator[str]:
    """ada's single-user server, started (and stopped after); yields ada's API token."""
    started = httpx.post(f"{hub.url}/hub/api/users/ada/server", headers=service(), timeout=120)
    assert started.status_code in (201, 202), started.text
    wait_for(lambda: bool(ada_server(hub).get("ready")), "ada's server start", hub.log)
    pid = ada_server(hub)["state"]["pid"]  # type: ignore[index]
    try:
        yield user_token(hub, "ada")
    finally:
        stopped = httpx.delete(f"{hub.url}/hub/api/users/ada/server", headers=service(), timeout=60)
        if stopped.status_code != 204:  # the hub did not say it stopped: stop it ourselves
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), signal.SIGKILL)


def write_analysis(root: Path) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Sales", id="intro"),
        nbformat.v4.new_code_cell("total = 1\nprint(total)", id="total"),
    ]
    nbformat.write(nb, root / NOTEBOOK)
    return root / NOTEBOOK


def hashline(hub: Hub, route: str) -> str:
    return f"{hub.url}/user/ada/hashline/{route}"


def test_a_hub_user_edits_a_notebook_through_the_proxy(hub: Hub, ada: str) -> None:
    path = write_analysis(hub.root)
    auth = {"Authorization": f"token {ada}"}
    read = httpx.get(hashline(hub, "read"), params={"path": NOTEBOOK}, headers=auth)
    assert read.status_code == 200, read.text
    check_schema("ReadResponse", read.json())
    header = read.json()["header"]
    assert "4:total = 1" in read.json()["view"].split("\n")

    patch = {"patch": f"{header}\nreplace 4:\n+total = 2\n"}
    patched = httpx.post(hashline(hub, "patch"), json=patch, headers=auth)
    assert patched.status_code == 200, patched.text
    check_schema("PatchResponse", patched.json())
    cell = nbformat.read(path, as_version=4).cells[1]
    assert cell.id == "total" and cell.source == "total = 2\nprint(total)"

    # the same edit again, on the tag it was made from: that line has changed since
    before = path.read_bytes()
    stale = httpx.post(hashline(hub, "patch"), json=patch, headers=auth)
    assert stale.status_code == 409, stale.text
    check_schema("ErrorResponse", stale.json())
    assert "Nothing was written" in stale.json()["message"]
    assert path.read_bytes() == before

    # behind the hub, the edit is attributed to the hub's user, not to an anonymous token user
    activity = httpx.get(hashline(hub, "activity"), headers=auth)
    assert activity.status_code == 200, activity.text
    assert [edit["who"] for edit in activity.json()["edits"]] == ["ada"]


def test_without_the_users_token_there_is_no_access(hub: Hub, ada: str) -> None:
    path = write_analysis(hub.root)
    before = path.read_bytes()
    anonymous = httpx.get(hashline(hub, "read"), params={"path": NOTEBOOK})
    assert anonymous.status_code == 403 or (
        anonymous.status_code == 302 and "/hub/" in anonymous.headers["location"]
    ), (anonymous.status_code, anonymous.text)
    assert "total = 1" not in anonymous.text

    bob = {"Authorization": f"token {user_token(hub, 'bob')}"}  # a real token, another user's
    for request in (
        httpx.Request("GET", hashline(hub, "read"), params={"path": NOTEBOOK}, headers=bob),
        httpx.Request("POST", hashline(hub, "patch"), json={"patch": "x"}, headers=bob),
        httpx.Request("POST", hashline(hub, "patch"), json={"patch": "x"}),
    ):
        with httpx.Client() as client:
            answer = client.send(request)
        assert answer.status_code in (302, 403), (request.method, answer.status_code, answer.text)
        assert "total = 1" not in answer.text
    assert path.read_bytes() == before
