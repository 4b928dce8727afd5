"""A notebook's file text as a contents manager wants it (`notebook.contents`)."""

from __future__ import annotations

import json

import nbformat
import pytest

from jupyter_hashline.notebook import (
    InvalidNotebookError,
    contents_model,
    is_paired,
    parse_notebook_text,
)


def notebook_text(**metadata: object) -> str:
    nb = nbformat.v4.new_notebook(metadata=metadata)
    nb.cells = [nbformat.v4.new_code_cell("a = 1\nb = 2"), nbformat.v4.new_markdown_cell("# T")]
    return nbformat.writes(nb)


def test_a_notebook_text_parses_to_its_json() -> None:
    text = notebook_text()
    assert parse_notebook_text("a.ipynb", text) == json.loads(text)


@pytest.mark.parametrize(
    ("text", "why"),
    [("{not json", "is not JSON"), ('{"cells": 3}', "no `cells` list"), ("[]", "no `cells`")],
)
def test_a_text_that_is_no_notebook_is_refused_naming_the_path(text: str, why: str) -> None:
    with pytest.raises(InvalidNotebookError, match=why) as caught:
        parse_notebook_text("work/a.ipynb", text)
    assert "work/a.ipynb" in str(caught.value)


def test_the_contents_model_is_what_nbformat_reads_gives() -> None:
    text = notebook_text()
    model = contents_model("a.ipynb", text)
    assert model["type"] == "notebook"
    assert model["format"] == "json"
    assert model["content"] == nbformat.reads(text, as_version=4)
    assert model["content"]["cells"][0]["source"] == "a = 1\nb = 2"


def test_the_contents_model_of_a_broken_text_is_refused() -> None:
    with pytest.raises(InvalidNotebookError):
        contents_model("a.ipynb", '{"cells": {}}')


def test_pairing_is_read_from_jupytext_formats() -> None:
    assert is_paired(notebook_text(jupytext={"formats": "ipynb,py:percent"}))
    assert not is_paired(notebook_text(jupytext={"formats": ""}))
    assert not is_paired(notebook_text(other={"formats": "ipynb,py"}))
    assert not is_paired(notebook_text())
    assert not is_paired('{"formats": ')  # not JSON: not paired, no error
