"""Storage and ingest, the bottom of `index/`: the schema (the only DDL of the main tables), connections,
the writer lock, transactions, and the pipeline that turns transcripts into rows (prepare, write, fold
operator tables, finalise), plus the user's own state (promoted or forgotten memories, manage). Every
other `index` package reads what this one writes; it imports none of them.

API: the names below (`index.lazy_api` loads each from its module on first use).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from index import lazy_api

if TYPE_CHECKING:
    from index.store.db import (
        IndexCorrupt as IndexCorrupt,
    )
    from index.store.db import (
        IndexError_ as IndexError_,
    )
    from index.store.db import (
        IndexMissing as IndexMissing,
    )
    from index.store.db import (
        IndexUnavailable as IndexUnavailable,
    )
    from index.store.db import (
        access_problem as access_problem,
    )
    from index.store.db import (
        db_file as db_file,
    )
    from index.store.db import (
        open_existing_writer as open_existing_writer,
    )
    from index.store.db import (
        open_failure as open_failure,
    )
    from index.store.db import (
        open_reader as open_reader,
    )
    from index.store.extractor_stamp import extractors_state as extractors_state
    from index.store.filters import SINCE_HELP as SINCE_HELP
    from index.store.filters import BadFilter as BadFilter
    from index.store.filters import Filters as Filters
    from index.store.filters import parse_since as parse_since
    from index.store.filters import parse_ts as parse_ts
    from index.store.filters import since_day as since_day
    from index.store.filters import zone as zone
    from index.store.first_build import discard_build as discard_build
    from index.store.fts_query import Query as Query
    from index.store.fts_query import snippet_terms as snippet_terms
    from index.store.ingest import run_index as run_index
    from index.store.labels import project_keys as project_keys
    from index.store.labels import project_labeller as project_labeller
    from index.store.lock import LOCK_NAME as LOCK_NAME
    from index.store.lock import IndexBusy as IndexBusy
    from index.store.lock import writer_lock as writer_lock
    from index.store.manage import (
        consolidate as consolidate,
    )
    from index.store.manage import (
        forget as forget,
    )
    from index.store.manage import (
        maintenance as maintenance,
    )
    from index.store.manage import (
        reapply as reapply,
    )
    from index.store.manage import (
        session_transcript as session_transcript,
    )
    from index.store.manage import (
        sessions_for as sessions_for,
    )
    from index.store.memories import listing as listing
    from index.store.memories import promote as promote
    from index.store.memories import unpromote as unpromote
    from index.store.plugins import (
        Candidate as Candidate,
    )
    from index.store.plugins import (
        Ranked as Ranked,
    )
    from index.store.plugins import (
        register_vectors as register_vectors,
    )
    from index.store.scope import BadScope as BadScope
    from index.store.scope import stored_cwd as stored_cwd
    from index.store.stale import save_marks as save_marks
    from index.store.stale import stale_of as stale_of
    from index.store.textstore import split_marks as split_marks
    from index.store.tx import transaction as transaction
    from index.store.userstate import PROMOTABLE as PROMOTABLE
    from index.store.userstate import load as load
    from index.store.verdicts import VERDICTS as VERDICTS
    from index.store.verdicts import Wrong as Wrong
    from index.store.verdicts import enforced as enforced
    from index.store.verdicts import record_feedback as record_feedback
    from index.store.verdicts import set_enforcement as set_enforcement
    from index.store.verdicts import wrong_items as wrong_items

# API name -> (module of this package, name there)
_WHERE: dict[str, tuple[str, str]] = {
    "extractors_state": ("extractor_stamp", "extractors_state"),
    "BadFilter": ("filters", "BadFilter"),
    "BadScope": ("scope", "BadScope"),
    "Candidate": ("plugins", "Candidate"),
    "Filters": ("filters", "Filters"),
    "IndexBusy": ("lock", "IndexBusy"),
    "IndexCorrupt": ("db", "IndexCorrupt"),
    "IndexError_": ("db", "IndexError_"),
    "IndexMissing": ("db", "IndexMissing"),
    "IndexUnavailable": ("db", "IndexUnavailable"),
    "LOCK_NAME": ("lock", "LOCK_NAME"),
    "PROMOTABLE": ("userstate", "PROMOTABLE"),
    "Query": ("fts_query", "Query"),
    "Ranked": ("plugins", "Ranked"),
    "SINCE_HELP": ("filters", "SINCE_HELP"),
    "VERDICTS": ("verdicts", "VERDICTS"),
    "Wrong": ("verdicts", "Wrong"),
    "access_problem": ("db", "access_problem"),
    "consolidate": ("manage", "consolidate"),
    "db_file": ("db", "db_file"),
    "discard_build": ("first_build", "discard_build"),
    "enforced": ("verdicts", "enforced"),
    "forget": ("manage", "forget"),
    "listing": ("memories", "listing"),
    "load": ("userstate", "load"),
    "maintenance": ("manage", "maintenance"),
    "open_existing_writer": ("db", "open_existing_writer"),
    "open_failure": ("db", "open_failure"),
    "open_reader": ("db", "open_reader"),
    "parse_since": ("filters", "parse_since"),
    "parse_ts": ("filters", "parse_ts"),
    "promote": ("memories", "promote"),
    "reapply": ("manage", "reapply"),
    "record_feedback": ("verdicts", "record_feedback"),
    "register_vectors": ("plugins", "register_vectors"),
    "run_index": ("ingest", "run_index"),
    "save_marks": ("stale", "save_marks"),
    "session_transcript": ("manage", "session_transcript"),
    "sessions_for": ("manage", "sessions_for"),
    "since_day": ("filters", "since_day"),
    "snippet_terms": ("fts_query", "snippet_terms"),
    "split_marks": ("textstore", "split_marks"),
    "set_enforcement": ("verdicts", "set_enforcement"),
    "stale_of": ("stale", "stale_of"),
    "stored_cwd": ("scope", "stored_cwd"),
    "transaction": ("tx", "transaction"),
    "unpromote": ("memories", "unpromote"),
    "writer_lock": ("lock", "writer_lock"),
    "zone": ("filters", "zone"),
    "wrong_items": ("verdicts", "wrong_items"),
    "project_keys": ("labels", "project_keys"),
    "project_labeller": ("labels", "project_labeller"),
}

__all__ = [
    "BadFilter",
    "BadScope",
    "Candidate",
    "Filters",
    "IndexBusy",
    "IndexCorrupt",
    "IndexError_",
    "IndexMissing",
    "IndexUnavailable",
    "LOCK_NAME",
    "PROMOTABLE",
    "Query",
    "Ranked",
    "SINCE_HELP",
    "VERDICTS",
    "Wrong",
    "access_problem",
    "consolidate",
    "db_file",
    "discard_build",
    "enforced",
    "extractors_state",
    "forget",
    "listing",
    "load",
    "maintenance",
    "open_existing_writer",
    "open_failure",
    "open_reader",
    "parse_since",
    "parse_ts",
    "project_keys",
    "project_labeller",
    "promote",
    "reapply",
    "record_feedback",
    "register_vectors",
    "run_index",
    "save_marks",
    "session_transcript",
    "sessions_for",
    "since_day",
    "snippet_terms",
    "split_marks",
    "set_enforcement",
    "stale_of",
    "stored_cwd",
    "transaction",
    "unpromote",
    "writer_lock",
    "zone",
    "wrong_items",
]

__getattr__ = lazy_api(__name__, _WHERE)
