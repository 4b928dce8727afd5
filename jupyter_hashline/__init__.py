"""jupyter-hashline: safe, cache-friendly notebook editing for LLM agents.

This top-level module stays import-light: `import jupyter_hashline.hashline` and
`import jupyter_hashline.zones` must not pull in Jupyter, tornado, nbformat or ipywidgets.
Entry points for Jupyter (server extension, IPython magics) import their parts lazily.

`__version__` is the installed distribution's version, whose one source is the JupyterLab
extension's labextension/package.json; it is read from the package metadata on first use, so
importing the package does not pay for `importlib.metadata`.
"""

from __future__ import annotations

from typing import Any

_DISTRIBUTION = "jupyter-hashline"
_UNKNOWN_VERSION = "0+unknown"
"""What `__version__` says when the package runs from a source tree that was never installed."""


def __getattr__(name: str) -> str:
    """`__version__`, read once from the installed distribution's metadata."""
    if name != "__version__":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version(_DISTRIBUTION)
    except PackageNotFoundError:
        found = _UNKNOWN_VERSION
    globals()["__version__"] = found
    return found


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
