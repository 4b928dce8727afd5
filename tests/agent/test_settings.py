"""Session settings: arguments > the user's Jupyter config > keyring > environment, and nothing
from the working directory or the workspace.

The config is real files in a real Jupyter config directory (`JUPYTER_CONFIG_DIR`), loaded by
traitlets; the keyring is the real `keyring` API over an in-memory backend."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterator
from pathlib import Path

import keyring
import pytest
from keyring.backend import KeyringBackend
from keyring.errors import KeyringLocked, PasswordDeleteError
from traitlets.config.loader import PyFileConfigLoader

from jupyter_hashline.agent.providers import DeepSeekClient
from jupyter_hashline.agent.session import Session
from jupyter_hashline.agent.settings import (
    CONFIG_FILE,
    KEYRING_SERVICE,
    Source,
    config_dirs,
    resolve_session_settings,
)
from jupyter_hashline.agent.simulator import ProviderSimulator

PROVIDER_ENV = [
    f"{p}_{k}" for p in ("ANTHROPIC", "OPENAI", "DEEPSEEK") for k in ("API_KEY", "BASE_URL")
]


class MemoryKeyring(KeyringBackend):
    """A keyring backend that keeps passwords in a dict and counts lookups."""

    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.passwords: dict[tuple[str, str], str] = {}
        self.lookups: list[tuple[str, str]] = []
        self.locked = False

    def get_password(self, service: str, username: str) -> str | None:
        self.lookups.append((service, username))
        if self.locked:
            raise KeyringLocked("the test keyring is locked")
        return self.passwords.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.passwords[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        if self.passwords.pop((service, username), None) is None:
            raise PasswordDeleteError(f"no password for {username} in {service}")


@pytest.fixture
def config_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty user config directory; the working directory is elsewhere."""
    directory = tmp_path / "user-config"
    directory.mkdir()
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(directory))
    monkeypatch.delenv("JUPYTER_CONFIG_PATH", raising=False)
    for name in PROVIDER_ENV:
        monkeypatch.delenv(name, raising=False)
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    return directory


@pytest.fixture
def memory_keyring() -> Iterator[MemoryKeyring]:
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    try:
        yield backend
    finally:
        keyring.set_keyring(previous)


def write_py_config(directory: Path, **values: str) -> Path:
    lines = [f"c.HashlineSession.{key} = {value!r}" for key, value in values.items()]
    path = directory / f"{CONFIG_FILE}.py"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_argument_beats_config_beats_keyring_beats_environment(
    tmp_path: Path,
    config_dir: Path,
    memory_keyring: MemoryKeyring,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "key-from-environment")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/environment")
    keyring.set_password(KEYRING_SERVICE, "anthropic", "key-from-keyring")
    config = write_py_config(
        config_dir, api_key="key-from-config", base_url="http://127.0.0.1:9/config"
    )

    def session(**arguments: str) -> Session:
        return Session(tmp_path, register=False, **arguments)

    first = session(api_key="key-from-argument", base_url="http://127.0.0.1:9/argument")
    assert (first.client.api_key, first.client.base_url) == (
        "key-from-argument",
        "http://127.0.0.1:9/argument",
    )
    assert first.settings.sources["api_key"] is Source.ARGUMENT
    second = session()
    assert (second.client.api_key, second.client.base_url) == (
        "key-from-config",
        "http://127.0.0.1:9/config",
    )
    assert memory_keyring.lookups == []  # a key was given above the keyring: never asked
    config.unlink()
    third = session()
    assert third.client.api_key == "key-from-keyring"
    assert third.client.base_url == "http://127.0.0.1:9/environment"  # keys only in the keyring
    assert third.settings.sources["api_key"] is Source.KEYRING
    keyring.delete_password(KEYRING_SERVICE, "anthropic")
    fourth = session()
    assert fourth.client.api_key == "key-from-environment"
    assert fourth.settings.sources["api_key"] is Source.ENVIRONMENT
    assert memory_keyring.lookups == [(KEYRING_SERVICE, "anthropic")] * 2


def test_provider_and_model_come_from_arguments_then_config_then_defaults(
    tmp_path: Path, config_dir: Path, memory_keyring: MemoryKeyring
) -> None:
    assert Session(tmp_path, register=False, api_key="k").provider == "anthropic"
    write_py_config(config_dir, provider="deepseek", model="deepseek-reasoner", api_key="dk")
    configured = Session(tmp_path, register=False)
    assert (configured.provider, configured.model) == ("deepseek", "deepseek-reasoner")
    assert configured.client.provider == "deepseek"
    assert configured.client.api_key == "dk"
    chosen = Session(tmp_path, provider="deepseek", model="deepseek-chat", register=False)
    assert chosen.model == "deepseek-chat"
    assert chosen.settings.sources["model"] is Source.ARGUMENT


