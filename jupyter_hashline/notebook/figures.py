"""Figures for multimodal agents: the PNG and JPEG outputs of cells, sized to be looked at.

`collect_figures(cells, limits)` takes `(cell id, outputs)` pairs (nbformat v4 output dicts,
in the order an agent's text shows them) and returns the images to attach and, for every
image output it does not attach, the reason.

Invariants:
- Only `image/png` and `image/jpeg` are attached. SVG (text a model cannot see as a picture),
  other image types, payloads that do not decode, and images over a cap are withheld, each with
  a note naming the cell, the output number and why; the text placeholder stays in all cases.
- An attached image's longest side is at most `limits.max_side` pixels (downscaled with
  Pillow, aspect ratio kept); its bytes are at most `limits.max_image_bytes` (a PNG over it is
  tried once as a JPEG); all images of one call together at most `limits.max_call_bytes`
  (images past that are withheld, in output order).
- Each figure names its cell and its output number `[N]`, as the text's placeholder does, so
  the agent knows which cell drew it. Pure: no I/O; Pillow is imported only when an image is.
"""

from __future__ import annotations

import base64
import binascii
import io
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .outputs import human_size

__all__ = ["Figure", "FigureLimits", "Figures", "collect_figures"]

ATTACHED_MIMES = ("image/png", "image/jpeg")


@dataclass(frozen=True, slots=True)
class FigureLimits:
    """How large the figures of one call may be."""

    max_side: int = 1024
    max_image_bytes: int = 512 * 1024
    max_call_bytes: int = 2 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Figure:
    """One attached image: `data` is base64; `width`/`height` its size as attached."""

    cell: str
    output_index: int
    mime: str
    data: str
    width: int
    height: int
    original: tuple[int, int] | None = None  # the size before downscaling, if it was

    def caption(self) -> str:
        size = f"{self.width}x{self.height}"
        if self.original is not None:
            size += f", downscaled from {self.original[0]}x{self.original[1]}"
        return f"image attached: cell {self.cell} output [{self.output_index}], {self.mime} {size}"

    def to_json(self) -> dict[str, Any]:
        return {
            "cell": self.cell,
            "output_index": self.output_index,
            "mime": self.mime,
            "data": self.data,
            "width": self.width,
            "height": self.height,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Figure:
        return cls(
            cell=str(data["cell"]),
            output_index=int(data["output_index"]),
            mime=str(data["mime"]),
            data=str(data["data"]),
            width=int(data["width"]),
            height=int(data["height"]),
        )


@dataclass(frozen=True, slots=True)
class Figures:
    """The figures of one call: those attached and notes on those withheld."""

    attached: tuple[Figure, ...] = ()
    withheld: tuple[str, ...] = ()

    def lines(self) -> list[str]:
        """What the agent's text says about them: one line per image output."""
        return [figure.caption() for figure in self.attached] + list(self.withheld)


@dataclass(frozen=True, slots=True)
class _Encoded:
    mime: str
    data: bytes
    width: int
    height: int
    original: tuple[int, int] | None


def collect_figures(
    cells: Iterable[tuple[str, Sequence[Any]]], limits: FigureLimits = FigureLimits()
) -> Figures:
    """The figures of `cells` (see the module docstring)."""
    attached: list[Figure] = []
    withheld: list[str] = []
    budget = limits.max_call_bytes
    for cell, outputs in cells:
        for index, output in enumerate(outputs, 1):
            mime, payload = _image_of(output)
            if mime is None:
                continue
            where = f"image not attached: cell {cell} output [{index}], {mime}"
            encoded = _encode(mime, payload, limits)
            if isinstance(encoded, str):
                withheld.append(f"{where}: {encoded}")
            elif len(encoded.data) > budget:
                withheld.append(
                    f"{where}: this reply's image budget ({human_size(limits.max_call_bytes)}) "
                    f"is used up; ask notebook_outputs for cell {cell} to see it"
                )
            else:
                budget -= len(encoded.data)
                attached.append(_figure(cell, index, encoded))
    return Figures(tuple(attached), tuple(withheld))


def _figure(cell: str, index: int, encoded: _Encoded) -> Figure:
    return Figure(
        cell=cell,
        output_index=index,
        mime=encoded.mime,
        data=base64.b64encode(encoded.data).decode("ascii"),
        width=encoded.width,
        height=encoded.height,
        original=encoded.original,
    )


def _image_of(output: Any) -> tuple[str | None, Any]:
    """The output's first image type and payload, or (None, None)."""
    if not isinstance(output, Mapping):
        return None, None
    data = output.get("data")
    if not isinstance(data, Mapping):
        return None, None
    for mime, payload in data.items():
        if isinstance(mime, str) and mime.startswith("image/"):
            return mime, payload
    return None, None


def _encode(mime: str, payload: Any, limits: FigureLimits) -> _Encoded | str:
    """The image as it will be attached, or why it is not."""
    if mime == "image/svg+xml":
        return "SVG is vector text, not a picture; its placeholder stays in the text"
    if mime not in ATTACHED_MIMES:
        return "only PNG and JPEG images are attached"
    raw = _decoded(payload)
    if raw is None:
        return "its data is not valid base64"
    from PIL import Image

    try:  # Pillow's "not an image" is an OSError; a decompression bomb is its own error
        encoded = _sized(mime, raw, limits.max_side)
        if len(encoded.data) > limits.max_image_bytes and encoded.mime == "image/png":
            encoded = _as_jpeg(raw, limits.max_side)
    except (OSError, ValueError, Image.DecompressionBombError) as err:
        return f"it could not be read as an image ({type(err).__name__})"
    if len(encoded.data) > limits.max_image_bytes:
        return (
            f"{human_size(len(encoded.data))} is over the per-image cap of "
            f"{human_size(limits.max_image_bytes)}"
        )
    return encoded


def _decoded(payload: Any) -> bytes | None:
    text = "".join(payload) if isinstance(payload, list) else payload
    if not isinstance(text, str):
        return None
    try:
        return base64.b64decode("".join(text.split()), validate=True)
    except (binascii.Error, ValueError):
        return None


def _sized(mime: str, raw: bytes, max_side: int) -> _Encoded:
    """`raw` as is when it is small enough, else downscaled and encoded in its own format."""
    from PIL import Image

    with Image.open(io.BytesIO(raw)) as image:
        width, height = image.size
        if max(width, height) <= max_side:
            image.verify()
            return _Encoded(mime, raw, width, height, None)
        image.thumbnail((max_side, max_side))
        out = io.BytesIO()
        if mime == "image/png":
            image.save(out, format="PNG")
        else:
            image.convert("RGB").save(out, format="JPEG", quality=85)
        new_width, new_height = image.size
        return _Encoded(mime, out.getvalue(), new_width, new_height, (width, height))


def _as_jpeg(raw: bytes, max_side: int) -> _Encoded:
    """A PNG too large for the cap, as a JPEG (photos and dense plots shrink a lot)."""
    from PIL import Image

    with Image.open(io.BytesIO(raw)) as image:
        width, height = image.size
        image.thumbnail((max_side, max_side))
        rgb = image.convert("RGB")
        out = io.BytesIO()
        rgb.save(out, format="JPEG", quality=80)
        new_width, new_height = rgb.size
        original = (width, height) if (new_width, new_height) != (width, height) else None
        return _Encoded("image/jpeg", out.getvalue(), new_width, new_height, original)
