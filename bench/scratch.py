"""Scratch databases for the bench scripts: each run starts from an empty index file."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from index.store.db import open_writer
from index.store.first_build import discard_build
from index.store.ingest import plan
from index.store.tasks import Task
from index.store.tx import transaction
from lib.discovery import canonical_roots

# The corpus the bench scripts read unless told otherwise: ../shared beside the checkout.
CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "projects"


def corpus_options(ap: argparse.ArgumentParser) -> None:
    """The options every corpus bench takes: `--projects` (the transcripts, default `CORPUS`) and
    `--work` (where its scratch files go, default a new temporary directory: `work_dir`)."""
    ap.add_argument("--projects", type=Path, default=CORPUS)
    ap.add_argument("--work", type=Path, default=None)


def planned_tasks(a: argparse.Namespace, prefix: str) -> list[Task]:
    """`planned` for `corpus_options`' arguments: every file of `--projects`, planned in `--work`."""
    return planned(a.projects, work_dir(a.work, prefix) / "plan.db")


def fresh(db: Path) -> Path:
    """`db` with no index file, WAL or shared memory left from an earlier run, nor a first build a
    stopped run left beside it (which the next run would go on with)."""
    for s in ("", "-wal", "-shm"):
        Path(str(db) + s).unlink(missing_ok=True)
    discard_build(db)
    return db


def planned(projects: Path, db: Path) -> list[Task]:
    """Every file under `projects` as a full index of it plans it (on the scratch index `db`)."""
    raw = open_writer(fresh(db))
    try:
        with transaction(raw):
            return plan(raw, canonical_roots([projects]), True)[0]
    finally:
        raw.close()


def work_dir(given: Path | None, prefix: str) -> Path:
    """The run's work directory: the one asked for (created if needed) or a new temporary one."""
    work = given or Path(tempfile.mkdtemp(prefix=prefix))
    work.mkdir(parents=True, exist_ok=True)
    return work
