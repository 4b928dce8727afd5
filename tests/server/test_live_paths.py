"""The live path and the contents-manager path give the same views, results and tags.

The server of test_live_rooms.py (jupyter-collaboration active, from `testkit.rooms`); one copy
of a notebook is open in a room, its twin is not.
"""

from __future__ import annotations

import csv
import itertools
import json
import shutil
from pathlib import Path

import pytest
from testkit.rest import Api, read_view, write_notebook
from testkit.rooms import OpenInLab
from traitlets.config import Config

from jupyter_hashline.notebook import ids


@pytest.fixture
def jp_server_config(collaboration_server_config: Config) -> Config:
    return collaboration_server_config


SHARED_FEATURES = ("attachments", "widgets", "unicode", "crlf", "images", "errors", "raw")


def has_cells(path: Path) -> bool:
    return bool(json.loads(path.read_text(encoding="utf-8")).get("cells"))


def corpus_selection(corpus_dir: Path, limit: int = 8) -> list[Path]:
    """Small valid corpus notebooks covering legacy ids and varied content.

    Notebooks without cells are left out: a room opens them with one empty cell (as JupyterLab
    shows them), so their live view rightly differs from the file.
    """
    with open(corpus_dir / "MANIFEST.tsv", encoding="utf-8") as handle:
        rows = [r for r in csv.DictReader(handle, delimiter="\t") if r["valid"] == "y"]
    picked: list[Path] = []
    for row in sorted(rows, key=lambda r: int(r["bytes"])):
        wanted = any(f in row["features"] for f in SHARED_FEATURES) or row["has_ids"] == "n"
        path = corpus_dir / row["file"]
        if wanted and int(row["bytes"]) < 400_000 and path.is_file() and has_cells(path):
            picked.append(path)
    return picked[:limit]


async def test_corpus_notebooks_read_the_same_live_and_on_disk(
    api: Api, jp_root_dir: Path, corpus_dir: Path, open_in_lab: OpenInLab
) -> None:
    notebooks = corpus_selection(corpus_dir)
    assert len(notebooks) >= 4
    for index, source in enumerate(notebooks):
        path = f"corpus/{index}.ipynb"
        (jp_root_dir / "corpus").mkdir(exist_ok=True)
        shutil.copyfile(source, jp_root_dir / path)
        on_disk = await read_view(api, path)
        async with open_in_lab(path):
            live = await read_view(api, path)
        assert live["tag"] == on_disk["tag"], source.name
        assert live["view"] == on_disk["view"], source.name


EDITS = [
    "replace 4:\n+total = sum(values)\n",  # a line of a code cell
    "insert after 2:\n+# %% [markdown]\n+## Totals\n",  # a new cell (fresh id: new1)
    "delete 9..10\n",  # a whole cell (marker and source)
    "replace 1:\n+# %% [markdown] id=cell-0\n",  # retype code -> markdown (outputs go)
    "delete 3..4\ninsert after 8:\n+# %% [markdown] id=new1\n+## Totals\n",  # a move
]


async def run_edits(api: Api, path: str) -> list[tuple[str, str, str]]:
    """Read, then apply the next of EDITS, in turn; the views, reply texts and new headers."""
    replies = []
    for edit in EDITS:
        view = await read_view(api, path)
        status, body = await api(
            "patch", method="POST", body={"patch": f"{view['header']}\n{edit}"}
        )
        assert status == 200, body
        header = body["sections"][0]["header"]
        replies.append((view["view"], body["text"], header))
    return [tuple(part.replace(path, "NB") for part in reply) for reply in replies]


async def test_same_edits_same_replies_tags_and_bytes(
    api: Api, jp_root_dir: Path, open_in_lab: OpenInLab, monkeypatch: pytest.MonkeyPatch
) -> None:
    sources = ("values = [1, 2]", "total = 0\nfor v in values:\n    total += v", "print(total)")
    write_notebook(jp_root_dir / "disk.ipynb", *sources, outputs=True)
    write_notebook(jp_root_dir / "live.ipynb", *sources, outputs=True)

    def deterministic_ids() -> None:
        counter = itertools.count(1)
        monkeypatch.setattr(ids, "generate_corpus_id", lambda: f"new{next(counter)}")

    deterministic_ids()
    on_disk = await run_edits(api, "disk.ipynb")
    deterministic_ids()
    async with open_in_lab("live.ipynb"):
        live = await run_edits(api, "live.ipynb")
    assert live == on_disk
    assert on_disk[-1][1].count("## Totals") == 1
    final = (await read_view(api, "live.ipynb"))["view"]
    assert final.index("id=cell-1") < final.index("## Totals")
    disk_nb = json.loads((jp_root_dir / "disk.ipynb").read_text())
    live_nb = json.loads((jp_root_dir / "live.ipynb").read_text())
    # A room fills in empty `language_info` when it opens a notebook (JupyterLab does too).
    assert live_nb["metadata"].pop("language_info") == {"name": ""}
    assert live_nb == disk_nb
