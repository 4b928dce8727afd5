"""Notebook trust across writes (notebook/trust.py): nbformat's digest, and the signing rule."""

from __future__ import annotations

import copy
import csv
import json
import logging
import warnings
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbformat.sign import MemorySignatureStore, NotebookNotary

from jupyter_hashline.hashline.memory_fs import InMemoryFilesystem
from jupyter_hashline.notebook import (
    NbformatNotary,
    NotebookFilesystem,
    SigningKey,
    load_notebook,
    notebook_digest,
)
from jupyter_hashline.notebook.trust import TrustKeeper

SECRET = b"a test secret, never a real one"
HTML = {"text/html": "<b>hi</b>", "text/plain": "hi"}


def memory_notary(tmp_path: Path) -> NotebookNotary:
    """A notary that touches no disk: an explicit secret and an in-memory store."""
    return NotebookNotary(
        data_dir=str(tmp_path / "data"), secret=SECRET, store_factory=MemorySignatureStore
    )


def key_of(notary: NotebookNotary) -> SigningKey:
    return SigningKey(notary.secret, notary.algorithm)


def reads(text: str) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return nbformat.reads(text, as_version=4)


def signed(notary: NotebookNotary, text: str) -> bool:
    """What Jupyter's read decides: the file's signature is in the store."""
    return bool(notary.check_signature(reads(text)))


def notebook_text(*, html_in_b: bool = False) -> str:
    new = nbformat.v4
    cells = [
        new.new_code_cell("x = 1", id="a", outputs=[new.new_output("display_data", data=HTML)]),
        new.new_code_cell(
            "y = 2",
            id="b",
            outputs=[new.new_output("display_data", data={"text/html": "<i>new</i>"})]
            if html_in_b
            else [],
        ),
        new.new_markdown_cell("# notes", id="m"),
    ]
    return nbformat.writes(new.new_notebook(cells=cells)) + "\n"


def valid_corpus(corpus_dir: Path) -> list[Path]:
    """The corpus notebooks nbformat reads as they are (not converted, not repaired with
    fresh random ids: Jupyter's digest of those changes on every read)."""
    with (corpus_dir / "MANIFEST.tsv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    return [
        corpus_dir / r["file"]
        for r in rows
        if r["file"].endswith(".ipynb")
        and not r["file"].startswith("invalid/")
        and r["nbformat"] not in ("2", "3.0")
        and not r["valid"].startswith("warn")
    ]


# -- the digest ------------------------------------------------------------------------------


@pytest.mark.corpus
def test_the_digest_is_nbformats_for_every_corpus_notebook(
    corpus_dir: Path, tmp_path: Path
) -> None:
    notary = memory_notary(tmp_path)
    files = valid_corpus(corpus_dir)
    assert len(files) >= 20
    for file in files:
        raw = file.read_bytes()
        expected = notary.compute_signature(reads(raw.decode("utf-8")))
        assert notebook_digest(load_notebook(raw).nb, key_of(notary)) == expected, file.name


@pytest.mark.corpus
def test_the_digest_leaves_out_what_nbformat_strips_on_read(
    corpus_dir: Path, tmp_path: Path
) -> None:
    notary = memory_notary(tmp_path)
    for file in valid_corpus(corpus_dir)[:10]:
        data = json.loads(file.read_text("utf-8"))
        expected = notary.compute_signature(reads(json.dumps(data)))
        data["metadata"]["signature"] = "sha256:" + "0" * 64
        data["metadata"]["orig_nbformat"] = 3
        for cell in data["cells"]:
            cell.setdefault("metadata", {})["trusted"] = True
        text = json.dumps(data, indent=1)
        assert notary.compute_signature(reads(text)) == expected
        assert notebook_digest(load_notebook(text).nb, key_of(notary)) == expected, file.name


