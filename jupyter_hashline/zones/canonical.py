"""Canonical JSON and deep-frozen JSON values: the byte form every zone hash and wire body uses.

The canonical form (the only one in this package) is
``json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False)``
encoded as UTF-8: object keys sorted by code point, no insignificant whitespace, non-ASCII kept
as UTF-8, no NaN or infinity. Tool hashes, message hashes, the invariant's byte stream and every
object nested inside a wire body use it; only the top level of a wire body departs from sorted
order, because providers cache by position and the stable keys must come first.

Invariants:
- `freeze(value)` is deep: every dict becomes a `FrozenDict`, every list or tuple a
  `FrozenList`; both refuse every mutation with `TypeError` and stay JSON-serializable as they are.
- `canonical_json(freeze(v)) == canonical_json(v)`, and `thaw(freeze(v)) == v` for JSON values.
- Only JSON values freeze: str keys, str/int/float/bool/None leaves, finite floats.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any, NoReturn

__all__ = ["FrozenDict", "FrozenList", "canonical_json", "freeze", "thaw"]

_ENCODER = json.JSONEncoder(
    ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False
)

_FROZEN_HINT = (
    "messages in the three-zone prompt are frozen once pushed, so the bytes a provider cached "
    "stay valid. To change the conversation, push a new message; to rewrite it, call "
    "log.rebuild(RebuildReason.<REASON>, messages) (audited). thaw(value) gives a mutable copy."
)


def canonical_json(value: object) -> bytes:
    """The canonical UTF-8 bytes of a JSON value (see the module docstring)."""
    try:
        return _ENCODER.encode(value).encode("utf-8")
    except UnicodeEncodeError as err:
        raise ValueError(
            f"text holds a lone surrogate ({err.object[err.start : err.end]!r}) that UTF-8 "
            "cannot carry; decode the source with errors='replace' before building the message"
        ) from err


def _refuse(kind: str, operation: str) -> NoReturn:
    raise TypeError(f"cannot {operation} a frozen {kind}: {_FROZEN_HINT}")


class FrozenDict(dict[str, Any]):
    """A dict that refuses mutation. A real `dict` subclass, so `json` and `isinstance` work."""

    __slots__ = ()

    def __setitem__(self, key: object, value: object) -> NoReturn:
        _refuse("message object", "set a key of")

    def __delitem__(self, key: object) -> NoReturn:
        _refuse("message object", "delete a key of")

    def __ior__(self, other: object) -> NoReturn:  # type: ignore[misc]
        _refuse("message object", "update")

    def clear(self) -> NoReturn:
        _refuse("message object", "clear")

    def pop(self, *args: object) -> NoReturn:
        _refuse("message object", "pop from")

    def popitem(self) -> NoReturn:
        _refuse("message object", "pop from")

    def setdefault(self, *args: object) -> NoReturn:
        _refuse("message object", "setdefault on")

    def update(self, *args: object, **kwargs: object) -> NoReturn:
        _refuse("message object", "update")

    def __copy__(self) -> FrozenDict:
        return self

    def __deepcopy__(self, memo: dict[int, object]) -> FrozenDict:
        return self

    def __reduce__(self) -> tuple[type[FrozenDict], tuple[dict[str, Any]]]:
        return (FrozenDict, (dict(self),))

    def __repr__(self) -> str:
        return f"FrozenDict({dict.__repr__(self)})"


class FrozenList(tuple[Any, ...]):
    """A tuple standing in for a JSON array; equal to a list with the same items."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, list):
            other = tuple(other)
        return tuple.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    __hash__ = tuple.__hash__

    def __setitem__(self, index: object, value: object) -> NoReturn:
        _refuse("message list", "assign an item of")

    def __delitem__(self, index: object) -> NoReturn:
        _refuse("message list", "delete an item of")

    def __iadd__(self, other: object) -> NoReturn:  # type: ignore[misc]
        _refuse("message list", "extend")

    def __imul__(self, other: object) -> NoReturn:
        _refuse("message list", "repeat")

    def append(self, item: object) -> NoReturn:
        _refuse("message list", "append to")

    def extend(self, items: object) -> NoReturn:
        _refuse("message list", "extend")

    def insert(self, index: object, item: object) -> NoReturn:
        _refuse("message list", "insert into")

    def pop(self, *args: object) -> NoReturn:
        _refuse("message list", "pop from")

    def remove(self, item: object) -> NoReturn:
        _refuse("message list", "remove from")

    def clear(self) -> NoReturn:
        _refuse("message list", "clear")

    def sort(self, *args: object, **kwargs: object) -> NoReturn:
        _refuse("message list", "sort")

    def reverse(self) -> NoReturn:
        _refuse("message list", "reverse")

    def __repr__(self) -> str:
        return f"FrozenList({list(self)!r})"


_SCALARS = frozenset({str, int, bool, type(None)})


def freeze(value: object, *, where: str = "message") -> Any:
    """A deep-frozen copy of a JSON value; raises TypeError/ValueError naming a bad part."""
    if isinstance(value, FrozenDict | FrozenList):
        return value
    if (  # flat objects (request params): no recursion
        type(value) is dict
        and all(type(v) in _SCALARS for v in value.values())
        and all(type(k) is str for k in value)
    ):
        return FrozenDict(value)
    if isinstance(value, str | bool | int) or value is None:
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{where} holds {value!r}; JSON has no NaN or infinity")
        return value
    if isinstance(value, Mapping):
        items = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"{where} has a non-string key {key!r}; JSON keys are strings")
            items[key] = freeze(item, where=f"{where}.{key}")
        return FrozenDict(items)
    if isinstance(value, list | tuple):
        return FrozenList(freeze(item, where=f"{where}[{i}]") for i, item in enumerate(value))
    raise TypeError(
        f"{where} is a {type(value).__name__}, which JSON cannot carry; "
        "convert it to str, int, float, bool, None, dict or list first"
    )


def thaw(value: object) -> Any:
    """A plain, mutable deep copy (dicts and lists) of a frozen or plain JSON value."""
    if isinstance(value, Mapping):
        return {key: thaw(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [thaw(item) for item in value]
    return value
