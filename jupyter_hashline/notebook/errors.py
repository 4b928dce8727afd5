"""The notebook layer's errors, in the engine's one error tree.

`InvalidNotebookError` is a `HashlineError` (status 422, kind `invalid_notebook`), so every
adapter maps it like any engine error; it lives here because only the notebook layer (and the
storage adapters below it that parse notebooks) knows what a valid notebook is.
"""

from __future__ import annotations

from ..hashline.errors import HashlineError

__all__ = ["InvalidNotebookError"]


class InvalidNotebookError(HashlineError):
    """A notebook that cannot be parsed, projected, merged or validated."""

    status = 422
    kind = "invalid_notebook"
