"""Fixtures for the server extension tests (defined in server_fixtures.py, shared with the
reliability and security tests)."""

from __future__ import annotations

from server_fixtures import api, hashline_config, jp_server_config

__all__ = ["api", "hashline_config", "jp_server_config"]
