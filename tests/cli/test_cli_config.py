"""`jupyter-hashline config` and `jupyter hashline --help-all`: every configuration trait of the
extension and of agent sessions, with its help, in the form `jupyter server --help-all` prints
traits (which cannot list an extension's: it prints before any extension is found)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from jupyter_hashline.agent.settings import HashlineSession
from jupyter_hashline.cli import main
from jupyter_hashline.server.app import HashlineExtension


def test_every_trait_is_listed_with_its_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config"]) == 0
    out = capsys.readouterr().out
    for cls in (HashlineExtension, HashlineSession):
        traits = cls.class_own_traits(config=True)
        assert len(traits) >= 4
        for name, trait in traits.items():
            assert f"--{cls.__name__}.{name}=" in out
            first_words = " ".join(str(trait.help).split()[:4])
            assert first_words in " ".join(out.split()), name
    assert "answer_yes" not in out  # inherited application plumbing is not ours to list


def test_jupyter_hashline_help_all_lists_every_trait() -> None:
    """Through the `jupyter` command, as a user types it (it dispatches to jupyter-hashline)."""
    jupyter = shutil.which("jupyter", path=str(Path(sys.executable).parent))
    assert jupyter is not None, "jupyter is installed next to this interpreter"
    done = subprocess.run(
        [jupyter, "hashline", "--help-all"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    for cls in (HashlineExtension, HashlineSession):
        for name in cls.class_own_traits(config=True):
            assert f"--{cls.__name__}.{name}=" in done.stdout
