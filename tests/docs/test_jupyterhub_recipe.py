"""The JupyterHub page's Zero to JupyterHub recipe, checked as the chart and a pod would use it.

- Every setting the page names (`c.Class.trait` in its text, `Class: {trait: ...}` in the
  recipe's files) is a configurable trait of the class that reads it.
- The recipe's `singleuser` values have the shape the chart's schema asks of the keys it uses.
- The chart puts each of the recipe's `extraFiles` at its `mountPath`; here the pod's
  filesystem is a folder (every absolute path in the recipe is moved under it, the config
  directories Jupyter and IPython read from `/etc` and `/usr/local/etc` included). A real
  Jupyter server started there, and IPython as a kernel starts it, end up with each setting the
  files name set to the value they give: a file in a folder Jupyter does not read settings from
  (`jupyter_server_config.d`) or a misspelled class fails here, not silently in a pod.
- The recipe's `JUPYTER_HASHLINE_STORE` makes the command line use the server's store file.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from importlib import import_module
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator

from jupyter_hashline.tools import resolve_store_path

REPO = Path(__file__).resolve().parents[2]
PAGE = (REPO / "docs" / "deploy" / "jupyterhub.md").read_text()

# The class behind each settings section the page may name.
CLASSES = {
    "HashlineExtension": "jupyter_hashline.server:HashlineExtension",
    "BaseFileIdManager": "jupyter_server_fileid.manager:BaseFileIdManager",
    "SQLiteYStore": "jupyter_server_ydoc.stores:SQLiteYStore",
    "NotebookNotary": "nbformat.sign:NotebookNotary",
    "HistoryManager": "IPython.core.history:HistoryManager",
}

# The part of the chart's values schema (jupyterhub/values.schema.yaml of
# zero-to-jupyterhub-k8s) for the `singleuser` keys the recipe uses; any other key fails, so a
# new one is looked up in the chart before it is added here.
SINGLEUSER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "image": {
            "type": "object",
            "additionalProperties": False,
            "required": ["name", "tag"],
            "properties": {"name": {"type": "string"}, "tag": {"type": "string"}},
        },
        "storage": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "type": {"enum": ["dynamic", "static", "none"]},
                "static": {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {
                        "pvcName": {"type": ["string", "null"]},
                        "subPath": {"type": ["string", "null"]},
                    },
                },
            },
        },
        "extraFiles": {
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "additionalProperties": False,
                "required": ["mountPath"],
                "properties": {
                    "mountPath": {"type": "string", "pattern": "^/"},
                    "data": {"type": "object"},
                    "stringData": {"type": "string"},
                    "binaryData": {"type": "string"},
                    "mode": {"type": ["integer", "null"]},
                },
                # `data` is rendered by the chart as YAML, JSON or TOML, by the file's extension
                "if": {"required": ["data"]},
                "then": {"properties": {"mountPath": {"pattern": r"\.(json|ya?ml|toml)$"}}},
            },
        },
        "extraEnv": {"type": "object", "additionalProperties": {"type": "string"}},
    },
}

# Run in a fresh process with the pod's config directories: a Jupyter server (initialized, not
# listening) and an IPython shell as a kernel makes it; prints, for each "Class.trait" asked
# for, the value the object that reads it ended up with.
PROBE = r"""
import json, sys
asked, root, ipython_dirs = json.loads(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3])

from IPython.core import application as ipython_app
ipython_app.SYSTEM_CONFIG_DIRS[:] = ipython_dirs
ipython_app.ENV_CONFIG_DIRS[:] = []
from ipykernel.kernelapp import IPKernelApp
from IPython.core.interactiveshell import InteractiveShell
kernel = IPKernelApp()
kernel.init_profile_dir()
kernel.init_config_files()
kernel.load_config_file()
shell = InteractiveShell.instance(parent=kernel)

from jupyter_server.serverapp import ServerApp
server = ServerApp()
server.initialize(
    argv=["--allow-root", f"--ServerApp.root_dir={root}", "--ServerApp.open_browser=False"],
    new_httpserver=False,
)
points = server.extension_manager.extension_points
ydoc = points["jupyter_server_ydoc"].app
readers = {
    "HashlineExtension": lambda: points["jupyter_hashline"].app,
    "BaseFileIdManager": lambda: server.web_app.settings["file_id_manager"],
    "SQLiteYStore": lambda: ydoc.ystore_class(path="probe", config=ydoc.config),
    "NotebookNotary": lambda: server.contents_manager.notary,
    "HistoryManager": lambda: shell.history_manager,
}
found = {}
for key in asked:
    section, trait = key.split(".")
    value = getattr(readers[section](), trait)
    found[key] = value if isinstance(value, (str, int, float, bool, list, dict)) else str(value)
