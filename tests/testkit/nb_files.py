"""Shared helpers for the notebook tests: small real notebooks and a person who edits them."""

from __future__ import annotations

import copy
from typing import Any

import nbformat

from jupyter_hashline.hashline.disk import DiskFilesystem
from jupyter_hashline.hashline.memory_fs import InMemoryFilesystem

STREAM = {"output_type": "stream", "name": "stdout", "text": "a\nb\nc\n"}


def analysis(minor: int = 5) -> dict[str, Any]:
    """A small analysis notebook: intro, load-data (with output), clean, plot."""
    cells: list[dict[str, Any]] = [
        {"cell_type": "markdown", "metadata": {}, "source": "# Sales analysis"},
        {"cell_type": "code", "execution_count": 1, "metadata": {"tags": ["load"]},
         "outputs": [STREAM], "source": "import pandas as pd\ndf = pd.read_csv(\"sales.csv\")"},
        {"cell_type": "code", "execution_count": 2, "metadata": {}, "outputs": [],
         "source": "df = df.dropna()\ndf = df[df.amount > 0]\ntotal = df.amount.sum()"},
        {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
         "source": "df.plot()"},
    ]  # fmt: skip
    if minor >= 5:
        for cell, cid in zip(cells, ["intro", "load-data", "clean", "plot"], strict=True):
            cell["id"] = cid
    meta = {"kernelspec": {"name": "python3", "display_name": "Python 3"}, "x-custom": {"k": 1}}
    return {"cells": cells, "metadata": meta, "nbformat": 4, "nbformat_minor": minor}


def dumps(nb: dict[str, Any]) -> str:
    return nbformat.writes(nbformat.from_dict(copy.deepcopy(nb))) + "\n"


def loads(raw: str) -> Any:
    return nbformat.reads(raw, as_version=4)


class Storage:
    """One inner filesystem (in memory or on disk) plus direct access, as a person saving."""

    def __init__(self, kind: str, tmp_path: Any) -> None:
        self.kind = kind
        self.root = tmp_path
        self.fs: Any = InMemoryFilesystem() if kind == "memory" else DiskFilesystem(tmp_path)

    def put(self, path: str, raw: str) -> None:
        if self.kind == "memory":
            self.fs.set(path, raw)
        else:
            (self.root / path).write_bytes(raw.encode("utf-8"))

    def get(self, path: str) -> str:
        if self.kind == "memory":
            return str(self.fs.get(path))
        return str((self.root / path).read_bytes().decode("utf-8"))

    def person_edits(self, path: str, change: Any) -> None:
        """Load the notebook as Jupyter would, let `change(nb)` edit it, save it."""
        nb = loads(self.get(path))
        change(nb)
        self.put(path, nbformat.writes(nb) + "\n")
