"""Cell outputs as an agent may read them: one-line summaries and clipped text renderings.

Invariants:
- Never base64 or other binary payloads in agent text: images and other binary data appear as
  sized placeholders (`[image/png 640x480, 34 KB]`); dimensions come from the image header
  (PNG, GIF, JPEG) or the output metadata, sizes from the decoded byte count.
- Summaries and placeholders read only an output's type, length and (images) header bytes:
  payloads are never joined, decoded or copied. Outputs may be stored as strings or as lists
  of lines (as in the file); both read the same.
- `cell_outputs` never returns more than `max_chars` characters of output text; when it clips,
  a visible marker says how much was left out and how to see more.
- ANSI escape sequences (colors in tracebacks and logs) are stripped.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import struct
from collections.abc import Mapping, Sequence
from itertools import repeat
from typing import Any

from ..hashline.errors import AnchorError
from ..hashline.text import line_count
from .ids import display_ids
from .projection import cell_type_of

DEFAULT_MAX_CHARS = 4000
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
_TEXT_PREFERENCE = ("text/plain", "text/markdown", "text/latex", "text/html")
_MAX_SUMMARY_ITEMS = 5


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


def human_size(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{round(size / 1024)} KB"
    return f"{size / (1024 * 1024):.1f} MB"


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "".join(value)
    return json.dumps(value, ensure_ascii=False, indent=1, sort_keys=True)


def _lines_in(value: Any) -> int:
    """`line_count` of a text payload (a string or a list of lines) without joining it."""
    if isinstance(value, list) and value and isinstance(value[-1], str):
        try:
            breaks = sum(map(str.count, value, repeat("\n")))
        except TypeError:  # not a list of strings
            return line_count(_as_text(value))
        return breaks + (0 if value[-1].endswith("\n") else 1)
    return line_count(_as_text(value))


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


# -- binary payloads ---------------------------------------------------------------------------


def _decoded_head(value: Any, chars: int) -> bytes:
    """The first bytes of a base64 payload (a string or a list of lines), from its first
    `chars` characters only: the rest is never read or copied."""
    head = value[:chars] if isinstance(value, str) else "".join(_first_chars(value, chars))
    data = "".join(head.split())
    try:
        return base64.b64decode(data[: len(data) - len(data) % 4])
    except (binascii.Error, ValueError):
        return b""


def _first_chars(lines: Any, chars: int) -> list[str]:
    taken: list[str] = []
    for line in lines if isinstance(lines, list) else ():
        if not isinstance(line, str) or chars <= 0:
            break
        taken.append(line[:chars])
        chars -= len(line)
    return taken


def _base64_size(value: Any) -> int:
    """Decoded byte count of a base64 payload, counted without joining or copying it."""
    parts = value if isinstance(value, list) else [value]
    if not set(map(type, parts)) <= {str}:  # a type check per line, in C
        return 0
    if len(parts) == 1:
        breaks = _line_breaks(parts[0])
    else:  # stored as lines: count in C over the list, without a call per line
        breaks = sum(map(str.count, parts, repeat("\n")))
        if parts and "\r" in parts[0][:80]:
            breaks += sum(map(str.count, parts, repeat("\r")))
    length = sum(map(len, parts)) - breaks
    padding = 0
    for part in reversed(parts):
        stripped = part[-80:].rstrip()
        if not stripped and not part.isspace():  # more than 80 trailing blanks: rare
            stripped = part.rstrip()
        padding += len(stripped) - len(stripped.rstrip("="))
        if stripped:
            break
    return max(0, length * 3 // 4 - padding)


_EXACT_BREAKS_BELOW = 8192


def _line_breaks(part: str) -> int:
    """The line-break characters of a base64 string (its only whitespace).

    A long payload wrapped at a fixed width (MIME's 76 columns, as older IPython wrote
    images) is counted by its wrap: every (width+1)-th character is checked to be a break
    (a strided slice, a few KB for megabytes) and only the last partial line is searched;
    anything else, and any short payload, is counted character by character."""
    crlf = "\r" in part[:80]
    width = -1 if crlf or len(part) < _EXACT_BREAKS_BELOW else part.find("\n", 0, 1024)
    if width > 0:
        wraps = part[width :: width + 1]
        if wraps.count("\n") == len(wraps):
            last = width + (len(wraps) - 1) * (width + 1)
            return len(wraps) + part.count("\n", last + 1)
    return part.count("\n") + (part.count("\r") if crlf else 0)


def _text_size(value: Any) -> int:
    """UTF-8 byte count of a text payload (a string or a list of lines) without joining it."""
    if isinstance(value, str):
        return len(value) if value.isascii() else len(value.encode("utf-8", "surrogatepass"))
    if isinstance(value, list):
        try:
            if all(map(str.isascii, value)):
                return sum(map(len, value))
            return sum(map(_text_size, value))
        except TypeError:  # not a list of strings
            pass
    return len(_as_text(value).encode("utf-8", "surrogatepass"))


def _image_size(head: bytes) -> tuple[int, int] | None:
    if head.startswith(b"\x89PNG\r\n\x1a\n") and len(head) >= 24:
        width, height = struct.unpack(">II", head[16:24])
        return width, height
    if head[:6] in (b"GIF87a", b"GIF89a") and len(head) >= 10:
        width, height = struct.unpack("<HH", head[6:10])
        return width, height
    if head.startswith(b"\xff\xd8"):
        return _jpeg_size(head)
    return None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    pos = 2
    while pos + 9 < len(data):
        if data[pos] != 0xFF:
            return None
        marker = data[pos + 1]
        length = int.from_bytes(data[pos + 2 : pos + 4], "big")
        if marker in (0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE):
            height, width = struct.unpack(">HH", data[pos + 5 : pos + 9])
            return width, height
        pos += 2 + length
    return None


def payload_label(mime: str, value: Any, metadata: Mapping[str, Any] | None = None) -> str:
    """`image/png 640x480, 34 KB`: what a binary or bulky payload is, without its content.

    Reads only the payload's length and, for images, the few bytes of its header."""
    dims: tuple[int, int] | None = None
    if mime.startswith("image/") and mime != "image/svg+xml":
        size = _base64_size(value)
        dims = _image_size(_decoded_head(value, 65536 if mime == "image/jpeg" else 64))
    else:
        size = _text_size(value)
    meta = (metadata or {}).get(mime)
    if dims is None and isinstance(meta, Mapping):
        width, height = meta.get("width"), meta.get("height")
        if isinstance(width, int) and isinstance(height, int):
            dims = (width, height)
    shape = f" {dims[0]}x{dims[1]}" if dims else ""
    return f"{mime}{shape}, {human_size(size)}"


