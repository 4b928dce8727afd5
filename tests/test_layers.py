"""The package's layers, read from its source: every import (module level, function level and
`TYPE_CHECKING` blocks alike) must point downward.

    server, widgets, mcp  ->  agent  ->  tools  ->  kernels  ->  notebook, zones  ->  hashline
    cli, demo (the entry points) may use any of them.

`kernels/` is the pure gate and results of running cells; its kernel pool (jupyter_client) is
imported only by the surfaces that start kernels, never by `tools/`.

The surfaces (server, widgets, mcp, agent, cli, demo) import only the faces of the other
subpackages: `jupyter_hashline.tools`, `.notebook`, `.kernels`, `.hashline`, `.zones`, `.agent`,
`.mcp` as their `__init__` exports them, never a module inside (`notebook.loading`,
`hashline.patcher`, ...). The kernel pool and a kernel client load jupyter_client: the
`kernels` face exports them lazily, so no surface needs a way around it.

Also: only `tools/` imports the `Patcher`; only `server/` imports jupyter_server or tornado;
`tools/` imports no Jupyter server, tornado, ipywidgets or kernel client; no import cycle
between subpackages. The one upward reference allowed is the lazy import behind
`Session.panel()` (agent -> widgets), listed by name below. The pure core's messages name no
surface's settings (`HashlineExtension...`): a surface passes its own advice in.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "jupyter_hashline"
NAME = "jupyter_hashline"

RANK = {
    "hashline": 0,
    "notebook": 1,
    "zones": 1,
    "kernels": 2,
    "tools": 3,
    "agent": 4,
    "server": 5,
    "widgets": 5,
    "mcp": 5,
    "cli": 6,
    "demo": 6,
}
ALLOWED_UPWARD = {
    # `session.panel()`: the ipywidgets panel of a session, imported only when asked for.
    ("jupyter_hashline.agent.session", "jupyter_hashline.widgets"),
}
SURFACES = {"server", "widgets", "mcp", "agent", "cli", "demo"}
JUPYTER_SERVER = {"jupyter_server", "tornado"}
NOT_IN_TOOLS = {"jupyter_server", "tornado", "ipywidgets", "jupyter_client", "ipykernel"}


@dataclass(frozen=True, slots=True)
class Import:
    module: str  # the importing module
    target: str  # the imported module (absolute)
    names: tuple[str, ...]  # names imported from it (`from X import a, b`)
    line: int


def module_name(path: Path, package: Path = PACKAGE) -> str:
    parts = path.relative_to(package.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, package: Path = PACKAGE) -> Iterator[Import]:
    """Every import statement in the file, wherever it is (functions and `if` blocks too).
    `package` is the package directory the file is in (another one for the probe test)."""
    module = module_name(path, package)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(module, alias.name, (), node.lineno)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            names = tuple(alias.name for alias in node.names)
            yield Import(module, base, names, node.lineno)


def all_imports() -> list[Import]:
    return [imp for path in sorted(PACKAGE.rglob("*.py")) for imp in imports_of(path)]


def layer(module: str) -> str | None:
    """The subpackage (or top-level module) of a package module; None for the package root."""
    parts = module.split(".")
    return parts[1] if parts[0] == NAME and len(parts) > 1 else None


def targets(imp: Import) -> list[str]:
    """The package modules an import reaches (`from .x import y` names submodule `x.y` too)."""
    if imp.target != NAME and not imp.target.startswith(f"{NAME}."):
        return [imp.target]
    where = PACKAGE.joinpath(*imp.target.split(".")[1:])
    submodules = [f"{imp.target}.{name}" for name in imp.names if is_submodule(where / name)]
    if imp.target == NAME:  # `from .. import x`: x may be a subpackage or a root attribute
        return submodules
    return [imp.target, *submodules]


def is_submodule(path: Path) -> bool:
    return path.is_dir() or path.with_suffix(".py").is_file()


IMPORTS = all_imports()


def test_the_walk_sees_every_kind_of_import() -> None:
    session = [i for i in IMPORTS if i.module == "jupyter_hashline.agent.session"]
    assert any(i.target == "jupyter_hashline.widgets" for i in session)  # inside panel()
    assert any(i.target == "jupyter_hashline.tools" for i in session)
    assert len({i.module for i in IMPORTS}) > 60


def test_imports_point_downward() -> None:
    wrong = []
    for imp in IMPORTS:
        here = layer(imp.module)
        for target in targets(imp):
            there = layer(target)
            if here is None or there is None or here == there:
                continue  # the package root is import-light and may be used by anyone
            if RANK[there] >= RANK[here] and (imp.module, f"{NAME}.{there}") not in ALLOWED_UPWARD:
                wrong.append(f"{imp.module}:{imp.line} imports {target}")
    assert not wrong, "\n".join(wrong)


def behind_faces(imports: list[Import]) -> list[str]:
    """The imports by a surface of a module inside another subpackage (not its face)."""
    wrong = []
    for imp in imports:
        here = layer(imp.module)
        if here not in SURFACES:
            continue
        for target in targets(imp):
            there = layer(target)
            if there in (None, here) or target == f"{NAME}.{there}":
                continue
            wrong.append(f"{imp.module}:{imp.line} imports {target}")
    return wrong


def test_surfaces_import_package_faces_only() -> None:
    wrong = behind_faces(IMPORTS)
    assert not wrong, "\n".join(wrong)


def test_the_faces_check_catches_a_module_behind_a_face(tmp_path: Path) -> None:
    """A probe surface module, in a package laid out as this one, that imports internals in
    every form an import can take: each is reported, its face imports are not."""
    adapters = tmp_path / NAME / "server" / "adapters"
    adapters.mkdir(parents=True)
    probe = adapters / "probe.py"
    probe.write_text(
        "from ...notebook import load_notebook\n"  # a face: fine
        "from ...kernels import own_client\n"  # a lazy name of a face: fine
        "from ...notebook.loading import parse_json\n"  # 3
        "from ...hashline import patcher\n"  # 4: a submodule named from its package
        "import jupyter_hashline.kernels.execute\n"  # 5
        "from ...kernels.clients import own_client\n"  # 6: behind the face's lazy name
        "def later():\n"
        "    from ...tools.workspace import Workspace\n"  # 8: inside a function
        "from ..errors import error_response\n",  # its own layer: fine
        encoding="utf-8",
    )
    found = behind_faces(list(imports_of(probe, tmp_path / NAME)))
    module = f"{NAME}.server.adapters.probe"
    assert found == [
        f"{module}:3 imports {NAME}.notebook.loading",
        f"{module}:4 imports {NAME}.hashline.patcher",
        f"{module}:5 imports {NAME}.kernels.execute",
        f"{module}:6 imports {NAME}.kernels.clients",
        f"{module}:8 imports {NAME}.tools.workspace",
    ]


def test_no_import_cycle_between_subpackages() -> None:
    edges: dict[str, set[str]] = {}
    for imp in IMPORTS:
        here = layer(imp.module)
        for target in targets(imp):
            there = layer(target)
            allowed = (imp.module, f"{NAME}.{there}") in ALLOWED_UPWARD
            if here and there and here != there and not allowed:
                edges.setdefault(here, set()).add(there)

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        for nxt in edges.get(start, ()):
            if nxt == goal or (nxt not in seen and reaches(nxt, goal, seen | {nxt})):
                return True
        return False

    cycles = sorted(a for a in edges if reaches(a, a, {a}))
    assert not cycles, f"subpackages in an import cycle: {cycles} ({edges})"


def test_only_tools_imports_the_patcher() -> None:
    users = {
        imp.module
        for imp in IMPORTS
        if "Patcher" in imp.names
        or (imp.target == "jupyter_hashline.hashline.patcher" and "Patcher" in imp.names)
    }
    outside = {m for m in users if layer(m) not in ("tools", "hashline")}
    assert not outside, outside
    assert "jupyter_hashline.tools.workspace" in users


@pytest.mark.parametrize(
    ("subpackage", "forbidden"),
    [
        ("tools", NOT_IN_TOOLS),
        ("agent", JUPYTER_SERVER),
        ("mcp", JUPYTER_SERVER),
        ("widgets", JUPYTER_SERVER),
        ("notebook", JUPYTER_SERVER | {"ipywidgets"}),
        ("hashline", JUPYTER_SERVER | {"ipywidgets", "nbformat"}),
        ("zones", JUPYTER_SERVER | {"ipywidgets", "nbformat"}),
        ("cli", JUPYTER_SERVER),
    ],
)
def test_third_party_imports_stay_in_their_layer(subpackage: str, forbidden: set[str]) -> None:
    found = [
        f"{imp.module}:{imp.line} imports {imp.target}"
        for imp in IMPORTS
        if layer(imp.module) == subpackage and imp.target.split(".")[0] in forbidden
    ]
    assert not found, "\n".join(found)


def test_only_server_imports_jupyter_server() -> None:
    users = {
        layer(imp.module)
        for imp in IMPORTS
        if imp.target.split(".")[0] in JUPYTER_SERVER and imp.module != NAME
    }
    assert users == {"server"}


def _advice_strings(path: Path) -> Iterator[tuple[int, str]]:
    """The string constants of a module that are not docstrings, with their lines."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            yield node.lineno, node.value


def core_strings_naming(word: str, package: Path = PACKAGE) -> list[str]:
    """Where the pure core's strings (messages, log lines; not docstrings) contain `word`."""
    return [
        f"{path.relative_to(package)}:{line}"
        for sub in ("hashline", "zones")
        for path in sorted((package / sub).rglob("*.py"))
        for line, text in _advice_strings(path)
        if word in text
    ]


def test_the_core_advises_no_surfaces_setting() -> None:
    """What the pure core tells an agent or a log names no surface's configuration: advice on
    a setting (the store's file) comes from the surface that opened it."""
    assert core_strings_naming("HashlineExtension") == []


def test_the_advice_check_sees_a_planted_setting(tmp_path: Path) -> None:
    (tmp_path / "hashline").mkdir()
    (tmp_path / "zones").mkdir()
    (tmp_path / "hashline" / "m.py").write_text(
        '"""Docs may name c.HashlineExtension.x."""\nADVICE = "set c.HashlineExtension.x"\n'
    )
    assert core_strings_naming("HashlineExtension", tmp_path) == ["hashline/m.py:2"]
