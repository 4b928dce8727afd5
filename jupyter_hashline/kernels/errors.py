"""Errors of cell execution, in the engine's one error tree (`HashlineError`).

Each carries the text an agent reads, a stable `kind` and an HTTP status hint, so every
surface maps them the way it maps edit errors. Refusals say that nothing ran and what to do.
"""

from __future__ import annotations

from ..hashline.errors import HashlineError, StaleTagError, UnseenLinesError


class NotRunnableError(HashlineError):
    """The request names nothing that can run: a markdown or raw cell, or no cell at all."""

    kind = "not_runnable"


class StaleCellsError(StaleTagError):
    """A cell to run changed (or appeared, or went) since the agent's tag; nothing ran.

    `live_text` is the projection the refusal was judged against and `shown_lines` the live
    line numbers its rows show, so the caller can record that text and credit those lines.
    """

    kind = "stale_cells"

    def __init__(self, message: str, *, live_text: str, shown_lines: tuple[int, ...]) -> None:
        super().__init__(message)
        self.live_text = live_text
        self.shown_lines = shown_lines


class KernelError(HashlineError):
    """The kernel could not run the cells: it would not start, or it died."""

    status = 503
    kind = "kernel_error"


class KernelUnavailableError(KernelError):
    """No kernel could be started for the notebook (no such kernelspec, start failed)."""

    kind = "kernel_unavailable"


class KernelDiedError(KernelError):
    """The notebook's kernel died before the run; it is restarted on the next run."""

    kind = "kernel_died"


class UnseenCellsError(UnseenLinesError):
    """Lines of a cell to run were never shown to the agent under its tag; nothing ran.

    `revealed_lines` are the tagged text's line numbers the message shows; when `complete`,
    they are every unseen line, so the caller may count them as seen (a retry then runs).
    """

    kind = "unseen_cells"

    def __init__(self, message: str, *, revealed_lines: tuple[int, ...], complete: bool) -> None:
        super().__init__(message)
        self.revealed_lines = revealed_lines
        self.complete = complete
