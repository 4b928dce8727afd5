"""The fault oracle (testkit.faults.Trial) can fail: it is judged on files it is given here, without
recording anything in the tally."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
from testkit.faults import TEMP_SUFFIX, Edit, Trial

TEXT = b"\xef\xbb\xbfimport os\r\nvalue = 1\r\nprint(value)\r\n"


def started(root: Path) -> Trial:
    (root / "script.py").write_bytes(TEXT)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("a = 1\nb = 2", id="c")])
    nb.cells[0].outputs = [nbformat.v4.new_output("stream", name="stdout", text="1\n")]
    nbformat.write(nb, root / "nb.ipynb")
    trial = Trial("oracle self-test", root)
    trial.before = {"script.py": TEXT, "nb.ipynb": (root / "nb.ipynb").read_bytes()}
    return trial


def test_untouched_files_survive_and_any_change_does_not(tmp_path: Path) -> None:
    trial = started(tmp_path)
    assert trial.judge() == ""
    (tmp_path / "script.py").write_bytes(TEXT.replace(b"\r\n", b"\n"))  # eol rewritten
    assert "neither as it was" in trial.judge()


def test_an_acknowledged_edit_must_be_there_exactly(tmp_path: Path) -> None:
    trial = started(tmp_path)
    trial.acknowledge(Edit("script.py", "replace", 2, "value = 2"))
    assert "neither as it was" in trial.judge()  # acknowledged, yet not on disk
    (tmp_path / "script.py").write_bytes(TEXT.replace(b"value = 1", b"value = 2"))
    assert trial.judge() == ""  # BOM and CRLF kept
    (tmp_path / "script.py").write_bytes(TEXT.replace(b"value = 1", b"value = 2")[3:])
    assert trial.judge() != ""  # BOM dropped


def test_a_notebook_edit_keeps_everything_else_and_the_file_stays_valid(tmp_path: Path) -> None:
    trial = started(tmp_path)
    trial.acknowledge(Edit("nb.ipynb", "replace", 2, "b = 3", cell=0))
    nb = json.loads((tmp_path / "nb.ipynb").read_text())
    nb["cells"][0]["source"] = "a = 1\nb = 3"
    (tmp_path / "nb.ipynb").write_text(json.dumps(nb))
    assert trial.judge() == ""
    nb["cells"][0]["outputs"] = []
    (tmp_path / "nb.ipynb").write_text(json.dumps(nb))
    assert "exactly the acknowledged edits" in trial.judge()
    (tmp_path / "nb.ipynb").write_text(json.dumps(nb)[:-40])  # torn
    assert "not a valid notebook" in trial.judge()


def test_an_edit_of_unknown_outcome_may_land_but_never_half(tmp_path: Path) -> None:
    trial = started(tmp_path)
    trial.outcome_unknown(Edit("script.py", "replace", 2, "value = 2"))
    assert trial.judge() == ""
    (tmp_path / "script.py").write_bytes(TEXT.replace(b"value = 1", b"value = 2"))
    assert trial.judge() == ""
    (tmp_path / "script.py").write_bytes(TEXT[: len(TEXT) // 2])
    assert trial.judge() != ""


def test_a_temporary_file_left_behind_fails_unless_a_kill_left_it(tmp_path: Path) -> None:
    trial = started(tmp_path)
    (tmp_path / f".script.py.x{TEMP_SUFFIX}").write_bytes(b"half")
    assert "temporary files left" in trial.judge()
    trial.leftovers = True
    assert trial.judge() == ""