def test_line_lists_and_joined_strings_give_one_digest(tmp_path: Path) -> None:
    notary = memory_notary(tmp_path)
    as_lists = json.loads(notebook_text())
    as_lists["cells"][0]["source"] = ["x = 1\n", "z = 3"]
    as_lists["cells"][0]["outputs"][0]["data"]["text/html"] = ["<b>\n", "hi</b>"]
    joined = copy.deepcopy(as_lists)
    joined["cells"][0]["source"] = "x = 1\nz = 3"
    joined["cells"][0]["outputs"][0]["data"]["text/html"] = "<b>\nhi</b>"
    key = key_of(notary)
    assert notebook_digest(as_lists, key) == notebook_digest(joined, key)
    assert notebook_digest(joined, key) == notary.compute_signature(reads(json.dumps(as_lists)))


def test_the_digest_of_a_cell_is_cached_by_identity_and_stays_right(tmp_path: Path) -> None:
    from jupyter_hashline.notebook import CellJsonCache

    notary, cache = memory_notary(tmp_path), CellJsonCache()
    nb = load_notebook(notebook_text()).nb
    first = notebook_digest(nb, key_of(notary), cache)
    assert len(cache) == len(nb["cells"])
    edited = {**nb, "cells": [{**nb["cells"][0], "source": "x = 2"}, *nb["cells"][1:]]}
    expected = notary.compute_signature(reads(json.dumps(edited)))
    assert notebook_digest(edited, key_of(notary), cache) == expected != first


# -- the rule, through the notebook filesystem ------------------------------------------------


def trusting_fs(
    tmp_path: Path, text: str, *, sign: bool = True
) -> tuple[NotebookNotary, InMemoryFilesystem, NotebookFilesystem]:
    """A notary (with `text` signed, when `sign`), `text` as t.ipynb, and a notebook
    filesystem over it that keeps trust in that notary."""
    notary = memory_notary(tmp_path)
    if sign:
        notary.sign(reads(text))
    inner = InMemoryFilesystem({"t.ipynb": text})
    return notary, inner, NotebookFilesystem(inner, notary=NbformatNotary(lambda: notary))


async def edited(fs: NotebookFilesystem, old: str, new: str) -> tuple[str, ...]:
    view = await fs.read_text("t.ipynb")
    assert old in view
    return (await fs.write_text("t.ipynb", view.replace(old, new))).notes


async def test_a_trusted_notebook_stays_trusted_across_source_edits(tmp_path: Path) -> None:
    notary, inner, fs = trusting_fs(tmp_path, notebook_text())
    for old, new in [("y = 2", "y = 3"), ("y = 3", "y = 4\n# %% [code]\nz = 5"), ("# notes", "")]:
        notes = await edited(fs, old, new)
        assert not any("trusted" in note for note in notes)
        assert signed(notary, inner.get("t.ipynb")), (old, new)


async def test_deleting_a_cell_and_clearing_outputs_keep_trust(tmp_path: Path) -> None:
    notary, inner, fs = trusting_fs(tmp_path, notebook_text(html_in_b=True))
    await edited(fs, "# %% [code] id=b\ny = 2\n", "")
    assert signed(notary, inner.get("t.ipynb"))
    await fs.write_outputs("t.ipynb", {"a": ((), None)})
    assert signed(notary, inner.get("t.ipynb"))
    assert json.loads(inner.get("t.ipynb"))["cells"][0]["outputs"] == []


async def test_an_untrusted_notebook_stays_untrusted_and_nothing_is_stored(
    tmp_path: Path,
) -> None:
    notary, inner, fs = trusting_fs(tmp_path, notebook_text(), sign=False)
    assert await edited(fs, "y = 2", "y = 3") == ()
    ran = [{"output_type": "display_data", "data": HTML, "metadata": {}}]
    await fs.write_outputs("t.ipynb", {"b": (ran, 1)})
    assert not signed(notary, inner.get("t.ipynb"))
    assert notary.store.data == {}


