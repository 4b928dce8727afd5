"""Where an agent session's provider, model, base URL and API key come from.

One precedence order, highest first:

1. the arguments of `Session(...)` (a `client` given there fixes the provider too);
2. the user's Jupyter config: `c.HashlineSession.provider`, `.model`, `.base_url` and
   `.api_key` in `jupyter_hashline_config.py` or `jupyter_hashline_config.json`, in the config
   directories `jupyter --paths` lists (`JUPYTER_CONFIG_DIR` or `~/.jupyter`, then the
   environment's and the system's `etc/jupyter`); an earlier directory wins over a later one,
   and in one directory the JSON file wins over the Python file, as for every Jupyter app;
3. the system keyring, when the `keyring` package is installed (API keys only): service
   `jupyter-hashline`, username the provider name, e.g.
   `keyring set jupyter-hashline anthropic`;
4. the environment: `ANTHROPIC_API_KEY` and `ANTHROPIC_BASE_URL`, `OPENAI_...`, `DEEPSEEK_...`;

then the defaults: provider `anthropic`, that provider's default model and public endpoint.

Invariants:
- Nothing comes from the working directory or the session's workspace. traitlets' file loaders
  search the current directory when given no path; they are only ever called here with one of
  the config directories, and a directory that is the current directory, the workspace root,
  or a relative (or empty) entry of `JUPYTER_CONFIG_PATH` is skipped. So a file in a project
  can never choose the provider, redirect the base URL or supply a key, which could send the
  user's key to a look-alike endpoint. (The server's workspace overlay refuses these keys too.)
- The config's model, base URL and key belong to the config's provider (its `provider`, or the
  default provider when it names none): a session of another provider does not take them, so a
  key is never sent to another provider's endpoint.
- The keyring is asked only when a key is needed and neither an argument nor the config gave
  one (a locked desktop keyring may prompt); a keyring that fails counts as having no entry.
- An API key never appears in a repr.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

from traitlets import Unicode
from traitlets.config import Config, Configurable
from traitlets.config.loader import ConfigFileNotFound, JSONFileConfigLoader, PyFileConfigLoader

from .providers import CLIENTS, ProviderClient

log = logging.getLogger(__name__)

CONFIG_FILE = "jupyter_hashline_config"
KEYRING_SERVICE = "jupyter-hashline"
DEFAULT_PROVIDER = "anthropic"
DEFAULT_MODELS = {
    "anthropic": "claude-sonnet-4-5",
    "openai": "gpt-4.1",
    "deepseek": "deepseek-chat",
}


class Source(str, Enum):
    """Where one resolved setting came from."""

    ARGUMENT = "argument"
    CONFIG = "config"
    KEYRING = "keyring"
    ENVIRONMENT = "environment"
    DEFAULT = "default"


class HashlineSession(Configurable):
    """Agent session settings in the user's Jupyter config (`c.HashlineSession.*`)."""

    provider = Unicode(
        None,
        allow_none=True,
        help="Request shape and service of agent sessions: 'anthropic', 'openai' or 'deepseek'.",
    ).tag(config=True)
    model = Unicode(
        None, allow_none=True, help="Model name for sessions of this config's provider."
    ).tag(config=True)
    base_url = Unicode(
        None,
        allow_none=True,
        help="Endpoint for sessions of this config's provider (e.g. a proxy). Default: the "
        "provider's <PROVIDER>_BASE_URL environment variable, else its public endpoint.",
    ).tag(config=True)
    api_key = Unicode(
        None,
        allow_none=True,
        help="API key for sessions of this config's provider. Prefer the keyring "
        "(service 'jupyter-hashline', username the provider) or the environment.",
    ).tag(config=True)


@dataclass(frozen=True, slots=True)
class SessionSettings:
    """The resolved settings of one session and where each came from."""

    provider: str
    model: str
    base_url: str | None  # None: the client's public endpoint
    api_key: str | None = field(repr=False)
    sources: Mapping[str, Source]


def config_dirs(*, exclude: Iterable[str | Path] = ()) -> list[Path]:
    """Jupyter config directories, highest priority first, without the working directory,
    the `exclude`d ones (the workspace) and relative entries."""
    from jupyter_core.paths import jupyter_config_path

    skipped = {Path.cwd().resolve(), *(Path(p).resolve() for p in exclude)}
    found: list[Path] = []
    for entry in jupyter_config_path():
        if not entry or not os.path.isabs(entry):
            continue
        directory = Path(entry).resolve()
        if directory not in skipped and directory not in found:
            found.append(directory)
    return found


