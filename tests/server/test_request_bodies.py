"""Request bodies (server/requests.py): how deep a JSON body may nest, checked level by level;
how many edits an edit body carries, counted before it is parsed."""

from __future__ import annotations

import json

import pytest

from jupyter_hashline.hashline import TooLargeError
from jupyter_hashline.hashline.parse import parse_patch
from jupyter_hashline.server.errors import BadRequestError
from jupyter_hashline.server.requests import MAX_JSON_DEPTH, edit_count, json_object


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


def test_an_edit_body_over_the_edit_limit_is_refused_before_it_is_parsed() -> None:
    edits = [{"op": "delete", "start": 1, "end": 1}] * 11
    body = json.dumps({"edits": {"path": "a.py", "tag": "ABCD", "edits": edits}}).encode()
    with pytest.raises(TooLargeError, match=r"11 edit operations, over the limit of 10"):
        json_object(body, 1 << 20, max_edits=10)
    # not parsed: a body that is not even JSON is refused for its count, not its syntax
    with pytest.raises(TooLargeError, match="11 edit operations"):
        json_object(body[:-5], 1 << 20, max_edits=10)
    assert len(json_object(body, 1 << 20, max_edits=11)["edits"]["edits"]) == 11
    assert json_object(body, 1 << 20)["edits"]  # no limit given: any count


@pytest.mark.parametrize(
    ("patch", "count"),
    [
        ("[a.py#ABCD]\ndelete 1\nreplace 2:\n+x\ninsert after 3:\n+y\ninsert head:\n+z\n", 4),
        ("delete 1", 1),  # at the string's start
        ('[a.py#ABCD]\nreplace 2:\n+delete 1\n+replace 3:\n+"op"\n', 1),  # rows are not verbs
        ("[a.py#ABCD]\n  delete 1\n", 0),  # indented: not counted here, counted when parsed
    ],
)
def test_edit_count_counts_the_verb_lines_of_edit_text(patch: str, count: int) -> None:
    assert edit_count(json.dumps({"patch": patch}).encode()) == count


def test_edit_count_never_counts_more_than_the_parser_finds() -> None:
    patch = "[a.py#ABCD]\n" + "".join(f'replace {n}:\n+"op" = {n}\n' for n in range(1, 40))
    body = json.dumps({"patch": patch}).encode()
    assert edit_count(body) == sum(len(s.edits) for s in parse_patch(patch)) == 39
    section = {"path": "a.py", "tag": "ABCD", "edits": [{"op": "delete", "start": 1}] * 7}
    assert edit_count(json.dumps({"edits": [section, section]}).encode()) == 14
