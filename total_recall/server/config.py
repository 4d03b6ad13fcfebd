"""The server's settings: where PostgreSQL is, the JWT signing key, and the limits every route keeps.

Environment variables are read in `server_env` only (tests inject a mapping)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from vec.embed import ModelConfig

MIN_SECRET_CHARS = 32  # HS256 wants a key of at least 256 bits


class ConfigError(Exception):
    """A setting is missing or unusable; the message says how to fix it."""


@dataclass(frozen=True, slots=True)
class Limits:
    max_body: int = 64 * 1024  # bytes of one request body (413 above)
    max_title: int = 300
    max_summary: int = 16_000
    max_metadata: int = 8 * 1024  # bytes of the metadata JSON
    max_page: int = 100  # rows one list or recall answer holds at most
    rate_per_s: float = 50.0  # per token (or per login), refilled continuously
    burst: float = 200.0
    access_ttl_s: int = 24 * 3600  # a login's JWT lives this long


@dataclass(frozen=True, slots=True)
class ServerConfig:
    dsn: str
    secret: str
    limits: Limits = Limits()
    pool_min: int = 2
    pool_max: int = 16
    pool_timeout: float = 5.0  # seconds a request waits for a connection before a 503
    embed: ModelConfig | None = None  # the model that embeds contexts and queries (server/vectors.py)


def server_env(env: Mapping[str, str]) -> dict[str, str]:
    """TOTAL_RECALL_SERVER_DSN and TOTAL_RECALL_SERVER_SECRET, when set (env: the settings' snapshot)."""
    e = env
    out = {}
    for key, name in (("dsn", "TOTAL_RECALL_SERVER_DSN"), ("secret", "TOTAL_RECALL_SERVER_SECRET")):
        if e.get(name):
            out[key] = e[name]
    return out


def resolve_dsn(cli_dsn: str | None, env: Mapping[str, str]) -> str:
    dsn = cli_dsn or server_env(env).get("dsn")
    if not dsn:
        raise ConfigError("no database: pass --dsn postgresql://… or set TOTAL_RECALL_SERVER_DSN")
    return dsn


def resolve_secret(secret_file: str | None, env: Mapping[str, str]) -> str:
    """The JWT signing key: --secret-file, else TOTAL_RECALL_SERVER_SECRET; at least 32 characters."""
    if secret_file:
        try:
            secret = Path(secret_file).read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise ConfigError(f"cannot read --secret-file {secret_file}: {exc.strerror}") from None
    else:
        secret = server_env(env).get("secret", "")
    if len(secret) < MIN_SECRET_CHARS:
        raise ConfigError(
            f"the JWT signing key must have at least {MIN_SECRET_CHARS} characters: set "
            "TOTAL_RECALL_SERVER_SECRET or pass --secret-file (e.g. `openssl rand -hex 32 > secret`)"
        )
    return secret
