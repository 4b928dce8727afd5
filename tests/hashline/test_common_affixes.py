"""`common_prefix` / `common_suffix` over long equal stretches: the doubling blocks close in on
the first difference wherever it is (block edges, past the largest block, none at all)."""

from __future__ import annotations

import pytest

from jupyter_hashline.hashline.text import _BLOCK, _MAX_BLOCK, common_prefix, common_suffix

SIZE = 3 * _MAX_BLOCK + 12_345
WHERE = (0, 1, _BLOCK - 1, _BLOCK, _BLOCK + 1, 3 * _BLOCK, _MAX_BLOCK, 2 * _MAX_BLOCK + 7)


@pytest.mark.parametrize("at", WHERE)
def test_the_first_difference_is_found_exactly(at: int) -> None:
    a = bytes(range(256)) * (SIZE // 256)
    b = a[:at] + b"\xff" + a[at + 1 :] if a[at] != 0xFF else a[:at] + b"\x00" + a[at + 1 :]
    assert common_prefix(a, b) == at
    assert common_prefix(b"." + a, b, 1, 0) == at  # from offsets, neither copied whole
    assert common_prefix(a, b, at + 1, at + 1) == len(a) - at - 1
    assert common_prefix(a, b, limit=at + 5) == at
    assert common_prefix(a, a, 3, 3, limit=1000) == 1000
    assert common_suffix(a, b, len(a)) == len(a) - at - 1
    assert common_suffix(a[::-1], b[::-1], len(a)) == at


def test_equal_texts_and_limits() -> None:
    text = "x" * SIZE
    assert common_prefix(text, text + "y") == SIZE
    assert common_suffix(text, "y" + text, SIZE) == SIZE
    assert common_suffix(text, text, 1000) == 1000
