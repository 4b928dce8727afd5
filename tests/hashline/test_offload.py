"""offload: heavy steps in a worker thread, by size or for a call of many edits."""

from __future__ import annotations

import threading

from jupyter_hashline.hashline import InMemorySnapshotStore
from jupyter_hashline.hashline import offload as offload_module
from jupyter_hashline.hashline import patcher as patcher_module
from jupyter_hashline.hashline.memory_fs import InMemoryFilesystem
from jupyter_hashline.hashline.offload import OFFLOAD_EDITS, OFFLOAD_SIZE, heavy_call, offloaded
from jupyter_hashline.hashline.patcher import Patcher


async def test_small_steps_stay_on_the_loop_and_big_or_heavy_ones_leave_it() -> None:
    loop_thread = threading.get_ident()
    assert await offloaded(10, threading.get_ident) == loop_thread
    assert await offloaded(OFFLOAD_SIZE, threading.get_ident) != loop_thread
    assert await offloaded(10, threading.get_ident, threshold=10) != loop_thread
    with heavy_call():
        assert await offloaded(10, threading.get_ident) != loop_thread
        with heavy_call(False):  # an inner call that is not heavy keeps the outer one's say
            assert await offloaded(10, threading.get_ident) != loop_thread
    with heavy_call(False):
        assert await offloaded(10, threading.get_ident) == loop_thread
    assert await offloaded(10, threading.get_ident) == loop_thread


async def test_a_patch_of_many_small_edits_is_applied_off_the_loop(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    threads: list[bool] = []
    real = offload_module.offloaded

    async def watched(size, work, threshold=OFFLOAD_SIZE):  # type: ignore[no-untyped-def]
        def run():  # type: ignore[no-untyped-def]
            threads.append(threading.get_ident() != loop_thread)
            return work()

        return await real(size, run, threshold)

    loop_thread = threading.get_ident()
    monkeypatch.setattr(patcher_module, "offloaded", watched)
    text = "".join(f"line {n}\n" for n in range(1, 201))
    fs = InMemoryFilesystem({"t.txt": text})
    patcher = Patcher(fs, InMemorySnapshotStore())
    read = await patcher.read("t.txt")
    few = "".join(f"replace {n}:\n+few {n}\n" for n in range(1, OFFLOAD_EDITS))
    threads.clear()
    await patcher.apply(f"{read.header}\n{few}")
    assert threads and not any(threads)  # 63 one-line edits of a 2 KB file: on the loop
    read = await patcher.read("t.txt")
    many = "".join(f"replace {n}:\n+many {n}\n" for n in range(1, OFFLOAD_EDITS + 1))
    threads.clear()
    result = await patcher.apply(f"{read.header}\n{many}")
    parse, *steps = threads  # parsing 128 rows is weighed by its rows (OFFLOAD_ROWS): short
    assert not parse and steps and all(steps)  # 64 edits: every step after it in a thread
    assert result.sections[0].written and fs.get("t.txt").startswith("many 1\nmany 2\n")
