"""Text normalization and the section tag.

Invariants:
- `normalize(raw).text` never contains CR line breaks or a BOM; `restore(normalize(raw))`
  gives back `raw` whenever `raw` used one line ending consistently.
- `section_tag(text)` is xxHash32 (seed 0) of the text with trailing spaces, tabs and CRs
  removed from every line, low 16 bits, as 4 uppercase hex digits. It is an address, never a
  proof of identity: 1 in 65,536 different texts share a tag.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from itertools import repeat
from typing import TypeVar

import xxhash

BOM = "\ufeff"


@dataclass(frozen=True, slots=True)
class Normalized:
    """Text with LF line endings, plus what is needed to write it back as it was."""

    text: str
    bom: bool
    eol: str  # "\n" or "\r\n": the ending of the first line break of the raw text


def normalize(raw: str) -> Normalized:
    """Strip a BOM, detect the line ending from the first break, convert CRLF and CR to LF."""
    bom = raw.startswith(BOM)
    if bom:
        raw = raw[1:]
    eol = "\n"
    first_cr = raw.find("\r")
    if first_cr != -1:
        first_lf = raw.find("\n")
        if first_lf == -1 or first_cr < first_lf:
            eol = "\r\n" if raw.startswith("\r\n", first_cr) else "\n"
    if "\r" in raw:
        raw = raw.replace("\r\n", "\n").replace("\r", "\n")
    return Normalized(raw, bom, eol)


def restore(text: str, bom: bool, eol: str) -> str:
    """Inverse of `normalize` for LF text: put back the line ending and the BOM."""
    if eol != "\n":
        text = text.replace("\n", eol)
    return BOM + text if bom else text


def section_tag(text: str) -> str:
    """The 4-hex-digit tag of a normalized text (see the module docstring). The tags of the
    last few text objects are remembered, by identity (no hashing of the text): one edit tags
    the very same texts in the patcher, the store and the activity log."""
    for known, tag in tuple(_RECENT_TAGS):  # a copy: other threads may append meanwhile
        if known is text:
            return tag
    tag = _section_tag(text)
    _RECENT_TAGS.append((text, tag))
    return tag


_RECENT_TAGS: deque[tuple[str, str]] = deque(maxlen=4)


def _section_tag(text: str) -> str:
    stripped = strip_line_ends(text) if _has_trailing_ws(text) else text
    return f"{xxhash.xxh32_intdigest(stripped.encode('utf-8', 'surrogatepass')) & 0xFFFF:04X}"


def strip_line_ends(text: str) -> str:
    """`text` with trailing spaces, tabs and CRs removed from every line (the last one too).

    Line by line in C (split, rstrip, join): several times faster than a multiline regex on
    code, whose many spaces each start a regex attempt."""
    return "\n".join(map(str.rstrip, text.split("\n"), repeat(" \t\r")))


def _has_trailing_ws(text: str) -> bool:
    """Whether any line ends in a space, tab or CR: only then does stripping change the text.

    `rfind` is used on purpose: CPython's reverse search for a two-character needle is about
    three times faster than the forward one on space-heavy code, and this runs on every read.
    """
    if "\r" in text or text.endswith((" ", "\t")):
        return True
    if "\t" in text and text.rfind("\t\n") != -1:
        return True
    return text.rfind(" \n") != -1


def line_count(text: str) -> int:
    """How many lines `split_lines(text)` gives, without splitting."""
    return text.count("\n") + (0 if text.endswith("\n") or not text else 1)


def split_lines(text: str) -> list[str]:
    """Lines of a normalized text without their LF; "" has no lines, "a\\n" has one."""
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


Text = TypeVar("Text", str, bytes)
"""Texts or files' bytes: the prefix and suffix compare either."""
_BLOCK = 4096
_MAX_BLOCK = 1 << 16  # larger slices cost more to copy (fresh pages) than they save in calls


def common_prefix(a: Text, b: Text, a_at: int = 0, b_at: int = 0, limit: int | None = None) -> int:
    """Length of the longest common prefix of `a[a_at:]` and `b[b_at:]` (at most `limit`),
    compared a block at a time (memcmp in C), without copying either whole; the block doubles
    while blocks are equal (up to `_MAX_BLOCK`), so long equal stretches cost few calls."""
    most = min(len(a) - a_at, len(b) - b_at)
    limit = most if limit is None else min(limit, most)
    done, block = 0, _BLOCK
    while True:
        if done + block <= limit and (
            a[a_at + done : a_at + done + block] == b[b_at + done : b_at + done + block]
        ):
            done += block
            block = min(2 * block, _MAX_BLOCK)
        elif block > _BLOCK:
            block = _BLOCK  # the first unequal block: close in on it a small block at a time
        else:
            break
    low, high = done, min(done + _BLOCK, limit)
    while low < high:  # the longest equal prefix within the last block: binary search
        middle = (low + high + 1) // 2
        if a[a_at + done : a_at + middle] == b[b_at + done : b_at + middle]:
            low = middle
        else:
            high = middle - 1
    return low


def common_suffix(a: Text, b: Text, limit: int) -> int:
    """Length of the longest common suffix, at most `limit` (blocks as `common_prefix`)."""
    done, block = 0, _BLOCK
    while True:
        if done + block <= limit and (
            a[len(a) - done - block : len(a) - done] == b[len(b) - done - block : len(b) - done]
        ):
            done += block
            block = min(2 * block, _MAX_BLOCK)
        elif block > _BLOCK:
            block = _BLOCK
        else:
            break
    low, high = done, min(done + _BLOCK, limit)
    while low < high:
        middle = (low + high + 1) // 2
        if a[len(a) - middle : len(a) - done] == b[len(b) - middle : len(b) - done]:
            low = middle
        else:
            high = middle - 1
    return low