# -- one-line summaries ------------------------------------------------------------------------


def output_summary(cell: Mapping[str, Any]) -> str | None:
    """`outputs: stream (3 lines); image/png 640x480 (34 KB)`, or None without outputs."""
    outputs = cell.get("outputs")
    if not outputs or not isinstance(outputs, list) or cell_type_of(cell) != "code":
        return None
    items = [_summarize(output) for output in outputs[:_MAX_SUMMARY_ITEMS]]
    if len(outputs) > _MAX_SUMMARY_ITEMS:
        items.append(f"+{len(outputs) - _MAX_SUMMARY_ITEMS} more")
    return "outputs: " + "; ".join(items)


def _summarize(output: Any) -> str:
    if not isinstance(output, (dict, Mapping)):
        return "unreadable output"
    kind = output.get("output_type")
    if kind == "stream":
        name = "stream" if output.get("name", "stdout") == "stdout" else str(output.get("name"))
        return f"{name} ({_plural(_lines_in(output.get('text', '')), 'line')})"
    if kind == "error":
        message = f"{output.get('ename', 'Error')}: {strip_ansi(str(output.get('evalue', '')))}"
        message = message.splitlines()[0] if message.strip() else message
        return "error " + (message[:77] + "..." if len(message) > 80 else message)
    data = output.get("data")
    if data and isinstance(data, (dict, Mapping)):
        return _summarize_bundle(data, output.get("metadata"))
    return str(kind or "output")


