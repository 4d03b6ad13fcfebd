"""Retrieval: full-text and scoped search, recall by topic, timelines, targeted answers, session digests,
operator and ontology queries, the retrieval evaluation, and the token-budget helpers every answer is cut
to. Reads through `index.store` and `index.stats`.

API: the names below (`index.lazy_api` loads each from its module on first use).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from index import lazy_api

if TYPE_CHECKING:
    from index.retrieval.browse import SessionFilter as SessionFilter
    from index.retrieval.browse import change_stamp as change_stamp
    from index.retrieval.browse import facets as facets
    from index.retrieval.browse import list_sessions as list_sessions
    from index.retrieval.browse import session_errors as session_errors
    from index.retrieval.browse import session_extractions as session_extractions
    from index.retrieval.browse import session_thread as session_thread
    from index.retrieval.budget import (
        ERROR_CHARS as ERROR_CHARS,
    )
    from index.retrieval.budget import (
        cap_fields as cap_fields,
    )
    from index.retrieval.budget import (
        estimate_tokens as estimate_tokens,
    )
    from index.retrieval.candidates import (
        candidates_by_id as candidates_by_id,
    )
    from index.retrieval.candidates import (
        row_text as row_text,
    )
    from index.retrieval.digest import (
        digest_markdown as digest_markdown,
    )
    from index.retrieval.digest import (
        digest_notes as digest_notes,
    )
    from index.retrieval.digest import (
        recent_sessions as recent_sessions,
    )
    from index.retrieval.digest import (
        resolve_session as resolve_session,
    )
    from index.retrieval.digest import (
        session_digest as session_digest,
    )
    from index.retrieval.memory_md import (
        conversation_markdown as conversation_markdown,
    )
    from index.retrieval.memory_md import (
        master_markdown as master_markdown,
    )
    from index.retrieval.memory_md import (
        memory_sessions as memory_sessions,
    )
    from index.retrieval.memory_md import (
        projects_named as projects_named,
    )
    from index.retrieval.memory_view import memory_overview as memory_overview
    from index.retrieval.ontology_queries import (
        define_term as define_term,
    )
    from index.retrieval.ontology_queries import (
        machine_inventory as machine_inventory,
    )
    from index.retrieval.ontology_queries import (
        profile as profile,
    )
    from index.retrieval.ontology_queries import (
        project_graph as project_graph,
    )
    from index.retrieval.operator_queries import (
        TRUTH_CATEGORIES as TRUTH_CATEGORIES,
    )
    from index.retrieval.operator_queries import (
        active_goal as active_goal,
    )
    from index.retrieval.operator_queries import (
        check_banned as check_banned,
    )
    from index.retrieval.operator_queries import (
        decision_for_topic as decision_for_topic,
    )
    from index.retrieval.operator_queries import (
        latest_extractions as latest_extractions,
    )
    from index.retrieval.operator_queries import (
        list_failed_attempts as list_failed_attempts,
    )
    from index.retrieval.operator_queries import (
        list_goals as list_goals,
    )
    from index.retrieval.operator_queries import (
        list_standing_decisions as list_standing_decisions,
    )
    from index.retrieval.operator_queries import (
        recall_kinds as recall_kinds,
    )
    from index.retrieval.recall import (
        iter_extractions as iter_extractions,
    )
    from index.retrieval.recall import (
        iter_messages as iter_messages,
    )
    from index.retrieval.recall import (
        kinds_by_uuid as kinds_by_uuid,
    )
    from index.retrieval.recall import (
        recall as recall_topic,
    )
    from index.retrieval.retrieval_eval import report as report
    from index.retrieval.retrieval_eval import run_questions as run_questions
    from index.retrieval.rule_match import BanHit as BanHit
    from index.retrieval.rule_match import bans_for_action as bans_for_action
    from index.retrieval.rule_match import scope_bans as scope_bans
    from index.retrieval.rule_match import tool_action as tool_action
    from index.retrieval.scoped import (
        EXTRACTION_KINDS as EXTRACTION_KINDS,
    )
    from index.retrieval.scoped import Scoped as Scoped
    from index.retrieval.scoped import (
        search_scoped as search_scoped,
    )
    from index.retrieval.scoped import (
        sessions_scoped as sessions_scoped,
    )
    from index.retrieval.search import (
        search_messages as search_messages,
    )
    from index.retrieval.search import (
        search_sessions as search_sessions,
    )
    from index.retrieval.targeted import INTENTS as INTENTS
    from index.retrieval.targeted import recall_targeted as recall_targeted
    from index.retrieval.timeline import (
        hit_index as hit_index,
    )
    from index.retrieval.timeline import (
        records as records,
    )
    from index.retrieval.timeline import (
        timeline as message_timeline,
    )

# API name -> (module of this package, name there)
_WHERE: dict[str, tuple[str, str]] = {
    "BanHit": ("rule_match", "BanHit"),
    "ERROR_CHARS": ("budget", "ERROR_CHARS"),
    "EXTRACTION_KINDS": ("scoped", "EXTRACTION_KINDS"),
    "INTENTS": ("targeted", "INTENTS"),
    "Scoped": ("scoped", "Scoped"),
    "SessionFilter": ("browse", "SessionFilter"),
    "TRUTH_CATEGORIES": ("operator_queries", "TRUTH_CATEGORIES"),
    "active_goal": ("operator_queries", "active_goal"),
    "bans_for_action": ("rule_match", "bans_for_action"),
    "candidates_by_id": ("candidates", "candidates_by_id"),
    "cap_fields": ("budget", "cap_fields"),
    "change_stamp": ("browse", "change_stamp"),
    "check_banned": ("operator_queries", "check_banned"),
    "decision_for_topic": ("operator_queries", "decision_for_topic"),
    "define_term": ("ontology_queries", "define_term"),
    "digest_markdown": ("digest", "digest_markdown"),
    "digest_notes": ("digest", "digest_notes"),
    "conversation_markdown": ("memory_md", "conversation_markdown"),
    "master_markdown": ("memory_md", "master_markdown"),
    "memory_sessions": ("memory_md", "memory_sessions"),
    "projects_named": ("memory_md", "projects_named"),
    "resolve_session": ("digest", "resolve_session"),
    "estimate_tokens": ("budget", "estimate_tokens"),
    "facets": ("browse", "facets"),
    "hit_index": ("timeline", "hit_index"),
    "iter_extractions": ("recall", "iter_extractions"),
    "iter_messages": ("recall", "iter_messages"),
    "kinds_by_uuid": ("recall", "kinds_by_uuid"),
    "latest_extractions": ("operator_queries", "latest_extractions"),
    "list_failed_attempts": ("operator_queries", "list_failed_attempts"),
    "list_goals": ("operator_queries", "list_goals"),
    "list_sessions": ("browse", "list_sessions"),
    "list_standing_decisions": ("operator_queries", "list_standing_decisions"),
    "machine_inventory": ("ontology_queries", "machine_inventory"),
    "memory_overview": ("memory_view", "memory_overview"),
    "message_timeline": ("timeline", "timeline"),
    "profile": ("ontology_queries", "profile"),
    "project_graph": ("ontology_queries", "project_graph"),
    "recall_kinds": ("operator_queries", "recall_kinds"),
    "recall_targeted": ("targeted", "recall_targeted"),
    "recall_topic": ("recall", "recall"),
    "recent_sessions": ("digest", "recent_sessions"),
    "records": ("timeline", "records"),
    "report": ("retrieval_eval", "report"),
    "row_text": ("candidates", "row_text"),
    "run_questions": ("retrieval_eval", "run_questions"),
    "scope_bans": ("rule_match", "scope_bans"),
    "search_messages": ("search", "search_messages"),
    "search_scoped": ("scoped", "search_scoped"),
    "search_sessions": ("search", "search_sessions"),
    "session_digest": ("digest", "session_digest"),
    "session_errors": ("browse", "session_errors"),
    "session_extractions": ("browse", "session_extractions"),
    "session_thread": ("browse", "session_thread"),
    "sessions_scoped": ("scoped", "sessions_scoped"),
    "tool_action": ("rule_match", "tool_action"),
}

__all__ = [
    "BanHit",
    "ERROR_CHARS",
    "EXTRACTION_KINDS",
    "INTENTS",
    "Scoped",
    "SessionFilter",
    "TRUTH_CATEGORIES",
    "active_goal",
    "bans_for_action",
    "candidates_by_id",
    "cap_fields",
    "change_stamp",
    "check_banned",
    "conversation_markdown",
    "decision_for_topic",
    "define_term",
    "digest_markdown",
    "digest_notes",
    "estimate_tokens",
    "facets",
    "hit_index",
    "iter_extractions",
    "iter_messages",
    "kinds_by_uuid",
    "latest_extractions",
    "list_failed_attempts",
    "list_goals",
    "list_sessions",
    "list_standing_decisions",
    "machine_inventory",
    "master_markdown",
    "memory_overview",
    "memory_sessions",
    "message_timeline",
    "profile",
    "project_graph",
    "projects_named",
    "recall_kinds",
    "recall_targeted",
    "recall_topic",
    "recent_sessions",
    "records",
    "report",
    "resolve_session",
    "row_text",
    "run_questions",
    "scope_bans",
    "search_messages",
    "search_scoped",
    "search_sessions",
    "session_digest",
    "session_errors",
    "session_extractions",
    "session_thread",
    "sessions_scoped",
    "tool_action",
]

__getattr__ = lazy_api(__name__, _WHERE)
