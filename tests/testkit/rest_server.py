"""Plugin: the REST test fixtures. A Jupyter server with jupyter_hashline enabled and
authentication required (`hashline_server_config`, which the top-level conftest makes the
suite's `jp_server_config`), per-test trait overrides (`hashline_config`), and `api` to call
the REST API with every body schema-checked.

Every REST test (server, reliability, security) runs against this one server configuration."""

from __future__ import annotations

import json
from typing import Any

import pytest
from tornado.httpclient import HTTPClientError
from traitlets.config import Config

from testkit.recorder import RECORDER, Recorder
from testkit.rest import Api, Fetch, NamedUserProvider, check_schema


@pytest.fixture
def hashline_config(request: pytest.FixtureRequest) -> dict[str, Any]:
    """Per-test overrides for `HashlineExtension` traits (parametrize it indirectly)."""
    return dict(getattr(request, "param", {}))


@pytest.fixture
def hashline_server_config(hashline_config: dict[str, Any]) -> Config:
    """jupyter_hashline enabled (terminals off), authentication required, a named user."""
    return Config(
        {
            "ServerApp": {
                "jpserver_extensions": {
                    "jupyter_hashline": True,
                    "jupyter_server_terminals": False,
                },
                "allow_unauthenticated_access": False,
                "identity_provider_class": NamedUserProvider,
            },
            "HashlineExtension": hashline_config,
        }
    )


@pytest.fixture
def recorder() -> Recorder:
    """Where `api` counts its answers: the run's one recorder (a meta-test passes its own)."""
    return RECORDER


@pytest.fixture
def api(jp_fetch: Fetch, recorder: Recorder) -> Api:
    """Call `hashline/<route>`; returns (status, JSON body) for successes and errors alike.

    Every answer is counted by the recorder first (`expect`: error statuses the test means to
    provoke); then every body is checked against the REST schema: errors against
    ErrorResponse, successes against the definition named by `schema`.
    """

    async def call(
        route: str,
        *,
        method: str = "GET",
        params: dict[str, str] | None = None,
        body: object = None,
        raw_body: bytes | None = None,
        schema: str | None = None,
        headers: dict[str, str] | None = None,
        expect: int | tuple[int, ...] = (),
    ) -> tuple[int, dict[str, Any]]:
        kwargs: dict[str, Any] = {"method": method, "params": params, "headers": headers}
        if method == "POST":
            kwargs["body"] = raw_body if raw_body is not None else json.dumps(body)
        try:
            response = await jp_fetch("hashline", *route.split("/"), **kwargs)
        except HTTPClientError as err:
            assert err.response is not None
            recorder.answer(route, err.code, expect=expect)  # counted before any check
            payload = json.loads(err.response.body)
            check_schema("ErrorResponse", payload)
            return err.code, payload
        recorder.answer(route, response.code, expect=expect)
        payload = json.loads(response.body)
        if schema is not None:
            check_schema(schema, payload)
        return response.code, payload

    return call
