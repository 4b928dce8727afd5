"""What an agent reads about a run: status, count, duration, outputs as clipped plain text."""

from __future__ import annotations

import base64
import struct

from jupyter_hashline.kernels import CellRun, KernelRun, RunStatus, with_note_appended


def png(width: int, height: int) -> str:
    header = b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR"
    body = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return base64.b64encode(header + body + b"\x00" * 38_000).decode("ascii")


IMAGE = png(640, 480)
ERROR = {
    "output_type": "error",
    "ename": "ZeroDivisionError",
    "evalue": "division by zero",
    "traceback": ["\x1b[0;31mZeroDivisionError\x1b[0m Traceback", "\x1b[1;32m----> 1\x1b[0m 1/0"],
}


def test_an_ok_cell_shows_its_text_and_an_image_only_as_a_placeholder() -> None:
    run = CellRun(
        "plot",
        RunStatus.OK,
        execution_count=3,
        duration_ms=1250,
        outputs=(
            {"output_type": "stream", "name": "stdout", "text": "\x1b[32m42\x1b[0m\n"},
            {
                "output_type": "display_data",
                "data": {"image/png": IMAGE, "text/plain": "<Figure>"},
                "metadata": {},
            },
        ),
    )
    text = run.to_text()
    assert text.splitlines() == [
        "cell plot: ok (execution count 3, 1.2 s)",
        "[1] stream stdout",
        "42",
        "[2] display_data [image/png 640x480, 37 KB]",
        "<Figure>",
    ]
    assert IMAGE[:40] not in text and "\x1b" not in text


def test_an_error_reads_as_name_value_and_traceback_without_colour_codes() -> None:
    text = CellRun("c", RunStatus.ERROR, 5, 12, (ERROR,)).to_text()
    assert text.splitlines() == [
        "cell c: error (execution count 5, 12 ms)",
        "[1] error ZeroDivisionError: division by zero",
        "ZeroDivisionError Traceback",
        "----> 1 1/0",
    ]


def test_long_output_is_clipped_at_max_chars_with_a_note() -> None:
    stream = {"output_type": "stream", "name": "stdout", "text": "x" * 10_000}
    text = CellRun("c", RunStatus.OK, 1, 5, (stream,)).to_text(max_chars=100)
    assert len(text) < 300
    assert "[clipped:" in text and "larger max_chars" in text


def test_cells_that_did_not_run_say_why_and_have_no_outputs_to_write() -> None:
    run = KernelRun(
        path="nb.ipynb",
        kernel="python3",
        cells=(
            CellRun("a", RunStatus.TIMEOUT, 2, 2000, note="interrupted after 2 s (timeout_s)"),
            CellRun("b", RunStatus.SKIPPED, note="not run, because cell a did not finish ok"),
            CellRun("c", RunStatus.BUSY, note="the kernel stayed busy"),
        ),
        notes=("started a python3 kernel for nb.ipynb",),
        write_warnings=("w",),
    )
    assert run.executed == {"a": ([], 2)}
    text = run.to_text("[nb.ipynb#ABCD]", plan_notes=("skipped cell intro (markdown)",))
    assert text.splitlines() == [
        "[nb.ipynb#ABCD] ran 1 of 3 cells in kernel python3",
        "cell a: timeout (execution count 2, 2.0 s); interrupted after 2 s (timeout_s)",
        "(no output)",
        "cell b: skipped (not run, because cell a did not finish ok)",
        "cell c: busy (the kernel stayed busy)",
        "note: skipped cell intro (markdown)",
        "note: started a python3 kernel for nb.ipynb",
        "warning: w",
    ]
    cells = run.to_json()["cells"]
    assert cells[0] == {
        "cell": "a",
        "status": "timeout",
        "execution_count": 2,
        "duration_ms": 2000,
        "outputs": "",
        "note": "interrupted after 2 s (timeout_s)",
    }


def test_a_note_is_appended_only_to_cells_that_ran_and_have_one() -> None:
    died = CellRun("a", RunStatus.ERROR, note="the kernel died")
    quiet = CellRun("b", RunStatus.OK)
    skipped = CellRun("c", RunStatus.SKIPPED, note="an earlier cell failed")
    runs = with_note_appended((died, quiet, skipped), "it is started again at the next run")
    assert runs[0].note == "the kernel died; it is started again at the next run"
    assert runs[1:] == (quiet, skipped)
    assert died.note == "the kernel died"  # values are frozen: new runs, not changed ones
