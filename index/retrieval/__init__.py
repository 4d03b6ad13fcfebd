"""Retrieval: full-text and scoped search, recall by topic, timelines, targeted answers, session digests,
operator and ontology queries, the retrieval evaluation, and the token-budget helpers every answer is cut
to. Reads through `index.store` and `index.stats`.

API: the names below (`index.lazy_api` loads each from its module on first use).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from index import lazy_api

if TYPE_CHECKING:
    from index.retrieval.budget import (
        ERROR_CHARS as ERROR_CHARS,
    )
    from index.retrieval.budget import (
        cap_fields as cap_fields,
    )
    from index.retrieval.budget import (
        estimate_tokens as estimate_tokens,
    )
    from index.retrieval.digest import (
        digest_markdown as digest_markdown,
    )
    from index.retrieval.digest import (
        recent_sessions as recent_sessions,
    )
    from index.retrieval.digest import (
        session_digest as session_digest,
    )
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
    from index.retrieval.scoped import (
        search_scoped as search_scoped,
    )
    from index.retrieval.scoped import (
        sessions_scoped as sessions_scoped,
    )
    from index.retrieval.search import (
        candidates_by_id as candidates_by_id,
    )
    from index.retrieval.search import (
        row_text as row_text,
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
    "TRUTH_CATEGORIES": ("operator_queries", "TRUTH_CATEGORIES"),
    "active_goal": ("operator_queries", "active_goal"),
    "bans_for_action": ("rule_match", "bans_for_action"),
    "candidates_by_id": ("search", "candidates_by_id"),
    "cap_fields": ("budget", "cap_fields"),
    "check_banned": ("operator_queries", "check_banned"),
    "decision_for_topic": ("operator_queries", "decision_for_topic"),
    "define_term": ("ontology_queries", "define_term"),
    "digest_markdown": ("digest", "digest_markdown"),
    "estimate_tokens": ("budget", "estimate_tokens"),
    "hit_index": ("timeline", "hit_index"),
    "iter_extractions": ("recall", "iter_extractions"),
    "iter_messages": ("recall", "iter_messages"),
    "kinds_by_uuid": ("recall", "kinds_by_uuid"),
    "latest_extractions": ("operator_queries", "latest_extractions"),
    "list_failed_attempts": ("operator_queries", "list_failed_attempts"),
    "list_goals": ("operator_queries", "list_goals"),
    "list_standing_decisions": ("operator_queries", "list_standing_decisions"),
    "machine_inventory": ("ontology_queries", "machine_inventory"),
    "message_timeline": ("timeline", "timeline"),
    "profile": ("ontology_queries", "profile"),
    "project_graph": ("ontology_queries", "project_graph"),
    "recall_kinds": ("operator_queries", "recall_kinds"),
    "recall_targeted": ("targeted", "recall_targeted"),
    "recall_topic": ("recall", "recall"),
    "recent_sessions": ("digest", "recent_sessions"),
    "records": ("timeline", "records"),
    "report": ("retrieval_eval", "report"),
    "row_text": ("search", "row_text"),
    "run_questions": ("retrieval_eval", "run_questions"),
    "scope_bans": ("rule_match", "scope_bans"),
    "search_messages": ("search", "search_messages"),
    "search_scoped": ("scoped", "search_scoped"),
    "search_sessions": ("search", "search_sessions"),
    "session_digest": ("digest", "session_digest"),
    "sessions_scoped": ("scoped", "sessions_scoped"),
    "tool_action": ("rule_match", "tool_action"),
}

__all__ = [
    "BanHit",
    "ERROR_CHARS",
    "EXTRACTION_KINDS",
    "INTENTS",
    "TRUTH_CATEGORIES",
    "active_goal",
    "bans_for_action",
    "candidates_by_id",
    "cap_fields",
    "check_banned",
    "decision_for_topic",
    "define_term",
    "digest_markdown",
    "estimate_tokens",
    "hit_index",
    "iter_extractions",
    "iter_messages",
    "kinds_by_uuid",
    "latest_extractions",
    "list_failed_attempts",
    "list_goals",
    "list_standing_decisions",
    "machine_inventory",
    "message_timeline",
    "profile",
    "project_graph",
    "recall_kinds",
    "recall_targeted",
    "recall_topic",
    "recent_sessions",
    "records",
    "report",
    "row_text",
    "run_questions",
    "scope_bans",
    "search_messages",
    "search_scoped",
    "search_sessions",
    "session_digest",
    "sessions_scoped",
    "tool_action",
]

__getattr__ = lazy_api(__name__, _WHERE)