def _summarize_bundle(data: Mapping[str, Any], metadata: Any) -> str:
    mimes = list(data)
    image = None
    for mime in mimes:
        if mime.startswith("image/"):
            image = mime
            break
    if image is not None:
        label = payload_label(
            image, data[image], metadata if isinstance(metadata, Mapping) else None
        )
        mime_dims, size = label.split(", ")
        return f"{mime_dims} ({size})"
    if "application/vnd.jupyter.widget-view+json" in data:
        return "widget"
    if "text/html" in data:
        return f"text/html ({human_size(_text_size(data['text/html']))})"
    if "text/plain" in data:
        return f"text/plain ({_plural(_lines_in(data['text/plain']), 'line')})"
    first = sorted(mimes)[0]
    return f"{first} ({human_size(_text_size(data[first]))})"


# -- full renderings ---------------------------------------------------------------------------


def cell_outputs(nb: Mapping[str, Any], cell_id: str, max_chars: int = DEFAULT_MAX_CHARS) -> str:
    """The outputs of cell `cell_id` as text: clipped, binary as placeholders, no ANSI codes."""
    cells: Sequence[Mapping[str, Any]] = nb.get("cells", [])
    ids = display_ids(cells).ids
    if cell_id not in ids:
        known = ", ".join(ids[:50]) + (" ..." if len(ids) > 50 else "")
        raise AnchorError(f"No cell id={cell_id} in this notebook. Known ids: {known or '(none)'}")
    cell = cells[ids.index(cell_id)]
    if cell_type_of(cell) != "code":
        return f"cell {cell_id} is a {cell_type_of(cell)} cell: it has no outputs"
    outputs = cell.get("outputs") or []
    count = cell.get("execution_count")
    head = f"cell {cell_id}: {_plural(len(outputs), 'output')}"
    head += f" (execution count {count})" if count is not None else " (not executed)"
    body = render_outputs(outputs, max_chars)
    return head + ("\n" + body if body else "")


def render_outputs(outputs: Sequence[Any], max_chars: int = DEFAULT_MAX_CHARS) -> str:
    """Outputs (nbformat v4 dicts) as numbered text, clipped at `max_chars`; "" for none."""
    body = "\n".join(_render(i, o) for i, o in enumerate(outputs, 1))
    return _clip(body, max_chars) if body else ""


def _clip(text: str, max_chars: int) -> str:
    if len(text) <= max_chars:
        return text
    left = len(text) - max_chars
    return (
        text[:max_chars]
        + f"\n... [clipped: {left:,} more characters; ask again with a larger max_chars"
        " to see them]"
    )


def _render(number: int, output: Any) -> str:
    if not isinstance(output, Mapping):
        return f"[{number}] unreadable output"
    kind = str(output.get("output_type", "output"))
    if kind == "stream":
        text = strip_ansi(_as_text(output.get("text", "")))
        return f"[{number}] stream {output.get('name', 'stdout')}\n{text.rstrip(chr(10))}"
    if kind == "error":
        trace = output.get("traceback")
        lines = [strip_ansi(str(x)) for x in trace] if isinstance(trace, list) else []
        evalue = strip_ansi(str(output.get("evalue", "")))
        head = f"[{number}] error {output.get('ename', '')}: {evalue}"
        return "\n".join([head, *lines])
    data = output.get("data")
    metadata = output.get("metadata")
    return f"[{number}] {kind}" + _render_bundle(
        data if isinstance(data, Mapping) else {}, metadata if isinstance(metadata, Mapping) else {}
    )


def _render_bundle(data: Mapping[str, Any], metadata: Mapping[str, Any]) -> str:
    text_mime = next((m for m in _TEXT_PREFERENCE if m in data), None)
    placeholders = [
        f"[{payload_label(mime, value, metadata)}]"
        for mime, value in data.items()
        if mime != text_mime
    ]
    parts = [" " + " ".join(placeholders)] if placeholders else []
    if text_mime is not None:
        parts.append(f"\n{strip_ansi(_as_text(data[text_mime])).rstrip(chr(10))}")
    return "".join(parts)
