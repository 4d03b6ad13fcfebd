"""Agent-context composition: the session-start bundle, the continuation packet after a compaction, the
per-prompt recall and the escalation signal, each fitted to a token budget and framed as untrusted
history. Built on `index.retrieval` and `index.store`; the top of `index/`.

API: the names below (`index.lazy_api` loads each from its module on first use).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from index import lazy_api

if TYPE_CHECKING:
    from index.briefing.bundle import operator_context as operator_context
    from index.briefing.continuation import Packet as Packet
    from index.briefing.continuation import continuation as continuation_packet
    from index.briefing.escalation import assess as assess
    from index.briefing.escalation import gather as gather_escalation
    from index.briefing.explain import feedback as feedback
    from index.briefing.explain import why as why
    from index.briefing.gate import Gate as Gate
    from index.briefing.items import Item as Item
    from index.briefing.items import line as bundle_line
    from index.briefing.prompt_recall import Recalled as Recalled
    from index.briefing.prompt_recall import (
        gather as gather_prompt_recall,
    )
    from index.briefing.prompt_recall import (
        ident_hits as ident_hits,
    )
    from index.briefing.prompt_recall import (
        render as render,
    )
    from index.briefing.quoting import provenance as provenance
    from index.briefing.quoting import quote as quote
    from index.briefing.quoting import safe_text as safe_text
    from index.briefing.sharing import Shareable as Shareable
    from index.briefing.sharing import shareable as shareable
    from index.briefing.staleness import check_all as check_staleness

# API name -> (module of this package, name there)
_WHERE: dict[str, tuple[str, str]] = {
    "Gate": ("gate", "Gate"),
    "Item": ("items", "Item"),
    "Packet": ("continuation", "Packet"),
    "Recalled": ("prompt_recall", "Recalled"),
    "assess": ("escalation", "assess"),
    "bundle_line": ("items", "line"),
    "check_staleness": ("staleness", "check_all"),
    "continuation_packet": ("continuation", "continuation"),
    "feedback": ("explain", "feedback"),
    "gather_escalation": ("escalation", "gather"),
    "gather_prompt_recall": ("prompt_recall", "gather"),
    "ident_hits": ("prompt_recall", "ident_hits"),
    "operator_context": ("bundle", "operator_context"),
    "provenance": ("quoting", "provenance"),
    "quote": ("quoting", "quote"),
    "render": ("prompt_recall", "render"),
    "safe_text": ("quoting", "safe_text"),
    "Shareable": ("sharing", "Shareable"),
    "shareable": ("sharing", "shareable"),
    "why": ("explain", "why"),
}

__all__ = [
    "Gate",
    "Item",
    "Packet",
    "Recalled",
    "assess",
    "bundle_line",
    "check_staleness",
    "continuation_packet",
    "feedback",
    "gather_escalation",
    "gather_prompt_recall",
    "ident_hits",
    "operator_context",
    "provenance",
    "quote",
    "render",
    "safe_text",
    "Shareable",
    "shareable",
    "why",
]

__getattr__ = lazy_api(__name__, _WHERE)
