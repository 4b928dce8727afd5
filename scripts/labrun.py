"""Running JupyterLab and headless Chromium for browser tests and screenshots.

One place for what every browser check needs: Chromium's flags for this offline machine and a
page of it that is closed however the block ends (`chromium_page`), a JupyterLab process on
loopback with its config, data, runtime, settings and workspaces in a temporary home (so
nothing of the user's or the repository's changes), the built sidebar on `JUPYTER_PATH`, the
"news" notice off (for a server started elsewhere too: `quiet_lab_settings`), and a clean stop.
Used by tests (`from scripts.labrun import ...`, the repository root being on `sys.path` under
`python -m pytest`) and by the screenshot scripts.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.sync_api import Page, ViewportSize

CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--no-first-run",
]  # fmt: skip
"""Flags for Debian's Chromium here: root (no sandbox), no GPU, and no background traffic
(this machine's network is closed, so those connections would only fail)."""

NEWS_OFF = '{"fetchNews": "false", "checkForUpdates": false}'
"""JupyterLab's notification settings with the news notice and the update check off."""


@contextmanager
def chromium_page(
    chromium: str, *, viewport: ViewportSize | None = None, timeout_ms: float | None = None
) -> Iterator[Page]:
    """A page of a fresh headless Chromium (the executable at `chromium`), its waits bounded by
    `timeout_ms` when given; the browser is closed when the block ends, however it ends."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport=viewport)
            if timeout_ms is not None:
                page.set_default_timeout(timeout_ms)
            yield page
        finally:
            browser.close()


def quiet_lab_settings(base: Path) -> dict[str, str]:
    """User settings under `base/lab-settings` with the news notice off; the environment that
    points a JupyterLab server at them, and its workspaces at `base/workspaces`."""
    settings = base / "lab-settings"
    notification = settings / "@jupyterlab" / "apputils-extension"
    notification.mkdir(parents=True)
    (notification / "notification.jupyterlab-settings").write_text(NEWS_OFF)
    return {
        "JUPYTERLAB_SETTINGS_DIR": str(settings),
        "JUPYTERLAB_WORKSPACES_DIR": str(base / "workspaces"),
    }


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def lab_environment(home: Path, labextension: Path) -> dict[str, str]:
    """Config, data and runtime dirs under `home`; the built sidebar first on JUPYTER_PATH."""
    extensions = home / "jupyter-path" / "labextensions"
    extensions.mkdir(parents=True)
    (extensions / "jupyter-hashline").symlink_to(labextension, target_is_directory=True)
    config = home / "config"
    (config / "labconfig").mkdir(parents=True)
    enable = {"ServerApp": {"jpserver_extensions": {"jupyter_hashline": True}}}
    (config / "jupyter_server_config.json").write_text(json.dumps(enable))
    # No "news" notice and no update check: the page stays offline and uncluttered.
    quiet = {
        "@jupyterlab/apputils-extension:notification": {
            "fetchNews": "false",
            "checkForUpdates": False,
        }
    }
    (config / "labconfig" / "default_setting_overrides.json").write_text(json.dumps(quiet))
    return dict(
        os.environ,
        JUPYTER_CONFIG_DIR=str(config),
        JUPYTER_DATA_DIR=str(home / "data"),
        JUPYTER_RUNTIME_DIR=str(home / "runtime"),
        JUPYTER_PATH=str(home / "jupyter-path"),
    )


class LabFailed(RuntimeError):
    """JupyterLab exited or did not answer in time; the message ends with its log."""


def start_lab(
    root: Path, home: Path, log: Path, token: str, labextension: Path, *, timeout_s: float = 90
) -> tuple[subprocess.Popen[bytes], str]:
    """Start JupyterLab on `root` (cwd `home`, so stray files land there); return it and its
    base URL once `api/status` answers."""
    port = free_port()
    args = [
        sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", "--ip=127.0.0.1",
        f"--port={port}", "--ServerApp.port_retries=0", f"--ServerApp.root_dir={root}",
        f"--IdentityProvider.token={token}", f"--LabApp.workspaces_dir={home / 'workspaces'}",
        f"--LabApp.user_settings_dir={home / 'settings'}",
    ]  # fmt: skip
    env = lab_environment(home, labextension)
    with log.open("wb") as out:
        proc = subprocess.Popen(args, env=env, cwd=home, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise LabFailed(f"JupyterLab exited:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{url}api/status?token={token}", timeout=2):
                return proc, url
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.2)
    stop(proc)
    raise LabFailed(f"JupyterLab did not start in time:\n{log.read_text()[-3000:]}")


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
