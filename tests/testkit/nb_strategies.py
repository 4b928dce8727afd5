"""Hypothesis strategies for notebooks: every shape the projection and the serializer must survive.

Sources mix ordinary code with marker-like lines (`# %%`, escaped `\\# %%`), unicode, tabs,
CR characters inside lines, other characters `str.splitlines` treats as breaks, empty cells and
trailing newlines. Notebooks are valid nbformat 4.5 (unique ids) or legacy 4.4 (no ids), with
outputs (stream, execute_result, display_data with PNG/SVG, error), attachments and metadata.
"""

from __future__ import annotations

import base64
import struct
from typing import Any

from hypothesis import strategies as st

LINE_PIECES = [
    "",
    "x = 1",
    "# %%",
    "# %% [code] id=abc",
    "# %% [markdown]",
    "# %%timeit",
    "\\# %% escaped once",
    "\\\\# %% [raw] id=z",
    "\\",
    "#%% not a marker",
    " # %% indented",
    "print('héllo ✓ 世界')",
    "\ttabbed",
    "trailing spaces   ",
    "a\rb",
    "\r",
    "form\x0cfeed",
    "line\u2028separator",
    "vt\x0bchar",
    "emoji 🎉",
    '"quoted" and \\backslash',
]

ids = st.text(
    alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_",
    min_size=1,
    max_size=12,
)
lines = st.one_of(
    st.sampled_from(LINE_PIECES), st.text(max_size=20).filter(lambda s: "\n" not in s)
)
sources = st.builds(
    lambda body, tail: "\n".join(body) + "\n" * tail,
    st.lists(lines, max_size=6),
    st.integers(min_value=0, max_value=2),
)
json_leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**12), max_value=10**12),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=10),
)
json_values = st.recursive(
    json_leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
# prefixed keys: nbformat types some metadata keys (tags, collapsed, kernelspec, ...)
metadata = st.dictionaries(st.text(max_size=8).map("x-".__add__), json_values, max_size=3)


def png_b64(width: int, height: int) -> str:
    header = b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR"
    body = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return base64.b64encode(header + body + b"\x00" * 40).decode("ascii") + "\n"


texts = st.lists(lines, max_size=4).map(lambda ls: "\n".join(ls))
stream_outputs = st.builds(
    lambda name, text: {"output_type": "stream", "name": name, "text": text},
    st.sampled_from(["stdout", "stderr"]),
    texts,
)
bundles = st.fixed_dictionaries(
    {"text/plain": texts},
    optional={
        "text/html": texts,
        "image/png": st.builds(png_b64, st.integers(1, 2000), st.integers(1, 2000)),
        "image/svg+xml": st.just("<svg>\n<rect/>\n</svg>\n"),
        "application/json": st.dictionaries(st.text(max_size=5), json_leaves, max_size=2),
        "application/javascript": texts,
    },
)
display_outputs = st.builds(
    lambda data, meta: {"output_type": "display_data", "data": data, "metadata": meta},
    bundles,
    st.just({}),
)
result_outputs = st.builds(
    lambda data, count: {
        "output_type": "execute_result",
        "data": data,
        "metadata": {},
        "execution_count": count,
    },
    bundles,
    st.integers(1, 99),
)
error_outputs = st.builds(
    lambda name, value: {
        "output_type": "error",
        "ename": name,
        "evalue": value,
        "traceback": ["\x1b[0;31m" + name + "\x1b[0m: " + value, "line 2"],
    },
    st.sampled_from(["ValueError", "KeyError"]),
    st.text(max_size=10),
)
outputs = st.lists(
    st.one_of(stream_outputs, display_outputs, result_outputs, error_outputs), max_size=3
)


@st.composite
def cells(draw: st.DrawFn, with_id: bool) -> dict[str, Any]:
    kind = draw(st.sampled_from(["code", "code", "markdown", "raw"]))
    cell: dict[str, Any] = {"cell_type": kind, "metadata": draw(metadata), "source": draw(sources)}
    if kind == "code":
        cell["outputs"] = draw(outputs)
        cell["execution_count"] = draw(st.one_of(st.none(), st.integers(1, 999)))
    elif draw(st.booleans()) and draw(st.booleans()):
        cell["attachments"] = {"a.png": {"image/png": png_b64(2, 3)}}
    if with_id:
        cell["id"] = "placeholder"
    return cell


@st.composite
def notebooks(draw: st.DrawFn, min_cells: int = 0, max_cells: int = 8) -> dict[str, Any]:
    """A valid notebook as nbformat holds it in memory (plain dicts)."""
    legacy = draw(st.booleans())
    body = draw(st.lists(cells(with_id=not legacy), min_size=min_cells, max_size=max_cells))
    if not legacy:
        unique = draw(st.lists(ids, min_size=len(body), max_size=len(body), unique=True))
        for cell, cid in zip(body, unique, strict=True):
            cell["id"] = cid
    nb_meta = draw(
        st.fixed_dictionaries(
            {},
            optional={
                "kernelspec": st.just({"name": "python3", "display_name": "Python 3"}),
                "extra": json_values,
            },
        )
    )
    return {"cells": body, "metadata": nb_meta, "nbformat": 4, "nbformat_minor": 4 if legacy else 5}
