"""The memo of one engine call: absent outside a call, shared inside it, never across tasks."""

from __future__ import annotations

import asyncio

from jupyter_hashline.hashline.callscope import call_scope, scope_memo


def test_outside_a_call_there_is_no_memo() -> None:
    assert scope_memo() is None
    with call_scope() as memo:
        assert scope_memo() is memo
    assert scope_memo() is None


def test_a_call_inside_a_call_shares_the_outer_memo() -> None:
    with call_scope() as outer:
        outer["key"] = 1
        with call_scope() as inner:
            assert inner is outer
        assert scope_memo() is outer  # the inner call did not close the outer one
    assert scope_memo() is None


async def test_concurrent_calls_never_share_a_memo() -> None:
    seen: list[object] = []

    async def one_call(name: str) -> None:
        with call_scope() as memo:
            memo["name"] = name
            await asyncio.sleep(0)
            seen.append(scope_memo())
            assert memo["name"] == name

    await asyncio.gather(one_call("a"), one_call("b"))
    assert len({id(memo) for memo in seen}) == 2


async def test_a_worker_thread_of_the_call_sees_its_memo() -> None:
    with call_scope() as memo:
        assert await asyncio.to_thread(scope_memo) is memo
