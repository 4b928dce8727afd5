"""The CLI's commands in-process: output streams, exit codes (0 done, 1 rejected, 2 usage or
I/O), the JSON edit form, files and stdin, where snapshots are kept, `run` (only with
`--allow-run` on a directory; 0 when the cells ran, even if one raised), and `demo`."""

from __future__ import annotations

import io
import json
import sys
import types
from pathlib import Path

import nbformat
import pytest
from testkit.scenario import CHECKS, NOTEBOOK, header_of, line_of, person_edits, write_checks

from jupyter_hashline.cli import main, patch_arguments
from jupyter_hashline.tools import default_store_path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_read_shows_the_view_and_records_the_snapshot_in_the_default_store(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "--root", str(root), "read", NOTEBOOK, "--cells", "total")
    assert (code, err) == (0, "")
    assert out.startswith("[analysis.ipynb#") and '7:total = df["amount"].sum()' in out
    code, out, _ = run(
        capsys, "--root", str(root), "read", NOTEBOOK, "--offset", "2", "--limit", "1"
    )
    assert out.split("\n")[1] == "2:# Sales analysis" and "3:" not in out
    assert default_store_path(root).is_file()


def test_patch_reads_a_file_in_either_form_and_exits_by_outcome(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, view, _ = run(capsys, "--root", str(root), "read", NOTEBOOK)
    header, line = header_of(view), line_of(view, "print(total)")
    edits = {
        "path": NOTEBOOK,
        "tag": header[-5:-1],
        "edits": [{"op": "delete", "start": line, "end": line}],
    }
    patch = tmp_path / "edit.json"
    patch.write_text(json.dumps(edits))
    code, out, err = run(capsys, "--root", str(root), "patch", str(patch))
    assert (code, err) == (0, "") and "updated" in out
    code, out, err = run(capsys, "--root", str(root), "patch", str(patch))  # same tag, now stale
    assert (code, out) == (1, "")
    assert "Edit rejected" in err and "Nothing was written" in err
    text = tmp_path / "edit.txt"
    text.write_text("[analysis.ipynb#ZZZZ]\nexplode 1\n")
    code, out, err = run(capsys, "--root", str(root), "patch", str(text))
    assert (code, out) == (2, "") and "Edit not understood" in err  # malformed: usage
    assert (
        nbformat.read(root / NOTEBOOK, as_version=4).cells[2].source == 'total = df["amount"].sum()'
    )


def test_write_and_outputs(root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "script.txt"
    source.write_text("print('hello')\n")
    code, out, _ = run(capsys, "--root", str(root), "write", "tools/hello.py", str(source))
    assert code == 0 and "[tools/hello.py#" in out
    assert (root / "tools" / "hello.py").read_text() == "print('hello')\n"
    tag = header_of(out, "tools/hello.py").split("#")[1].rstrip("]")
    source.write_text("print('again')\n")
    code, _, err = run(capsys, "--root", str(root), "write", "tools/hello.py", str(source))
    assert code == 1 and "needs the tag of the version you replace" in err
    assert (root / "tools" / "hello.py").read_text() == "print('hello')\n"
    argv = ("--root", str(root), "write", "tools/hello.py", str(source))
    code, out, _ = run(capsys, *argv, "--tag", tag)
    assert code == 0 and (root / "tools" / "hello.py").read_text() == "print('again')\n"
    code, _, err = run(capsys, *argv, "--tag", tag)  # the tag of the version replaced above
    assert code == 1 and "changed since your read" in err
    source.write_text("print('forced')\n")
    code, _, _ = run(capsys, *argv, "--overwrite")
    assert code == 0 and (root / "tools" / "hello.py").read_text() == "print('forced')\n"
    code, out, _ = run(
        capsys, "--root", str(root), "outputs", NOTEBOOK, "load-data", "--max-chars", "25"
    )
    assert code == 0 and "cell load-data" in out and "loaded 120 rows" not in out
    assert "ask again with a larger max_chars" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["read", "missing.ipynb"], "File not found: missing.ipynb"),
        (["read", "../outside.txt"], "outside the root"),
        (["patch", "no-such-patch.txt"], "cannot read no-such-patch.txt"),
        (["outputs", "missing.ipynb", "c"], "File not found"),
    ],
)
def test_usage_and_io_errors_exit_2_with_a_message(
    root: Path, argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "--root", str(root), *argv)
    assert (code, out) == (2, "")
    assert message in err


