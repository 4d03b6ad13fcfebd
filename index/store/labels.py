"""Project labels of one index: every surface that names a project (the CLI's tables and lines, the MCP
tools' `project` fields) calls a project by its unique short label among all the index's projects
(`lib.project.project_labels`: `work/api` and `home/api`, not two `api`)."""

from __future__ import annotations

from collections.abc import Callable

from lib import sqlite
from lib.project import project_labels

Label = Callable[[str | None], str]  # project key -> its label


def project_keys(conn: sqlite.Connection) -> list[str]:
    """Every project key the index holds (for labels that tell them apart)."""
    return [
        r[0] for r in conn.execute("SELECT DISTINCT project_key FROM sessions WHERE project_key IS NOT NULL")
    ]


def project_labeller(conn: sqlite.Connection) -> Label:
    """`label(project_key)`: the project's unique short label among every project of the index ('?' for
    none); a key the index does not hold gets its own label."""
    known = project_labels(project_keys(conn))

    def label(key: str | None) -> str:
        return known.get(key or "") or project_labels([key]).get(key or "", "?")

    return label
