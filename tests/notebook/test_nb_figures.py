"""`collect_figures`: PNG/JPEG outputs attached at most 1,024 px on a side and under the byte
caps, each named by cell and output number; SVG, broken data and anything over a cap withheld
with the reason."""

from __future__ import annotations

import base64
import io
import random
from typing import Any

from PIL import Image

from jupyter_hashline.notebook import FigureLimits, collect_figures


def image_output(width: int, height: int, fmt: str = "PNG", noise: bool = False) -> dict[str, Any]:
    image = Image.new("RGB", (width, height), (30, 120, 200))
    if noise:  # incompressible pixels: a large PNG
        rng = random.Random(7)
        image.putdata([tuple(rng.randrange(256) for _ in range(3)) for _ in range(width * height)])
    out = io.BytesIO()
    image.save(out, format=fmt)
    mime = "image/png" if fmt == "PNG" else "image/jpeg"
    data = base64.b64encode(out.getvalue()).decode()
    return {
        "output_type": "display_data",
        "metadata": {},
        "data": {mime: data, "text/plain": "<Figure>"},
    }


def decoded_size(data: str) -> tuple[int, int]:
    with Image.open(io.BytesIO(base64.b64decode(data))) as image:
        return image.size


STREAM = {"output_type": "stream", "name": "stdout", "text": "hi\n"}
SVG = {"output_type": "display_data", "metadata": {}, "data": {"image/svg+xml": "<svg/>"}}


def test_a_small_png_is_attached_as_it_is_and_named_by_cell_and_output() -> None:
    output = image_output(640, 480)
    figures = collect_figures([("plot", [STREAM, output])])
    [figure] = figures.attached
    assert (figure.cell, figure.output_index, figure.mime) == ("plot", 2, "image/png")
    assert (figure.width, figure.height) == (640, 480) == decoded_size(figure.data)
    assert figure.data == output["data"]["image/png"]
    assert figures.lines() == ["image attached: cell plot output [2], image/png 640x480"]


def test_a_large_image_is_downscaled_to_1024_on_its_longest_side() -> None:
    figures = collect_figures(
        [("big", [image_output(3000, 1500), image_output(800, 2048, "JPEG")])]
    )
    png, jpeg = figures.attached
    assert (png.width, png.height) == (1024, 512) == decoded_size(png.data)
    assert (jpeg.mime, jpeg.width, jpeg.height) == ("image/jpeg", 400, 1024)
    assert decoded_size(jpeg.data) == (400, 1024)
    assert png.caption().endswith("image/png 1024x512, downscaled from 3000x1500")


def test_svg_and_broken_data_stay_placeholders_with_the_reason() -> None:
    broken = {"output_type": "display_data", "data": {"image/png": "not base64!"}}
    garbage = {
        "output_type": "display_data",
        "data": {"image/png": base64.b64encode(b"xx").decode()},
    }
    gif = {"output_type": "display_data", "data": {"image/gif": "R0lGOD"}}
    figures = collect_figures([("c", [SVG, broken, garbage, gif])])
    assert figures.attached == ()
    assert [line.rsplit(": ", 1)[0] for line in figures.withheld] == [
        "image not attached: cell c output [1], image/svg+xml",
        "image not attached: cell c output [2], image/png",
        "image not attached: cell c output [3], image/png",
        "image not attached: cell c output [4], image/gif",
    ]
    assert "SVG is vector text" in figures.withheld[0]
    assert "not valid base64" in figures.withheld[1]
    assert "could not be read as an image" in figures.withheld[2]
    assert "only PNG and JPEG" in figures.withheld[3]


def test_an_image_over_the_per_image_cap_tries_jpeg_then_is_withheld() -> None:
    noisy = image_output(300, 300, noise=True)  # ~270 KB as PNG, far less as JPEG
    limits = FigureLimits(max_image_bytes=100 * 1024)
    [figure] = collect_figures([("n", [noisy])], limits).attached
    assert figure.mime == "image/jpeg" and len(base64.b64decode(figure.data)) <= 100 * 1024
    tiny = FigureLimits(max_image_bytes=1024)
    figures = collect_figures([("n", [noisy])], tiny)
    assert figures.attached == ()
    [reason] = figures.withheld
    assert "over the per-image cap of 1 KB" in reason


def test_images_past_the_calls_budget_are_withheld_in_output_order() -> None:
    one = image_output(200, 200)
    size = len(base64.b64decode(one["data"]["image/png"]))
    limits = FigureLimits(max_call_bytes=size * 2)
    figures = collect_figures([("a", [one, one]), ("b", [one])], limits)
    assert [(f.cell, f.output_index) for f in figures.attached] == [("a", 1), ("a", 2)]
    [reason] = figures.withheld
    assert reason.startswith("image not attached: cell b output [1], image/png: this reply's")
    assert "ask notebook_outputs for cell b" in reason


def test_outputs_as_lists_of_lines_read_the_same() -> None:
    output = image_output(50, 40)
    data = output["data"]["image/png"]
    output["data"]["image/png"] = [data[:30] + "\n", data[30:]]
    [figure] = collect_figures([("x", [output])]).attached
    assert (figure.width, figure.height) == (50, 40)