def test_bad_command_lines_exit_2(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "--root", str(root / "nowhere"), "read", NOTEBOOK)
    assert code == 2 and "Root directory not found" in err
    for bad in ("0", "x", "٣"):  # one validator for every surface names the field
        code, out, err = run(capsys, "--root", str(root), "read", NOTEBOOK, "--offset", bad)
        assert (code, out) == (2, "") and "`offset` must be a whole number >= 1" in err
    code, _, err = run(
        capsys, "--root", str(root), "outputs", NOTEBOOK, "load-data", "--max-chars", "0"
    )
    assert code == 2 and "`max_chars` must be a whole number >= 1" in err
    for argv in (
        ["read"],
        ["--root", ".", "--server", "x", "read", "a"],
    ):
        with pytest.raises(SystemExit) as exited:
            main(argv)
        assert exited.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


def test_store_choices_decide_whether_tags_survive_the_process(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    edit = tmp_path / "edit.txt"
    _, view, _ = run(capsys, "--root", str(root), "--store", ":memory:", "read", NOTEBOOK)
    edit.write_text(f"{header_of(view)}\ninsert tail:\n+# end\n")
    code, _, err = run(capsys, "--root", str(root), "--store", ":memory:", "patch", str(edit))
    assert code == 1 and "is not a tag the snapshot store :memory: holds" in err
    monkeypatch.setenv("JUPYTER_HASHLINE_STORE", str(tmp_path / "mine.sqlite3"))
    run(capsys, "--root", str(root), "read", NOTEBOOK)
    assert (tmp_path / "mine.sqlite3").is_file() and not default_store_path(root).exists()
    code, _, _ = run(capsys, "--root", str(root), "patch", str(edit))
    assert code == 0


def test_patch_arguments_tell_the_json_form_from_edit_text() -> None:
    assert patch_arguments('{"path": "a", "tag": "1234", "edits": []}') == {
        "edits": {"path": "a", "tag": "1234", "edits": []}
    }
    assert patch_arguments(' [{"path": "a"}]') == {"edits": [{"path": "a"}]}
    text = "[a.py#1234]\ndelete 1\n"
    assert patch_arguments(text) == {"patch": text}


def test_demo_runs_the_demo_module_or_says_it_is_missing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "jupyter_hashline.demo", None)
    code, out, err = run(capsys, "demo")
    assert (code, out) == (2, "") and "the demo is missing from this install" in err
    fake = types.ModuleType("jupyter_hashline.demo")
    fake.main = lambda argv: print("the story", *argv) or 0  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "jupyter_hashline.demo", fake)
    assert run(capsys, "demo") == (0, "the story\n", "")
    assert run(capsys, "demo", "--provider", "openai") == (0, "the story --provider openai\n", "")
    with pytest.raises(SystemExit) as exited:
        main(["read", "a.ipynb", "--provider", "openai"])
    assert exited.value.code == 2


