"""`make lab`, the project's main job: JupyterLab on scratch copies of examples/, with the
server extension; what the lab writes stays in the scratch folder, and Ctrl-C shuts every
kernel down (scripts/lab.py)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import psutil
import pytest

from scripts.lab import prepare
from scripts.labrun import free_port

REPO = Path(__file__).resolve().parent.parent
TOKEN = "make-lab-test"


def wait_for_json(url: str, deadline: float) -> Any:
    last: Exception | None = None
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                return json.loads(response.read())
        except (urllib.error.URLError, ConnectionError, TimeoutError) as err:
            last = err
            time.sleep(0.3)
    raise AssertionError(f"JupyterLab did not answer {url} in time: {last} (see lab.log)")


def call(base: str, method: str, route: str, body: object | None = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        base + route,
        data=data,
        method=method,
        headers={"Authorization": f"token {TOKEN}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        payload = response.read()
    return json.loads(payload) if payload else None


def git_status() -> str:
    done = subprocess.run(
        ["git", "status", "--porcelain"], cwd=REPO, capture_output=True, text=True, check=True
    )
    return done.stdout


def test_prepare_copies_the_examples_and_keeps_a_changed_copy(tmp_path: Path) -> None:
    examples = sorted(p.name for p in (REPO / "examples").glob("*.ipynb"))
    assert prepare(tmp_path) == examples
    (tmp_path / "sales_analysis.ipynb").write_text("{}")  # a person's work in the copy
    assert prepare(tmp_path) == []
    assert (tmp_path / "sales_analysis.ipynb").read_text() == "{}"
    assert prepare(tmp_path, fresh=True) == examples
    assert (tmp_path / "sales_analysis.ipynb").read_bytes() == (
        REPO / "examples" / "sales_analysis.ipynb"
    ).read_bytes()


@pytest.mark.slow  # make lab: the venv, the sidebar, a JupyterLab process, two kernels
def test_make_lab_works_on_copies_and_shuts_its_kernels_down(tmp_path: Path) -> None:
    before = git_status()
    strays = [REPO / "examples" / name for name in (".jupyter", ".ipynb_checkpoints", "scratch")]
    existed = {stray for stray in strays if stray.exists()}
    scratch = Path("lab-scratch") / f"test-{uuid.uuid4().hex[:8]}"  # inside the ignored folder
    port = free_port()
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(tmp_path / "config"))
    log = (tmp_path / "lab.log").open("wb")
    args = f"LAB_ARGS=--IdentityProvider.token={TOKEN}"
    make = subprocess.Popen(
        ["make", "--no-print-directory", "lab", f"PORT={port}", f"LAB_SCRATCH={scratch}", args],
        cwd=REPO,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group, as a terminal's foreground job
    )
    base = f"http://127.0.0.1:{port}/"
    processes: list[psutil.Process] = []
    try:
        deadline = time.monotonic() + 120
        assert "version" in wait_for_json(base + "api", deadline)
        contents = wait_for_json(f"{base}api/contents?token={TOKEN}", deadline)
        assert "sales_analysis.ipynb" in {item["name"] for item in contents["content"]}
        lab = urllib.request.urlopen(f"{base}lab?token={TOKEN}", timeout=10)
        assert lab.status == 200 and b"JupyterLab" in lab.read()

        # what a person and the examples do: open a notebook (its kernel), save a checkpoint,
        # and an agent edits and runs cells of a scratch copy through hashline (its kernel)
        call(base, "POST", "api/sessions", {"path": "stale_edits.ipynb", "type": "notebook"})
        call(base, "POST", "api/contents/stale_edits.ipynb/checkpoints")
        view = call(base, "GET", "hashline/read?path=sales_analysis.ipynb&cells=imports")
        patch = f"{view['header']}\ninsert after 8:\n+import math\n"
        edited = call(base, "POST", "hashline/patch", {"patch": patch})
        tag = edited["sections"][0]["tag"]
        run = {"path": "sales_analysis.ipynb", "tag": tag, "cells": ["imports"]}
        ran = call(base, "POST", "hashline/run", run)
        assert ran["cells"][0]["status"] == "ok", ran
        assert len(call(base, "GET", "api/kernels")) == 2

        info = next((REPO / scratch / ".runtime").glob("jpserver-*.json"))
        server = psutil.Process(json.loads(info.read_text())["pid"])
        processes += [server, *server.children(recursive=True)]
        assert len(processes) >= 3  # the server and both kernels

        os.killpg(make.pid, signal.SIGINT)  # Ctrl-C
        assert make.wait(timeout=60) is not None
        _, alive = psutil.wait_procs(processes, timeout=30)
        assert alive == [], f"left running: {[p.cmdline() for p in alive]}"
    finally:
        if make.poll() is None:
            os.killpg(make.pid, signal.SIGKILL)
            make.wait()
        for process in processes:  # a failed test leaves nothing running either
            with contextlib.suppress(psutil.NoSuchProcess):
                process.kill()
        log.close()
        copies = REPO / scratch
        wrote = {p.name for p in copies.iterdir()} if copies.exists() else set()
        shutil.rmtree(copies, ignore_errors=True)
        with contextlib.suppress(OSError):  # lab-scratch/ itself, unless it holds your copies
            copies.parent.rmdir()
    assert b"shut down 2 kernel(s)" in (tmp_path / "lab.log").read_bytes()
    assert ".ipynb_checkpoints" in wrote  # what the lab wrote went to the scratch copies
    assert git_status() == before  # tracked examples untouched, nothing new in the tree
    assert {stray for stray in strays if stray.exists()} == existed  # none made in examples/
