"""`jupyter-hashline simulator` serves the provider simulator from the command line."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import httpx

from jupyter_hashline.cli import main


def test_simulator_command_serves_a_script_until_stopped(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"text": "hello from the script"}]))
    proc = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "jupyter-hashline"),
            "simulator",
            "--script",
            str(script),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert first.startswith("provider simulator on http://127.0.0.1:")
        url = first.split()[3]
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        reply = httpx.post(
            url + "/openai/v1/chat/completions",
            json=body,
            headers={"authorization": "Bearer k"},
        )
        assert reply.status_code == 200
        assert reply.json()["choices"][0]["message"]["content"] == "hello from the script"
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=20)
    assert proc.returncode == 0
    assert "served 1 requests" in out


def test_simulator_command_rejects_a_bad_script(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"not": "a list"}')
    assert main(["simulator", "--script", str(bad)]) == 2
    assert main(["simulator", "--script", str(tmp_path / "missing.json")]) == 2
