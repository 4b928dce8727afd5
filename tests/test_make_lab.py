"""`make lab`, the project's main job, starts JupyterLab on examples/ and serves it."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # make lab: the venv, the sidebar, a JupyterLab process

REPO = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_json(url: str, deadline: float) -> dict[str, object]:
    last: Exception | None = None
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                return dict(json.loads(response.read()))
        except (urllib.error.URLError, ConnectionError, TimeoutError) as err:
            last = err
            time.sleep(0.3)
    raise AssertionError(f"JupyterLab did not answer {url} in time: {last} (see lab.log)")


def test_make_lab_starts_jupyterlab_on_examples(tmp_path: Path) -> None:
    port = free_port()
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(tmp_path / "config"))
    token = "make-lab-test"
    log = (tmp_path / "lab.log").open("wb")
    proc = subprocess.Popen(
        [
            "make",
            "--no-print-directory",
            "lab",
            f"PORT={port}",
            f"LAB_ARGS=--IdentityProvider.token={token}",
        ],
        cwd=REPO,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        status = wait_for_json(f"http://127.0.0.1:{port}/api", deadline)
        assert "version" in status
        contents = wait_for_json(f"http://127.0.0.1:{port}/api/contents?token={token}", deadline)
        names = {item["name"] for item in contents["content"]}  # type: ignore[index,union-attr]
        assert "sales_analysis.ipynb" in names  # served from examples/
        # the hashline server extension is active in that server
        hashline = wait_for_json(
            f"http://127.0.0.1:{port}/hashline/snapshots?token={token}", deadline
        )
        assert isinstance(hashline["paths"], list)
        lab = urllib.request.urlopen(f"http://127.0.0.1:{port}/lab?token={token}", timeout=10)
        assert lab.status == 200
        assert b"JupyterLab" in lab.read()
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()
