"""`python -m jupyter_hashline.cli`: the `jupyter-hashline` command."""

from __future__ import annotations

from . import main

raise SystemExit(main())
