"""jupyter-hashline: safe, cache-friendly notebook editing for LLM agents.

This top-level module stays import-light: `import jupyter_hashline.hashline` and
`import jupyter_hashline.zones` must not pull in Jupyter, tornado, nbformat or ipywidgets.
Entry points for Jupyter (server extension, IPython magics) import their parts lazily.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"


def _jupyter_server_extension_points() -> list[dict[str, Any]]:
    """The server extension, imported only when a Jupyter server asks for it."""
    from .server.app import HashlineExtension

    return [{"module": "jupyter_hashline", "app": HashlineExtension}]


def load_ipython_extension(ipython: Any) -> None:
    """`%load_ext jupyter_hashline`: the `%hashline` magics, imported only now."""
    from .widgets.magics import load_ipython_extension as load

    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """`%unload_ext jupyter_hashline`."""
    from .widgets.magics import unload_ipython_extension as unload

    unload(ipython)


__all__ = ["__version__", "load_ipython_extension", "unload_ipython_extension"]