async def test_outputs_of_the_notebooks_own_run_keep_trust(tmp_path: Path) -> None:
    notary, inner, fs = trusting_fs(tmp_path, notebook_text())
    run = [{"output_type": "display_data", "data": {"text/html": "<i>ran</i>"}, "metadata": {}}]
    await fs.write_outputs("t.ipynb", {"b": (run, 1)})
    assert reads(inner.get("t.ipynb")).cells[1].outputs[0].data["text/html"] == "<i>ran</i>"
    assert signed(notary, inner.get("t.ipynb"))


async def test_outputs_from_elsewhere_are_not_signed_and_a_note_says_so(tmp_path: Path) -> None:
    notary = memory_notary(tmp_path)
    keeper = TrustKeeper(NbformatNotary(lambda: notary))
    text = notebook_text()
    notary.sign(reads(text))
    old, gained = load_notebook(text), load_notebook(notebook_text(html_in_b=True))
    notes = await keeper.kept("t.ipynb", old, gained)
    assert len(notes) == 1 and "not signed" in notes[0]
    assert not notary.check_signature(reads(notebook_text(html_in_b=True)))
    # the same output, run by the notebook's kernel in this write, is the person's own
    assert await keeper.kept("t.ipynb", old, gained, ran=True) == ()
    assert notary.check_signature(reads(notebook_text(html_in_b=True)))


async def test_a_cell_restored_from_a_signed_version_keeps_trust(tmp_path: Path) -> None:
    """Deleting a cell, then undoing it: its outputs came from a trusted version."""
    notary = memory_notary(tmp_path)
    keeper = TrustKeeper(NbformatNotary(lambda: notary))
    full = notebook_text(html_in_b=True)
    nb = json.loads(full)
    del nb["cells"][1]
    deleted = nbformat.writes(nbformat.from_dict(nb)) + "\n"
    notary.sign(reads(full))
    assert await keeper.kept("t.ipynb", load_notebook(full), load_notebook(deleted)) == ()
    assert await keeper.kept("t.ipynb", load_notebook(deleted), load_notebook(full)) == ()
    assert signed(notary, full)
    # a notebook that never had that output signed does not vouch for it
    other = TrustKeeper(NbformatNotary(lambda: notary))
    assert len(await other.kept("u.ipynb", load_notebook(deleted), load_notebook(full))) == 1


class FailingStore(MemorySignatureStore):
    def store_signature(self, digest: str, algorithm: str) -> None:
        raise OSError("attempt to write a readonly database")


async def test_a_failing_notary_never_fails_or_loses_the_write(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    notary = NotebookNotary(
        data_dir=str(tmp_path / "data"), secret=SECRET, store_factory=FailingStore
    )
    text = notebook_text()
    digest = notary.compute_signature(reads(text))
    notary.store.data[(digest, notary.algorithm)] = None  # signed before the store broke
    inner = InMemoryFilesystem({"t.ipynb": text})
    fs = NotebookFilesystem(inner, notary=NbformatNotary(lambda: notary))
    with caplog.at_level(logging.WARNING, logger="jupyter_hashline.notebook.trust"):
        notes = await edited(fs, "y = 2", "y = 3")
    assert "y = 3" in inner.get("t.ipynb")
    assert not any("trusted" in note for note in notes)
    assert "Could not keep t.ipynb trusted" in caplog.text


async def test_a_notary_that_raises_on_every_call_never_fails_the_write(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    def broken() -> Any:
        raise RuntimeError("no notary here")

    inner = InMemoryFilesystem({"t.ipynb": notebook_text()})
    fs = NotebookFilesystem(inner, notary=NbformatNotary(broken))
    with caplog.at_level(logging.WARNING, logger="jupyter_hashline.notebook.trust"):
        await edited(fs, "y = 2", "y = 3")
    assert "y = 3" in inner.get("t.ipynb")
    assert "no notary here" in caplog.text


def test_a_machine_without_a_secret_gets_none_created(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    notary = NotebookNotary(data_dir=str(data), store_factory=MemorySignatureStore)
    assert NbformatNotary(lambda: notary).key() is None
    assert list(data.iterdir()) == []
