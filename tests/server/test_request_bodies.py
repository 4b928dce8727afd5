"""Request bodies (server/requests.py): how deep a JSON body may nest, checked level by level."""

from __future__ import annotations

import json

import pytest

from jupyter_hashline.server.errors import BadRequestError
from jupyter_hashline.server.requests import MAX_JSON_DEPTH, json_object


def nested(levels: int) -> bytes:
    """An object whose innermost value sits `levels` arrays/objects deep (the body counts)."""
    inner: object = 1
    for n in range(levels - 1):
        inner = [inner] if n % 2 else {"k": inner}
    return json.dumps({"patch": inner}).encode()


def test_bodies_nest_up_to_the_limit_and_no_deeper() -> None:
    assert json_object(nested(MAX_JSON_DEPTH), 1 << 20)["patch"]
    with pytest.raises(BadRequestError, match=f"more than {MAX_JSON_DEPTH} levels deep"):
        json_object(nested(MAX_JSON_DEPTH + 1), 1 << 20)
    with pytest.raises(BadRequestError, match="levels deep"):
        json_object(b'{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", 1 << 20)


def test_a_wide_shallow_body_passes_whole() -> None:
    edits = [{"op": "replace", "start": 2, "end": 2, "lines": ["x"]}] * 100_000
    body = json.dumps({"edits": edits, "deep": nested(3).decode()}).encode()
    assert len(json_object(body, 1 << 24)["edits"]) == 100_000


@pytest.mark.parametrize(
    "body",
    [
        b'{"patch": "\\ud800 a lone surrogate"}',
        b'{"n": NaN, "big": 123456789012345678901234567890}',
        '{"patch": "utf-16"}'.encode("utf-16"),
        b'{"a": 1, "a": 2}',
    ],
)
def test_every_body_means_what_the_standard_library_says(body: bytes) -> None:
    got, want = json_object(body, 1 << 20), json.loads(body)
    assert json.dumps(got, allow_nan=True) == json.dumps(want, allow_nan=True)
