"""The error tree: every class has a status and a kind; `is_not_found` walks the chain."""

from __future__ import annotations

import inspect

import pytest

from jupyter_hashline.hashline import errors
from jupyter_hashline.hashline.errors import (
    HashlineError,
    NotFoundError,
    StaleTagError,
    UnknownTagError,
    WriteFailedError,
    is_not_found,
)

ERROR_CLASSES = [
    obj
    for _, obj in inspect.getmembers(errors, inspect.isclass)
    if issubclass(obj, HashlineError) and obj.__module__ == errors.__name__
]


def test_the_tree_is_not_empty() -> None:
    assert len(ERROR_CLASSES) >= 13


@pytest.mark.parametrize("cls", ERROR_CLASSES, ids=lambda cls: cls.__name__)
def test_every_error_has_a_status_and_kind(cls: type[HashlineError]) -> None:
    assert isinstance(cls.status, int) and 400 <= cls.status <= 599
    assert isinstance(cls.kind, str) and cls.kind == cls.kind.lower() and " " not in cls.kind
    assert issubclass(cls, ValueError)


def test_kinds_are_unique() -> None:
    kinds = [cls.kind for cls in ERROR_CLASSES]
    assert len(kinds) == len(set(kinds))


@pytest.mark.parametrize(
    ("cls", "status"),
    [
        (errors.PatchSyntaxError, 400),
        (errors.AnchorError, 400),
        (NotFoundError, 404),
        (StaleTagError, 409),
        (UnknownTagError, 409),
        (errors.UnseenLinesError, 409),
        (errors.TooLargeError, 413),
    ],
)
def test_design_statuses(cls: type[HashlineError], status: int) -> None:
    assert cls.status == status


def test_message_is_the_agent_text() -> None:
    err = WriteFailedError("Could not write a.py: disk full.")
    assert str(err) == err.message == "Could not write a.py: disk full."


def test_not_found_names_the_path() -> None:
    err = NotFoundError("nb/a.ipynb")
    assert err.path == "nb/a.ipynb"
    assert str(err) == "File not found: nb/a.ipynb"
    assert NotFoundError("x", "custom").message == "custom"


def test_is_not_found_accepts_direct_errors() -> None:
    assert is_not_found(NotFoundError("a"))
    assert is_not_found(FileNotFoundError(2, "No such file", "a"))
    assert not is_not_found(None)
    assert not is_not_found(PermissionError(13, "denied"))
    assert not is_not_found(StaleTagError("stale"))


def test_is_not_found_walks_cause() -> None:
    try:
        try:
            raise FileNotFoundError(2, "No such file")
        except FileNotFoundError as inner:
            raise RuntimeError("adapter failed") from inner
    except RuntimeError as outer:
        assert is_not_found(outer)


def test_is_not_found_walks_context() -> None:
    try:
        try:
            raise NotFoundError("a.py")
        except NotFoundError:
            raise KeyError("lookup") from None
    except KeyError as suppressed:
        # `from None` hides the context from tracebacks but it is still recorded
        assert suppressed.__cause__ is None
        assert is_not_found(suppressed)
    try:
        try:
            raise FileNotFoundError("gone")
        except FileNotFoundError:
            raise ValueError("while handling") from None
    except ValueError as err:
        assert is_not_found(err)


def test_is_not_found_walks_deep_chains_and_stops_on_cycles() -> None:
    root = FileNotFoundError("gone")
    chain: BaseException = root
    for depth in range(20):
        wrapper = RuntimeError(f"level {depth}")
        wrapper.__cause__ = chain
        chain = wrapper
    assert is_not_found(chain)
    first, second = RuntimeError("a"), RuntimeError("b")
    first.__context__, second.__context__ = second, first
    assert not is_not_found(first)
