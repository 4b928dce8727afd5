"""REST fuzzing with schemathesis, from the package's own schema: no 5xx, every body conforms.

The package's JSON Schema (`rest_schema.json`) is wrapped into an OpenAPI 3.1 document by
`jupyter_hashline.server.openapi`; schemathesis generates requests for every operation, valid
ones (positive) and invalid ones (negative), and sends them with the token to a real Jupyter
server subprocess on 127.0.0.1 only. Every answer must be below 500 and match its response
definition (successes their route's, errors `ErrorResponse`). Every answer is counted by the
shared recorder before it is checked. Bounded: 20 examples per operation and mode in `make
test`; `HASHLINE_SOAK=1` (400) or `HASHLINE_FUZZ_EXAMPLES=N` for many more.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.generation import GenerationMode
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
)
from testkit.faults import TALLY
from testkit.recorder import RECORDER

from bench.server import TOKEN, LocalServer
from jupyter_hashline.server.handlers import ROUTES
from jupyter_hashline.server.openapi import OPERATIONS, openapi_document

SOAK = os.environ.get("HASHLINE_SOAK") == "1"
EXAMPLES = int(os.environ.get("HASHLINE_FUZZ_EXAMPLES", "400" if SOAK else "20"))
"""Examples per operation and mode: 20 in `make test`; the soak (or HASHLINE_FUZZ_EXAMPLES)
sends more than 10,000 requests in all, counted by the recorder."""
SCHEMA = schemathesis.openapi.from_dict(openapi_document())
LABELS = [f"{op.method.upper()} /hashline/{op.route}" for op in OPERATIONS]
CHECKS = [not_a_server_error, response_schema_conformance, content_type_conformance]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    work = tmp_path_factory.mktemp("fuzz")
    root = work / "root"
    root.mkdir()
    (root / "a.py").write_text("a = 1\nb = 2\n")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = 1", id="c1")]
    nbformat.write(nb, root / "nb.ipynb")
    with LocalServer(root, work / "home") as running:
        yield running


def test_the_document_covers_every_route_and_is_valid_openapi() -> None:
    assert {(op.route, op.method) for op in OPERATIONS} == {
        (route, method)
        for route, handler in ROUTES
        for method in ("get", "post")
        if method in vars(handler)
    }
    labels = {result.ok().label for result in SCHEMA.get_all_operations()}  # type: ignore[union-attr]
    assert labels == {re.sub(r"/\(\?P<(\w+)>[^)]*\)", r"/{\1}", label) for label in LABELS}
    document = openapi_document(base_url="/jupyter/", server_url="http://127.0.0.1:8888")
    assert "/jupyter/hashline/read" in document["paths"]
    assert document["servers"] == [{"url": "http://127.0.0.1:8888"}]
    assert "$defs" not in str(document)


def operation(label: str) -> Any:
    method, path = label.split(" ", 1)
    path = re.sub(r"\(\?P<(\w+)>[^)]*\)", r"{\1}", path)
    return SCHEMA[path][method]


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE], ids=str)
@pytest.mark.parametrize("label", LABELS)
def test_fuzzed_requests_never_get_a_5xx(server: LocalServer, label: str, mode: Any) -> None:
    base_url = f"http://127.0.0.1:{server.port}"
    assert base_url.startswith("http://127.0.0.1:")  # loopback only
    headers = {"Authorization": f"token {TOKEN}"}
    strategy = operation(label).as_strategy(generation_mode=mode)

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    @given(case=strategy)
    def run(case: Any) -> None:
        response = case.call(base_url=base_url, headers=headers, timeout=30)
        RECORDER.answer(label, response.status_code)
        TALLY["inputs tried"] += 1
        if 400 <= response.status_code < 500:
            TALLY["inputs clean errors"] += 1
        case.validate_response(response, checks=CHECKS, headers=headers)

    run()


def test_the_fuzzed_root_is_still_intact(server: LocalServer) -> None:
    """Fuzzed writes may create files, but only inside the root, and never break a notebook."""
    root: Path = server.root
    for path in root.rglob("*.ipynb"):
        try:
            nb = nbformat.read(path, as_version=4)
        except Exception:  # a fuzzed *text* write may name a .ipynb: then it must be refused
            pytest.fail(f"{path} is not a readable notebook after fuzzing")
        nbformat.validate(nb)
    outside = [p for p in server.root.parent.rglob("*") if root not in (p, *p.parents)]
    assert all(p.is_relative_to(server.home) or p == root for p in outside)
