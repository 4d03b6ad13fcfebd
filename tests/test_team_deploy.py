"""The team server's Docker files (issue 16), checked statically: this machine has no Docker daemon,
no `docker compose` plugin and no registry access, so `docker compose config` and a build cannot run
here. What can be checked without them: the compose file's structure and references, and that the
Dockerfile copies what exists and runs commands and options the CLI has."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest

yaml = pytest.importorskip("yaml")

from total_recall.cmd_server import migrate, run  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
DEPLOY = REPO / "total_recall" / "server" / "deploy"


def compose() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text(encoding="utf-8"))
    return data


def test_compose_runs_the_server_against_a_pgvector_database() -> None:
    services = compose()["services"]
    assert set(services) == {"db", "server"}
    db, server = services["db"], services["server"]
    assert "pgvector" in db["image"] and db["healthcheck"]["test"]
    env = server["environment"]
    user, name = db["environment"]["POSTGRES_USER"], db["environment"]["POSTGRES_DB"]
    assert re.fullmatch(
        rf"postgresql://{user}:\$\{{POSTGRES_PASSWORD\}}@db:5432/{name}", env["TOTAL_RECALL_SERVER_DSN"]
    )
    assert "${TOTAL_RECALL_SERVER_SECRET:?" in env["TOTAL_RECALL_SERVER_SECRET"]  # refuses to start without
    assert server["depends_on"]["db"]["condition"] == "service_healthy"
    assert all(p.startswith("127.0.0.1:") for p in server["ports"])  # TLS proxy in front for others


def test_compose_builds_from_the_project_root_with_the_dockerfile() -> None:
    build = compose()["services"]["server"]["build"]
    context = (DEPLOY / build["context"]).resolve()
    assert context == REPO and (context / build["dockerfile"]).is_file()


def _dockerfile() -> list[str]:
    text = (DEPLOY / "Dockerfile").read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line and not line.startswith("#")]


def test_the_dockerfile_copies_what_exists_and_installs_the_server_extra() -> None:
    lines = _dockerfile()
    for line in (x for x in lines if x.startswith("COPY ")):
        for src in shlex.split(line)[1:-1]:
            assert (REPO / src).exists(), src
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    installs = [x for x in lines if "pip install" in x]
    assert installs and "'.[server]'" in installs[0] and "\nserver = [" in pyproject


def test_the_dockerfile_runs_commands_the_cli_has() -> None:
    cmd = next(x for x in _dockerfile() if x.startswith("CMD "))
    assert "total-recall server migrate" in cmd and "exec total-recall server run" in cmd
    used = set(re.findall(r"(--[a-z-]+)", cmd.split("server run", 1)[1]))
    known = {opt for p in run.params for opt in p.opts}
    assert used and used <= known
    assert migrate.name == "migrate"
