"""Analytics over the stored index: usage and cost metrics, the health report, the dated price catalogue
(`rates.json`), and the status / doctor / find-session queries of the CLI. Reads through `index.store`
only.

API: the names below (`index.lazy_api` loads each from its module on first use).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from index import lazy_api

if TYPE_CHECKING:
    from index.stats.metrics import (
        CORRECTION_KINDS as CORRECTION_KINDS,
    )
    from index.stats.metrics import (
        cost_report as cost_report,
    )
    from index.stats.metrics_health import health as health
    from index.stats.metrics_health import hook_stats as hook_stats
    from index.stats.metrics_health import indexed_files_by_root as indexed_files_by_root
    from index.stats.pricing import BadRate as BadRate
    from index.stats.pricing import load_catalog as load_catalog
    from index.stats.queries import (
        doctor as doctor,
    )
    from index.stats.queries import (
        find_session as find_session,
    )
    from index.stats.queries import (
        has_messages as has_messages,
    )
    from index.stats.queries import (
        inspect_session as inspect_session,
    )
    from index.stats.queries import (
        recent_sessions as recent_sessions,
    )
    from index.stats.queries import (
        status as status,
    )
    from index.stats.reports import summary as summary
    from index.stats.reports import top_sessions as top_sessions
    from index.stats.topic_words import topics as topics
    from index.stats.usage_view import session_costs as session_costs
    from index.stats.usage_view import usage_series as usage_series

# API name -> (module of this package, name there)
_WHERE: dict[str, tuple[str, str]] = {
    "BadRate": ("pricing", "BadRate"),
    "CORRECTION_KINDS": ("metrics", "CORRECTION_KINDS"),
    "cost_report": ("metrics", "cost_report"),
    "doctor": ("queries", "doctor"),
    "find_session": ("queries", "find_session"),
    "has_messages": ("queries", "has_messages"),
    "health": ("metrics_health", "health"),
    "hook_stats": ("metrics_health", "hook_stats"),
    "indexed_files_by_root": ("metrics_health", "indexed_files_by_root"),
    "inspect_session": ("queries", "inspect_session"),
    "load_catalog": ("pricing", "load_catalog"),
    "recent_sessions": ("queries", "recent_sessions"),
    "session_costs": ("usage_view", "session_costs"),
    "status": ("queries", "status"),
    "summary": ("reports", "summary"),
    "top_sessions": ("reports", "top_sessions"),
    "topics": ("topic_words", "topics"),
    "usage_series": ("usage_view", "usage_series"),
}

__all__ = [
    "BadRate",
    "CORRECTION_KINDS",
    "cost_report",
    "doctor",
    "find_session",
    "has_messages",
    "health",
    "hook_stats",
    "indexed_files_by_root",
    "inspect_session",
    "load_catalog",
    "recent_sessions",
    "session_costs",
    "status",
    "summary",
    "top_sessions",
    "topics",
    "usage_series",
]

__getattr__ = lazy_api(__name__, _WHERE)
