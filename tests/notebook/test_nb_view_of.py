"""`NotebookFilesystem.view_of`: the view a read would show of a given notebook file text, in
the filesystem's own projection (what the server's runner reports after a room saved)."""

from __future__ import annotations

from testkit.nb_files import analysis, dumps

from jupyter_hashline.hashline import InMemoryFilesystem
from jupyter_hashline.notebook import NotebookFilesystem, project_notebook


async def test_the_view_of_a_text_is_what_a_read_of_that_file_shows() -> None:
    text = dumps(analysis())
    inner = InMemoryFilesystem({"a.ipynb": text})
    for projection in ("hashline", "py:percent"):
        fs = NotebookFilesystem(inner, projection=projection)
        assert fs.view_of("a.ipynb", text) == await fs.read_text("a.ipynb")
    assert NotebookFilesystem(inner).view_of("a.ipynb", text) == project_notebook(analysis())
    assert "# %%" in NotebookFilesystem(inner, projection="py:percent").view_of("a.ipynb", text)


async def test_the_view_of_another_text_than_the_files_is_that_texts() -> None:
    inner = InMemoryFilesystem({"a.ipynb": dumps(analysis())})
    fs = NotebookFilesystem(inner)
    await fs.read_text("a.ipynb")
    changed = analysis()
    changed["cells"][0]["source"] = "# Sales, saved by the room"
    assert fs.view_of("a.ipynb", dumps(changed)) == project_notebook(changed)
