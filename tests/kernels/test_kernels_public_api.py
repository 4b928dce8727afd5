"""The public names of jupyter_hashline.kernels: pinned. Importing the package loads no
kernel or server machinery; the directory pool (jupyter_client) only when imported itself."""

from __future__ import annotations

import subprocess
import sys

import pytest

import jupyter_hashline.kernels as kernels

HEAVY = ("jupyter_client", "zmq", "tornado", "jupyter_server", "ipywidgets")


def test_exported_members() -> None:
    assert sorted(kernels.__all__) == [
        "CellRun",
        "CellRunner",
        "CellToRun",
        "DEFAULT_TIMEOUT_S",
        "DirectoryKernelPool",
        "EVAL_CELL",
        "KernelAction",
        "KernelDiedError",
        "KernelError",
        "KernelOutcome",
        "KernelRun",
        "KernelState",
        "KernelUnavailableError",
        "MAX_TIMEOUT_S",
        "NotRunnableError",
        "OutputCollector",
        "OutputEvent",
        "OutputListener",
        "OutputsWriter",
        "RunPlan",
        "RunStatus",
        "StaleCellsError",
        "UnseenCellsError",
        "WriteLock",
        "added_or_changed_cells",
        "checked_timeout",
        "choose_kernel",
        "execute_cells",
        "notebook_metadata",
        "own_client",
        "plan_run",
        "with_note_appended",
        "write_back",
    ]
    for name in kernels.__all__:
        assert getattr(kernels, name) is not None


def loaded_after(code: str) -> list[str]:
    probe = f"import sys\n{code}\nprint(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=False, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return [m for m in done.stdout.strip().split(",") if m]


def test_the_package_loads_no_kernel_or_server_code() -> None:
    assert loaded_after("import jupyter_hashline.kernels") == []


def test_the_directory_pool_loads_jupyter_client_but_no_server() -> None:
    loaded = loaded_after("import jupyter_hashline.kernels.pool")
    assert "jupyter_client" in loaded
    assert "jupyter_server" not in loaded and "ipywidgets" not in loaded


def test_the_face_names_the_kernel_clients_and_loads_them_when_asked() -> None:
    loaded = loaded_after("from jupyter_hashline.kernels import own_client, DirectoryKernelPool")
    assert "jupyter_client" in loaded and "jupyter_server" not in loaded
    face = kernels
    from jupyter_hashline.kernels.clients import own_client
    from jupyter_hashline.kernels.pool import DirectoryKernelPool

    assert (face.own_client, face.DirectoryKernelPool) == (own_client, DirectoryKernelPool)
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        face.nothing_here  # noqa: B018
