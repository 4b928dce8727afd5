"""The sidebar's event ids and payload types come from the server's event schemas:
regenerating `labextension/src/event-types.ts` must give the checked-in file, byte for byte."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

from jupyter_hashline.server.events import SCHEMA_FILES

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = REPO / "labextension" / "scripts"
CHECKED_IN = REPO / "labextension" / "src" / "event-types.ts"


def load_script(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def generator() -> ModuleType:
    load_script("generate_rest_types")  # the event generator reuses its translator
    return load_script("generate_event_types")


def test_checked_in_event_types_match_the_schemas(generator: ModuleType) -> None:
    assert generator.generate(generator.load_schemas()) == CHECKED_IN.read_text("utf-8"), (
        "labextension/src/event-types.ts is stale: "
        "run python labextension/scripts/generate_event_types.py"
    )


def test_every_registered_schema_has_its_id_and_payload_type() -> None:
    text = CHECKED_IN.read_text("utf-8")
    ids = dict(re.findall(r'^export const (\w+)_EVENT_ID = "([^"]+)";$', text, re.M))
    assert sorted(ids.values()) == sorted(SCHEMA_FILES)
    for path in SCHEMA_FILES.values():
        assert f"export interface {path.stem.title()}Event {{" in text


def test_check_mode_reports_a_stale_file(generator: ModuleType, tmp_path: Path) -> None:
    stale = tmp_path / "event-types.ts"
    stale.write_text("// old\n")
    assert generator.main(["--check"], stale) == 1
    assert generator.main([], stale) == 0
    assert generator.main(["--check"], stale) == 0
    assert stale.read_text() == CHECKED_IN.read_text()


def test_payload_metadata_is_left_out_and_unknown_constructs_raise(generator: ModuleType) -> None:
    schema = {
        "$id": "https://example.test/e/v1",
        "version": "1",
        "personal-data": True,
        "type": "object",
        "properties": {"n": {"type": "integer"}},
    }
    text = generator.generate({"thing": schema})
    assert 'export const THING_EVENT_ID = "https://example.test/e/v1";' in text
    assert "version" not in text.split("export interface", 1)[1]
    with pytest.raises(ValueError, match="not translated"):
        generator.generate({"odd": {**schema, "patternProperties": {}}})
