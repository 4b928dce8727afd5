"""Sphinx configuration for the jupyter-hashline documentation.

The build must pass offline with warnings as errors (`make docs` runs `sphinx-build -W`): no
intersphinx, no remote images, no extension that fetches anything. The reference pages for the
configuration traits, the REST API and the tool catalog are generated from the package itself
at build time (`_ext/hashline_reference.py`), so they cannot drift from the code.
"""

from __future__ import annotations

import sys
from importlib.metadata import version as package_version
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "_ext"))

project = "jupyter-hashline"
author = "jupyter-hashline contributors"
copyright = "2026, jupyter-hashline contributors"
release = package_version("jupyter-hashline")
version = release

extensions = ["myst_parser", "hashline_reference"]
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
suppress_warnings: list[str] = []

html_theme = "pydata_sphinx_theme"
html_title = "jupyter-hashline"
html_static_path = ["_static"]
html_css_files = ["css/hashline.css"]
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "footer_start": ["copyright"],
    "footer_end": [],
}
html_show_sourcelink = False

# Where the generated reference pages read their facts (see _ext/hashline_reference.py).
hashline_config_classes = [
    "jupyter_hashline.server.app.HashlineExtension",
    "jupyter_hashline.agent.settings.HashlineSession",
]
hashline_overlay_keys = "jupyter_hashline.server.config.OVERLAY_KEYS"
hashline_openapi = "jupyter_hashline.server.openapi.openapi_document"
hashline_tool_specs = "jupyter_hashline.tools.catalog.mcp_definitions"
hashline_cli_parser = "jupyter_hashline.cli.build_parser"
