"""`make lab`: JupyterLab on scratch copies of examples/, with every kernel shut down on exit.

    python scripts/lab.py [--scratch DIR] [--fresh] [--port N] [LAB ARGS ...]

The examples run, save and start kernels: run on examples/ itself, they would write outputs
and metadata into tracked notebooks and leave `.ipynb_checkpoints/` and `.jupyter/` in the
tree. So the lab's root is a scratch folder (`lab-scratch/`, ignored by git) holding copies of
the example notebooks; a copy you changed is kept across runs (`--fresh` replaces them all).

Invariants:
- Nothing in the repository outside the scratch folder is written: JupyterLab runs with the
  scratch folder as its root and working directory, and its runtime files (the server's info,
  kernels' connection files) under `<scratch>/.runtime`.
- On Ctrl-C, SIGTERM or JupyterLab's own exit, every kernel of the server (the notebooks'
  and the scratch notebooks' the examples run cells in) is shut down through the server's
  REST API before the server is stopped; a server that does not stop is killed.
- JupyterLab runs in its own process group, so Ctrl-C reaches only this script, which stops
  it in order (no "Shutdown this Jupyter server?" prompt).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"
SCRATCH = REPO / "lab-scratch"
STOP_TIMEOUT_S = 20.0


def prepare(scratch: Path, *, fresh: bool = False, examples: Path = EXAMPLES) -> list[str]:
    """Copy each example notebook into `scratch` unless a copy is there (all of them when
    `fresh`); the names copied."""
    scratch.mkdir(parents=True, exist_ok=True)
    copied = []
    for source in sorted(examples.glob("*.ipynb")):
        target = scratch / source.name
        if fresh or not target.exists():
            shutil.copyfile(source, target)
            copied.append(source.name)
    return copied


def lab_command(scratch: Path, port: int, lab_args: Sequence[str]) -> list[str]:
    return [
        sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", "--ip=127.0.0.1",
        f"--port={port}", f"--ServerApp.root_dir={scratch}", *lab_args,
    ]  # fmt: skip


def server_info(runtime: Path, pid: int) -> dict[str, object] | None:
    """The info file the server with process id `pid` wrote (its URL and token), if any."""
    for path in runtime.glob("jpserver-*.json"):
        with contextlib.suppress(OSError, ValueError):
            info = json.loads(path.read_text())
            if isinstance(info, dict) and info.get("pid") == pid:
                return info
    return None


def _api(info: dict[str, object], method: str, route: str) -> object:
    url = str(info["url"]).rstrip("/") + "/api/" + route
    request = urllib.request.Request(
        url, method=method, headers={"Authorization": f"token {info.get('token', '')}"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        body = response.read()
    return json.loads(body) if body else None


def shutdown_kernels(info: dict[str, object]) -> list[str]:
    """Shut down every kernel of the server; the ids shut down."""
    kernels = _api(info, "GET", "kernels")
    ids = (
        [str(k["id"]) for k in kernels if isinstance(k, dict)] if isinstance(kernels, list) else []
    )
    for kernel_id in ids:
        with contextlib.suppress(urllib.error.URLError, OSError):
            _api(info, "DELETE", f"kernels/{kernel_id}")
    return ids


def stop(proc: subprocess.Popen[bytes], runtime: Path) -> None:
    """Shut the kernels down, then the server (killed if it does not stop in time)."""
    info = server_info(runtime, proc.pid)
    if info is not None and proc.poll() is None:
        try:
            ids = shutdown_kernels(info)
            print(f"lab: shut down {len(ids)} kernel(s)", file=sys.stderr)
        except (urllib.error.URLError, OSError, ValueError) as err:
            print(f"lab: could not list the kernels ({err}); stopping the server", file=sys.stderr)
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)  # the server shuts down what is left, then exits
        try:
            proc.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def run(scratch: Path, port: int, lab_args: Sequence[str], *, fresh: bool = False) -> int:
    copied = prepare(scratch, fresh=fresh)
    kept = sorted({p.name for p in scratch.glob("*.ipynb")} - set(copied))
    print(f"lab: working on copies of examples/ in {scratch}", file=sys.stderr)
    if kept:
        print(
            f"lab: kept your copies of {', '.join(kept)} (--fresh replaces them)", file=sys.stderr
        )
    runtime = scratch / ".runtime"
    env = dict(os.environ, JUPYTER_RUNTIME_DIR=str(runtime))
    proc = subprocess.Popen(
        lab_command(scratch, port, lab_args), cwd=scratch, env=env, start_new_session=True
    )
    stopping = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stopping.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        while proc.poll() is None and not stopping.wait(0.2):
            pass
    finally:
        stop(proc, runtime)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 0 if stopping.is_set() else int(proc.returncode or 0)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scratch", type=Path, default=SCRATCH)
    parser.add_argument("--fresh", action="store_true", help="replace every copy")
    parser.add_argument("--port", type=int, default=8888)
    args, lab_args = parser.parse_known_args(argv)
    return run(args.scratch.resolve(), args.port, lab_args, fresh=args.fresh)


if __name__ == "__main__":
    sys.exit(main())
