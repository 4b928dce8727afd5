"""Which kernel a notebook runs in: its own kernelspec, else the default for Python.

Invariants:
- The notebook's `metadata.kernelspec.name` is used when that kernelspec is installed.
- A notebook without a kernelspec, or a Python notebook (kernelspec or `language_info` says
  `python`) whose kernelspec is not installed here, gets the default kernel (`python3`).
- Anything else is `KernelUnavailableError` naming the kernel it needs and the installed ones:
  a notebook is never run in a kernel of another language.
- Pure: the notebook's text or metadata and the installed names in, a name out.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from typing import Any

from .errors import KernelUnavailableError

DEFAULT_KERNEL = "python3"


def notebook_metadata(raw: str) -> Mapping[str, Any]:
    """The metadata of a notebook file's text ({} when it has none or is not JSON)."""
    try:
        data = json.loads(raw)
    except ValueError:
        return {}
    metadata = data.get("metadata") if isinstance(data, dict) else None
    return metadata if isinstance(metadata, dict) else {}


def choose_kernel(
    path: str,
    metadata: Mapping[str, Any],
    installed: Collection[str],
    default: str = DEFAULT_KERNEL,
) -> str:
    """The kernelspec name to run notebook `path` in (see the module docstring)."""
    spec = _mapping(metadata.get("kernelspec"))
    wanted = spec.get("name") if isinstance(spec.get("name"), str) else None
    if wanted in installed:
        return str(wanted)
    language = spec.get("language") or _mapping(metadata.get("language_info")).get("name")
    if (wanted is None or language in (None, "python")) and default in installed:
        return default
    names = ", ".join(sorted(installed)) or "none"
    raise KernelUnavailableError(
        f"{path} needs the kernel {wanted or default!r}, which is not installed here "
        f"(installed kernels: {names}). Nothing ran. Install it (for Python: `python -m "
        "ipykernel install --user`) or run the notebook where it is installed."
    )


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}
