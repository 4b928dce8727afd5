"""jupyter-hashline: safe, cache-friendly notebook editing for LLM agents.

This top-level module stays import-light: `import jupyter_hashline.hashline` and
`import jupyter_hashline.zones` must not pull in Jupyter, tornado, nbformat or ipywidgets.
Entry points for Jupyter (server extension, IPython magics) import their parts lazily.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