def test_repairs_warn_and_agents_keep_their_own_seen_lines(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edit = tmp_path / "edit.txt"
    _, view, _ = run(
        capsys, "--root", str(root), "--agent", "ann", "read", NOTEBOOK, "--limit", "4"
    )
    line = line_of(view, "import pandas as pd")
    edit.write_text(f"{header_of(view)}\nreplace {line}:\n+{line}:import pandas\n")
    code, _, err = run(capsys, "--root", str(root), "--agent", "bob", "patch", str(edit))
    assert code == 1 and "never shown" in err  # bob never read these lines
    code, out, _ = run(capsys, "--root", str(root), "--agent", "ann", "patch", str(edit))
    assert code == 0 and "warning:" in out and "prefix" in out
    assert "import pandas\n" in nbformat.read(root / NOTEBOOK, as_version=4).cells[1].source + "\n"
    # a person adds a line above; the edit on the old header is recovered, the repair reported
    person_edits(root, "intro", "# Sales analysis\nBy region.")
    edit.write_text(f"{header_of(out)}\nreplace {line}:\n+{line}:import pandas as pd\n")
    code, out, err = run(capsys, "--root", str(root), "--agent", "ann", "patch", str(edit))
    assert code == 0, err
    assert "recovered" in out and "warning:" in out and "prefix" in out


def checks_tag(root: Path, capsys: pytest.CaptureFixture[str], *options: str) -> str:
    write_checks(root)
    code, view, err = run(capsys, "--root", str(root), *options, "read", CHECKS)
    assert code == 0, err
    return header_of(view, CHECKS)[-5:-1]


def test_run_on_a_directory_needs_allow_run_and_says_how(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tag = checks_tag(root, capsys)
    before = (root / CHECKS).read_bytes()
    code, out, err = run(capsys, "--root", str(root), "run", CHECKS, "--tag", tag, "--cell", "calc")
    assert (code, out) == (1, "")
    assert "Run refused, nothing ran" in err and "--allow-run" in err
    assert (root / CHECKS).read_bytes() == before


def test_run_exit_codes_0_ran_1_rejected_2_usage(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tag = checks_tag(root, capsys)
    base = ["--root", str(root), "--allow-run", "run", CHECKS, "--tag", tag]
    code, out, err = run(capsys, *base, "--cell", "calc", "--cell", "fail")
    assert (code, err) == (0, ""), err
    assert "ran 2 of 2 cells" in out and "\n42\n" in out
    assert "cell fail: error (execution count 2, " in out and "ZeroDivisionError" in out
    stored = nbformat.read(root / CHECKS, as_version=4).cells
    assert stored[1].outputs[0]["text"] == "42\n" and stored[2].outputs[0]["ename"]
    for cells, phrase in (
        (["--cell", "intro"], "only code cells run"),
        (["--cell", "nope"], "has no cell with id nope"),
        ([], "Name the cells to run by id"),  # a directory remembers no edit between commands
    ):
        code, out, err = run(capsys, *base, *cells)
        assert (code, out) == (1, "") and phrase in err, err
    person_edits(root, "calc", "print('changed')", CHECKS)
    code, out, err = run(capsys, *base, "--cell", "calc")
    assert (
        (code, out) == (1, "") and err.startswith("Run refused:") and "*4:print('changed')" in err
    )
    for options, phrase in (
        (["--cell", "calc", "--timeout", "0"], "`timeout_s` must be a number of seconds"),
        (["--cell", "calc", "--max-chars", "0"], "`max_chars` must be a whole number"),
    ):
        code, out, err = run(capsys, *base, *options)
        assert (code, out) == (2, "") and phrase in err
    code, out, err = run(
        capsys, "--root", str(root), "--allow-run", "run", "gone.ipynb", "--tag", tag
    )
    assert (code, out) == (2, "") and "File not found: gone.ipynb" in err
    with pytest.raises(SystemExit) as exited:
        main(["--root", str(root), "run", CHECKS])  # --tag is required
    assert exited.value.code == 2


def test_eval_runs_code_in_a_fresh_kernel_and_says_variables_do_not_persist(
    root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    tag = checks_tag(root, capsys)
    base = ["--root", str(root), "--allow-run"]
    code, out, err = run(capsys, *base, "run", CHECKS, "--tag", tag, "--cell", "calc")
    assert code == 0 and "note: this command's kernel was shut down" in out, err
    before = (root / CHECKS).read_bytes()
    code, out, err = run(capsys, *base, "eval", CHECKS, "6 * 9")
    assert (code, err) == (0, "") and "cell (eval): ok" in out and "\n54\n" in out
    assert "variables do not persist between commands" in out
    code, out, err = run(capsys, *base, "eval", CHECKS, "answer")  # defined by the run above
    assert code == 0 and "cell (eval): error" in out and "NameError" in out
    monkeypatch.setattr(sys, "stdin", types.SimpleNamespace(buffer=io.BytesIO(b"print('in')\n")))
    code, out, err = run(capsys, *base, "eval", CHECKS, "-")
    assert code == 0 and "[1] stream stdout\nin\n" in out
    assert (root / CHECKS).read_bytes() == before
    code, out, err = run(capsys, "--root", str(root), "eval", CHECKS, "1")
    assert (code, out) == (1, "") and "--allow-run" in err