def load_session_config(directories: Iterable[Path]) -> HashlineSession:
    """`c.HashlineSession` from `jupyter_hashline_config.{py,json}` in `directories` (highest
    priority first). A file that exists but cannot be loaded is an error naming it."""
    merged = Config()
    for directory in reversed(list(directories)):
        for loader_class in (PyFileConfigLoader, JSONFileConfigLoader):
            suffix = ".py" if loader_class is PyFileConfigLoader else ".json"
            loader = loader_class(CONFIG_FILE + suffix, path=str(directory), log=log)
            try:
                merged.merge(loader.load_config())
            except ConfigFileNotFound:
                continue
            except Exception as err:  # a user's config file may raise anything
                raise ValueError(
                    f"Could not load {directory / (CONFIG_FILE + suffix)}: {err}"
                ) from err
    return HashlineSession(config=merged)


def keyring_api_key(provider: str) -> str | None:
    """The key the system keyring holds for `provider` (None without `keyring` or an entry)."""
    try:
        import keyring
        from keyring.errors import KeyringError, NoKeyringError
    except ImportError:
        return None
    try:
        return keyring.get_password(KEYRING_SERVICE, provider) or None
    except NoKeyringError:
        return None
    except KeyringError as err:
        log.warning(
            "jupyter-hashline: the keyring could not be read (%s); trying the environment", err
        )
        return None


def _first(*candidates: tuple[str | None, Source]) -> tuple[str | None, Source]:
    """The first candidate with a value (empty strings count as unset)."""
    for value, source in candidates:
        if value:
            return value, source
    return None, Source.DEFAULT


def _provider(given: str | None, user: HashlineSession) -> tuple[str, Source]:
    """The provider by precedence, checked against the known request shapes."""
    chosen, source = _first((given, Source.ARGUMENT), (user.provider, Source.CONFIG))
    chosen = chosen or DEFAULT_PROVIDER
    if chosen not in CLIENTS:
        known = ", ".join(sorted(CLIENTS))
        where = "c.HashlineSession.provider" if source is Source.CONFIG else "provider"
        raise ValueError(f"unknown provider {chosen!r} ({where}); choose one of {known}")
    return chosen, source


def resolve_session_settings(
    *,
    provider: str | None = None,
    model: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    client: ProviderClient | None = None,
    workspace: str | Path | None = None,
    environ: Mapping[str, str] | None = None,
    config: HashlineSession | None = None,
) -> SessionSettings:
    """Resolve a session's settings: arguments > Jupyter config > keyring > environment.

    With a `client`, its provider is the argument default and no key or URL is looked up (the
    client has its own). `workspace` (the session's root directory) is never read for config;
    `config` replaces loading the user's config files (tests).
    """
    user = config if config is not None else _user_config(workspace)
    chosen, provider_source = _provider(provider or (client.provider if client else None), user)
    # the config's model, URL and key belong to the config's provider only
    own = user if chosen == (user.provider or DEFAULT_PROVIDER) else HashlineSession()
    found_model, model_source = _first((model, Source.ARGUMENT), (own.model, Source.CONFIG))
    sources = {"provider": provider_source, "model": model_source}
    url = key = None
    if client is None:
        env = os.environ if environ is None else environ
        prefix = CLIENTS[chosen].env_prefix
        url, sources["base_url"] = _first(
            (base_url, Source.ARGUMENT),
            (own.base_url, Source.CONFIG),
            (env.get(f"{prefix}_BASE_URL"), Source.ENVIRONMENT),
        )
        key, sources["api_key"] = _api_key(
            chosen, api_key, own.api_key, env.get(f"{prefix}_API_KEY")
        )
    return SessionSettings(
        provider=chosen,
        model=found_model or DEFAULT_MODELS.get(chosen, chosen),
        base_url=url,
        api_key=key,
        sources=sources,
    )


def _api_key(
    provider: str, argument: str | None, configured: str | None, environment: str | None
) -> tuple[str | None, Source]:
    """The key by precedence; the keyring is asked only when nothing above it gave one."""
    given, source = _first((argument, Source.ARGUMENT), (configured, Source.CONFIG))
    if given:
        return given, source
    return _first((keyring_api_key(provider), Source.KEYRING), (environment, Source.ENVIRONMENT))


def _user_config(workspace: str | Path | None) -> HashlineSession:
    exclude = [workspace] if workspace is not None else []
    return load_session_config(config_dirs(exclude=exclude))


__all__ = [
    "CONFIG_FILE",
    "DEFAULT_MODELS",
    "DEFAULT_PROVIDER",
    "KEYRING_SERVICE",
    "HashlineSession",
    "SessionSettings",
    "Source",
    "config_dirs",
    "keyring_api_key",
    "load_session_config",
    "resolve_session_settings",
]