def test_the_config_key_and_url_belong_to_the_config_provider(
    tmp_path: Path,
    config_dir: Path,
    memory_keyring: MemoryKeyring,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    write_py_config(
        config_dir,
        provider="openai",
        model="gpt-x",
        api_key="openai-key",
        base_url="http://127.0.0.1:9/openai-proxy",
    )
    monkeypatch.setenv("ANTHROPIC_API_KEY", "anthropic-key")
    other = Session(tmp_path, provider="anthropic", register=False)
    assert other.client.api_key == "anthropic-key"  # never the OpenAI key
    assert other.client.base_url == "https://api.anthropic.com"
    assert other.model == "claude-sonnet-4-5"
    own = Session(tmp_path, register=False)
    assert (own.provider, own.model, own.client.api_key) == ("openai", "gpt-x", "openai-key")
    assert own.client.url == "http://127.0.0.1:9/openai-proxy/chat/completions"


def test_a_config_file_in_the_working_directory_or_workspace_is_never_read(
    tmp_path: Path, config_dir: Path, memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    write_py_config(project, base_url="http://127.0.0.1:9/look-alike", api_key="planted")
    (project / f"{CONFIG_FILE}.json").write_text(
        json.dumps({"HashlineSession": {"provider": "openai", "base_url": "http://evil.test"}})
    )
    # what traitlets' loader does on its own: with no path it reads the working directory
    monkeypatch.chdir(project)
    planted = PyFileConfigLoader(f"{CONFIG_FILE}.py", path=None).load_config()
    assert planted.HashlineSession.base_url == "http://127.0.0.1:9/look-alike"
    # so the resolver never passes it one: not as ".", "", or an absolute path to the cwd
    for entry in (".", "", str(project), "project"):
        monkeypatch.setenv("JUPYTER_CONFIG_PATH", entry)
        session = Session(project, register=False, api_key="k")
        assert session.provider == "anthropic"
        assert session.client.base_url == "https://api.anthropic.com"
        assert Path(project) not in config_dirs()
    # nor the workspace root, wherever the process runs
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", str(project))
    session = Session(project, register=False)
    assert (session.client.base_url, session.client.api_key) == ("https://api.anthropic.com", "")
    # the same file in a real config directory is honoured (the check above could fail)
    write_py_config(config_dir, base_url="http://127.0.0.1:9/mine")
    assert Session(project, register=False).client.base_url == "http://127.0.0.1:9/mine"


def test_config_directories_keep_jupyters_priorities(
    tmp_path: Path, config_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_py_config(config_dir, model="py-model", base_url="http://127.0.0.1:9/user")
    (config_dir / f"{CONFIG_FILE}.json").write_text(
        json.dumps({"HashlineSession": {"model": "json-model"}})
    )
    settings = resolve_session_settings(api_key="k")
    assert settings.model == "json-model"  # JSON wins over Python in one directory
    assert settings.base_url == "http://127.0.0.1:9/user"
    first = tmp_path / "first"
    first.mkdir()
    write_py_config(first, model="first-model")
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", str(first))
    assert resolve_session_settings(api_key="k").model == "first-model"


def test_bad_settings_are_clear_errors(tmp_path: Path, config_dir: Path) -> None:
    write_py_config(config_dir, provider="gemini")
    with pytest.raises(ValueError, match=r"unknown provider 'gemini' \(c\.HashlineSession"):
        Session(tmp_path, register=False, api_key="k")
    with pytest.raises(ValueError, match=r"unknown provider 'nope' \(provider\)"):
        Session(tmp_path, provider="nope", register=False, api_key="k")
    broken = config_dir / f"{CONFIG_FILE}.py"
    broken.write_text("c.HashlineSession.model = undefined_name\n")
    with pytest.raises(ValueError, match=f"Could not load {broken}"):
        Session(tmp_path, register=False, api_key="k")


def test_a_failing_keyring_counts_as_empty_and_a_missing_one_is_skipped(
    config_dir: Path,
    memory_keyring: MemoryKeyring,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "from-environment")
    keyring.set_password(KEYRING_SERVICE, "openai", "from-keyring")
    memory_keyring.locked = True
    with caplog.at_level(logging.WARNING):
        locked = resolve_session_settings(provider="openai")
    assert locked.api_key == "from-environment"
    assert "keyring could not be read" in caplog.text
    memory_keyring.locked = False
    assert resolve_session_settings(provider="openai").api_key == "from-keyring"
    monkeypatch.setitem(sys.modules, "keyring", None)  # not installed
    lookups = len(memory_keyring.lookups)
    assert resolve_session_settings(provider="openai").api_key == "from-environment"
    assert len(memory_keyring.lookups) == lookups


def test_a_given_client_fixes_the_provider_and_needs_no_key(
    tmp_path: Path, config_dir: Path, memory_keyring: MemoryKeyring
) -> None:
    write_py_config(config_dir, provider="openai")
    with ProviderSimulator([{"text": "hi"}]) as sim:
        client = DeepSeekClient(base_url=sim.base_url("deepseek"), api_key="k")
        session = Session(tmp_path, client=client, register=False)
        assert (session.provider, session.model) == ("deepseek", "deepseek-chat")
        assert memory_keyring.lookups == []


def test_the_key_is_never_in_a_repr(config_dir: Path) -> None:
    settings = resolve_session_settings(api_key="sk-secret-value")
    assert settings.api_key == "sk-secret-value"
    assert "sk-secret-value" not in repr(settings)
