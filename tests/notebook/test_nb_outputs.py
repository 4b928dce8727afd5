"""Output summaries and cell_outputs: clipped text, sized placeholders, no base64, no ANSI."""

from __future__ import annotations

import base64

import pytest
from testkit.nb_strategies import png_b64

from jupyter_hashline.hashline.errors import AnchorError
from jupyter_hashline.notebook import cell_outputs, output_summary, outputs
from jupyter_hashline.notebook.outputs import human_size, payload_label

PNG = png_b64(640, 480)


def code_cell(outputs: list, count: int | None = 7) -> dict:
    return {"cell_type": "code", "execution_count": count, "id": "plot", "metadata": {},
            "outputs": outputs, "source": "plot()"}  # fmt: skip


def notebook(*cells: dict) -> dict:
    return {"cells": list(cells), "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


OUTPUTS = [
    {"output_type": "stream", "name": "stdout", "text": "a\nb\nc\n"},
    {"output_type": "display_data", "metadata": {},
     "data": {"image/png": PNG, "text/plain": "<Figure size 640x480>"}},
    {"output_type": "error", "ename": "ValueError", "evalue": "bad \x1b[1mvalue\x1b[0m",
     "traceback": ["\x1b[0;31mValueError\x1b[0m Traceback", "\x1b[1;32m----> 1\x1b[0m boom()"]},
]  # fmt: skip


def test_summary_names_each_output_compactly() -> None:
    summary = output_summary(code_cell(OUTPUTS))
    assert (
        summary
        == "outputs: stream (3 lines); image/png 640x480 (69 B); error ValueError: bad value"
    )
    assert output_summary(code_cell([])) is None
    assert output_summary({"cell_type": "markdown", "source": "x"}) is None


def test_summary_of_many_outputs_is_bounded() -> None:
    many = [{"output_type": "stream", "name": "stdout", "text": "x"}] * 9
    summary = output_summary(code_cell(many))
    assert summary is not None and summary.endswith("; +4 more")


def test_cell_outputs_renders_text_placeholders_and_stripped_tracebacks() -> None:
    text = cell_outputs(notebook(code_cell(OUTPUTS)), "plot")
    assert text.splitlines() == [
        "cell plot: 3 outputs (execution count 7)",
        "[1] stream stdout",
        "a",
        "b",
        "c",
        "[2] display_data [image/png 640x480, 69 B]",
        "<Figure size 640x480>",
        "[3] error ValueError: bad value",
        "ValueError Traceback",
        "----> 1 boom()",
    ]
    assert PNG.strip()[:20] not in text and "\x1b" not in text


def test_cell_outputs_clips_with_a_visible_marker() -> None:
    long = [{"output_type": "stream", "name": "stdout", "text": "x" * 10_000}]
    text = cell_outputs(notebook(code_cell(long)), "plot", max_chars=100)
    body = text.split("\n", 1)[1]
    assert body.startswith("[1] stream stdout\n" + "x" * 82)
    assert body.endswith(
        "[clipped: 9,918 more characters; ask again with a larger max_chars to see them]"
    )


def test_cell_outputs_of_unknown_ids_and_markdown_cells() -> None:
    nb = notebook(
        code_cell([]), {"cell_type": "markdown", "id": "md", "metadata": {}, "source": ""}
    )
    with pytest.raises(AnchorError, match=r"No cell id=nope.*Known ids: plot, md"):
        cell_outputs(nb, "nope")
    assert cell_outputs(nb, "md") == "cell md is a markdown cell: it has no outputs"
    assert cell_outputs(nb, "plot") == "cell plot: 0 outputs (execution count 7)"


def test_payload_labels_read_image_headers_and_metadata() -> None:
    gif = "R0lGODlhCgAUAIAAAAAAAP///ywAAAAACgAUAAACAkQBADs="
    assert payload_label("image/gif", gif) == "image/gif 10x20, 35 B"
    assert payload_label("image/jpeg", "/9j/", {"image/jpeg": {"width": 3, "height": 4}}) == (
        "image/jpeg 3x4, 3 B"
    )
    assert payload_label("application/pdf", "x" * 4096) == "application/pdf, 4 KB"


@pytest.mark.parametrize("size", [0, 1, 2, 3, 5000, 6001, 200_000, 200_002])
@pytest.mark.parametrize("wrap", ["none", "mime", "mime-no-final-break", "crlf", "lines"])
def test_image_sizes_are_the_decoded_byte_counts_however_the_base64_is_wrapped(
    size: int, wrap: str
) -> None:
    data = bytes(range(256)) * (size // 256) + bytes(size % 256)
    plain, mime = base64.b64encode(data).decode(), base64.encodebytes(data).decode()
    value: str | list[str] = {
        "none": plain,
        "mime": mime,
        "mime-no-final-break": mime.rstrip("\n"),
        "crlf": mime.replace("\n", "\r\n"),
        "lines": mime.splitlines(keepends=True),
    }[wrap]
    assert outputs._base64_size(value) == size
    assert payload_label("image/x-raw", value) == f"image/x-raw, {human_size(size)}"


def test_breaks_after_the_last_wrapped_line_are_counted() -> None:
    mime = base64.encodebytes(bytes(60_000)).decode()
    assert outputs._base64_size(mime + "\n\n") == 60_000
    assert outputs._base64_size(mime[:-40] + "\n" + mime[-40:]) == 60_000