print(json.dumps(found))
"""


def section(title: str) -> str:
    start = PAGE.index(f"## {title}")
    end = PAGE.find("\n## ", start + 1)
    return PAGE[start:] if end < 0 else PAGE[start:end]


def recipe() -> dict[str, Any]:
    """The `singleuser` values of the page's Zero to JupyterHub recipe."""
    blocks = re.findall(r"```yaml\n(.*?)```", section("Zero to JupyterHub"), re.S)
    (values,) = [yaml.safe_load(block) for block in blocks if block.startswith("singleuser:")]
    return dict(values["singleuser"])


def settings(values: dict[str, Any]) -> dict[str, Any]:
    """{"Class.trait": value} over every file the recipe injects."""
    return {
        f"{cls}.{trait}": value
        for file in values["extraFiles"].values()
        for cls, traits in file.get("data", {}).items()
        for trait, value in traits.items()
    }


def configurable(cls_name: str, trait: str) -> bool:
    assert cls_name in CLASSES, f"the page names {cls_name}: add the class that reads it"
    module, name = CLASSES[cls_name].split(":")
    cls = getattr(import_module(module), name)
    return trait in cls.class_trait_names(config=True)


def test_every_setting_the_page_names_is_a_configurable_trait() -> None:
    named = set(re.findall(r"\bc\.(\w+)\.(\w+)", PAGE))
    named |= {tuple(key.split(".")) for key in settings(recipe())}
    assert ("HashlineExtension", "store_path") in named
    assert [f"{c}.{t}" for c, t in sorted(named) if not configurable(c, t)] == []


def test_the_recipe_has_the_shape_the_chart_takes() -> None:
    errors = [e.message for e in Draft202012Validator(SINGLEUSER_SCHEMA).iter_errors(recipe())]
    assert errors == []


def in_pod(pod: Path, value: Any) -> Any:
    """`value` with each absolute path moved under `pod` (the pod's filesystem, here)."""
    if isinstance(value, dict):
        return {key: in_pod(pod, item) for key, item in value.items()}
    if isinstance(value, str) and value.startswith("/"):
        return str(pod / value.lstrip("/"))
    return value


@pytest.mark.slow
def test_the_recipes_files_set_what_they_say_in_a_pod(tmp_path: Path) -> None:
    from IPython.core.application import SYSTEM_CONFIG_DIRS
    from jupyter_core.paths import SYSTEM_CONFIG_PATH

    pod = tmp_path / "pod"
    values = in_pod(pod, recipe())
    for file in values["extraFiles"].values():
        mounted = Path(file["mountPath"])  # a .json file: the schema test checks that
        mounted.parent.mkdir(parents=True, exist_ok=True)
        mounted.write_text(json.dumps(file["data"]))
    expected = settings(values)
    root = pod / "home" / "jovyan"
    root.mkdir(parents=True)
    (pod / "tmp").mkdir(exist_ok=True)
    env = {
        **os.environ,
        "HOME": str(root),
        "IPYTHONDIR": str(root / ".ipython"),
        "JUPYTER_CONFIG_DIR": str(root / ".jupyter"),
        "JUPYTER_CONFIG_PATH": os.pathsep.join(in_pod(pod, d) for d in SYSTEM_CONFIG_PATH),
        "JUPYTER_DATA_DIR": str(root / ".local" / "share" / "jupyter"),
        "JUPYTER_RUNTIME_DIR": str(pod / "tmp" / "runtime"),
    }
    ipython_dirs = [in_pod(pod, d) for d in SYSTEM_CONFIG_DIRS]
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            PROBE,
            json.dumps(sorted(expected)),
            str(root),
            json.dumps(ipython_dirs),
        ],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert probe.returncode == 0, probe.stderr[-4000:]
    assert json.loads(probe.stdout.strip().splitlines()[-1]) == expected


def test_the_command_line_uses_the_servers_store(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    values = recipe()
    monkeypatch.setenv("JUPYTER_HASHLINE_STORE", values["extraEnv"]["JUPYTER_HASHLINE_STORE"])
    server_store = settings(values)["HashlineExtension.store_path"]
    assert resolve_store_path(tmp_path, None) == server_store
