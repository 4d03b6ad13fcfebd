"""`total-recall server …`: migrate, administer and run the team memory server (issue 16).

Every command takes `--dsn` (else TOTAL_RECALL_SERVER_DSN). Passwords are read from stdin, never from
the command line; `token create` prints only the token on stdout (its id goes to stderr)."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator, Mapping
from typing import Any

import click

from lib.project_id import valid_project_id
from total_recall.options import json_option
from total_recall.output import cli_settings, emit_json, fail

dsn_option = click.option("--dsn", help="PostgreSQL DSN (default: TOTAL_RECALL_SERVER_DSN).")


def _env() -> Mapping[str, str]:
    """The environment snapshot the CLI group read once (lib/settings.py)."""
    return cli_settings().env


@contextlib.contextmanager
def _admin(dsn: str | None) -> Iterator[Any]:
    """A connection for one admin command; known failures become one line with a fix."""
    import psycopg

    from total_recall.server.config import ConfigError, resolve_dsn
    from total_recall.server.store import Conflict, NotFound

    try:
        with psycopg.connect(resolve_dsn(dsn, _env()), autocommit=True, connect_timeout=10) as conn:
            yield conn
    except (ConfigError, Conflict, NotFound) as exc:
        fail(str(exc))
    except psycopg.OperationalError as exc:
        fail(
            f"cannot reach PostgreSQL: {str(exc).strip().splitlines()[0]}",
            "check --dsn and that the server runs",
        )
    except psycopg.errors.UndefinedTable:
        fail("the database has no total-recall schema", "run `total-recall server migrate --dsn DSN` first")


def _password() -> str:
    if sys.stdin is None:
        fail(
            "the password is read from stdin",
            "pipe it in: `printf '%s' \"$PW\" | total-recall server user add NAME`",
        )
    if sys.stdin.isatty():
        password: str = click.prompt("Password", hide_input=True, confirmation_prompt=True)
    else:
        password = sys.stdin.readline().rstrip("\r\n")
    if len(password) < 8:
        fail("the password must have at least 8 characters (read from stdin)")
    return password


def _project(value: str) -> str:
    if not valid_project_id(value):
        fail(
            f"bad project id {value!r}", "use 1-128 letters, digits and ._:- (see `total-recall team status`)"
        )
    return value


SERVER_MODULES = ("fastapi", "uvicorn", "psycopg", "psycopg_pool", "jwt", "argon2")


@click.group("server")
def server_group() -> None:
    """Team memory server on PostgreSQL (needs `pip install 'total-recall[server]'`)."""
    import importlib.util

    missing = [m for m in SERVER_MODULES if importlib.util.find_spec(m) is None]
    if missing:
        fail(
            f"the server's dependencies are not installed ({', '.join(missing)})",
            "pip install 'total-recall[server]'",
        )


@server_group.command()
@dsn_option
@json_option
def migrate(dsn: str | None, as_json: bool) -> None:
    """Create or upgrade the schema (idempotent)."""
    import psycopg

    from total_recall.server.config import ConfigError, resolve_dsn
    from total_recall.server.migrations import migrate as run

    try:
        res = run(resolve_dsn(dsn, _env()))
    except ConfigError as exc:
        fail(str(exc))
    except psycopg.OperationalError as exc:
        fail(
            f"cannot reach PostgreSQL: {str(exc).strip().splitlines()[0]}",
            "check --dsn and that the server runs",
        )
    if as_json:
        emit_json(res)
    else:
        vec = (
            "pgvector: contexts can carry vectors"
            if res["vectors"]
            else "no pgvector (not installed, or this role may not create it): full-text recall"
        )
        click.echo(f"schema version {res['version']} ({vec}); applied: {res['applied'] or 'nothing'}")


@server_group.group()
def user() -> None:
    """Users (who logs in and owns API tokens)."""


@user.command("add")
@click.argument("name")
@dsn_option
def user_add(name: str, dsn: str | None) -> None:
    """Add a user; the password is read from stdin."""
    from total_recall.server.auth import hash_password
    from total_recall.server.store import add_user

    password = _password()
    with _admin(dsn) as conn:
        uid = add_user(conn, name, hash_password(password))
    click.echo(f"user {name} added (id {uid})", err=True)


@server_group.group()
def project() -> None:
    """Projects (a project id as `total-recall team status` shows it)."""


@project.command("add")
@click.argument("project_id")
@click.option("--owner", required=True, help="User who owns the project.")
@dsn_option
def project_add(project_id: str, owner: str, dsn: str | None) -> None:
    """Add a project owned by a user."""
    from total_recall.server.store import add_project

    with _admin(dsn) as conn:
        add_project(conn, _project(project_id), owner)
    click.echo(f"project {project_id} added, owner {owner}", err=True)


@server_group.group()
def member() -> None:
    """Project members and their roles."""


@member.command("add")
@click.argument("project_id")
@click.argument("name")
@click.option("--role", type=click.Choice(["owner", "member", "reader"]), default="member", show_default=True)
@dsn_option
def member_add(project_id: str, name: str, role: str, dsn: str | None) -> None:
    """Give a user a role in a project (changes the role of a member)."""
    from total_recall.server.store import set_member

    with _admin(dsn) as conn:
        set_member(conn, _project(project_id), name, role)
    click.echo(f"{name} is {role} of {project_id}", err=True)


@server_group.group()
def token() -> None:
    """API tokens for machines (stored hashed, revocable, optionally scoped to projects)."""


@token.command("create")
@click.option("--user", "user_name", required=True)
@click.option("--project", "projects", multiple=True, help="Limit the token to this project (repeatable).")
@click.option("--name", default="", help="A label (e.g. the machine).")
@dsn_option
def token_create(user_name: str, projects: tuple[str, ...], name: str, dsn: str | None) -> None:
    """Create a token and print it (shown once: only its hash is stored)."""
    from total_recall.server.auth import new_api_token
    from total_recall.server.store import add_token

    scope = [_project(p) for p in projects] or None
    secret, digest = new_api_token()
    with _admin(dsn) as conn:
        tid = add_token(conn, user_name, digest, name, scope)
    click.echo(f"token id {tid} for {user_name}", err=True)
    click.echo(secret)


@token.command("revoke")
@click.argument("token_ref")
@dsn_option
def token_revoke(token_ref: str, dsn: str | None) -> None:
    """Revoke a token, by its id or the token itself."""
    from total_recall.server.auth import is_api_token, token_hash
    from total_recall.server.store import revoke_token

    tid = int(token_ref) if token_ref.isdigit() else None
    digest = token_hash(token_ref) if is_api_token(token_ref) else None
    if tid is None and digest is None:
        fail(f"not a token id or token: {token_ref[:12]}…", "pass the id `token list` shows, or the token")
    with _admin(dsn) as conn:
        done = revoke_token(conn, tid, digest)
    click.echo(f"token {done} revoked", err=True)


@token.command("list")
@dsn_option
def token_list(dsn: str | None) -> None:
    """Tokens (ids, users, scopes; never the tokens)."""
    from total_recall.server.store import list_tokens

    with _admin(dsn) as conn:
        emit_json(list_tokens(conn))


@server_group.command()
@dsn_option
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8765, show_default=True, type=click.IntRange(0, 65535))
@click.option("--secret-file", help="File holding the JWT signing key (else TOTAL_RECALL_SERVER_SECRET).")
@click.option(
    "--rate",
    default=50.0,
    show_default=True,
    type=click.FloatRange(0.1, 1e6),
    help="Requests a second per token.",
)
@click.option(
    "--pool", default=16, show_default=True, type=click.IntRange(2, 200), help="Most PostgreSQL connections."
)
@click.option(
    "--workers",
    default=1,
    show_default=True,
    type=click.IntRange(1, 64),
    help="Server processes sharing the port (one per core); each has its own pool and rate limits.",
)
def run(
    dsn: str | None, host: str, port: int, secret_file: str | None, rate: float, pool: int, workers: int
) -> None:
    """Serve the HTTP API (OpenAPI at /docs). With pgvector in the schema and a model named by
    TOTAL_RECALL_EMBED_MODEL(_PATH) (the `vec` extra), contexts and queries are embedded here."""
    import importlib.util
    import os

    from total_recall.server.config import ConfigError, Limits, ServerConfig, resolve_dsn, resolve_secret
    from total_recall.server.run import serve
    from total_recall.server.vectors import configured_model
    from vec.embed import EmbedError

    embed = configured_model(cli_settings())
    if embed is not None and importlib.util.find_spec("fastembed") is None:
        fail("an embedding model is configured but fastembed is missing", "pip install 'total-recall[vec]'")
    if workers > 1 and not hasattr(os, "fork"):
        fail("--workers above 1 needs fork (Linux, macOS)", "run one process per port behind a balancer")
    try:
        limits = Limits(rate_per_s=rate, burst=max(rate * 4, 20.0))
        config = ServerConfig(
            dsn=resolve_dsn(dsn, _env()),
            secret=resolve_secret(secret_file, _env()),
            limits=limits,
            pool_max=pool,
            embed=embed,
        )
        status = serve(config, host, port, workers)
    except (ConfigError, EmbedError) as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"cannot listen on {host}:{port}: {exc.strerror}", "pick another --port")
    if status:
        fail("a server worker stopped with an error (see its log above)")


def register(cli: click.Group) -> None:
    cli.add_command(server_group)
