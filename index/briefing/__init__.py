"""Agent-context composition: the session-start bundle, the continuation packet after a compaction, the
per-prompt recall and the escalation signal, each fitted to a token budget and framed as untrusted
history. Built on `index.retrieval` and `index.store`; the top of `index/`.

The names below are the package's API for the layers above (CLI, hooks, MCP, vectors). They load
lazily, on first use, from the module that defines them: a hook that needs one name does not pay
for importing the whole package.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from index.briefing.bundle import operator_context as operator_context
    from index.briefing.bundle import safe_text as safe_text
    from index.briefing.continuation import Packet as Packet
    from index.briefing.continuation import continuation as continuation_packet
    from index.briefing.escalation import assess as assess
    from index.briefing.escalation import gather as gather_escalation
    from index.briefing.prompt_recall import (
        gather as gather_prompt_recall,
    )
    from index.briefing.prompt_recall import (
        ident_hits as ident_hits,
    )
    from index.briefing.prompt_recall import (
        render as render,
    )

# API name -> (module of this package, name there)
_WHERE: dict[str, tuple[str, str]] = {
    "Packet": ("continuation", "Packet"),
    "assess": ("escalation", "assess"),
    "continuation_packet": ("continuation", "continuation"),
    "gather_escalation": ("escalation", "gather"),
    "gather_prompt_recall": ("prompt_recall", "gather"),
    "ident_hits": ("prompt_recall", "ident_hits"),
    "operator_context": ("bundle", "operator_context"),
    "render": ("prompt_recall", "render"),
    "safe_text": ("bundle", "safe_text"),
}

__all__ = [
    "Packet",
    "assess",
    "continuation_packet",
    "gather_escalation",
    "gather_prompt_recall",
    "ident_hits",
    "operator_context",
    "render",
    "safe_text",
]


def __getattr__(name: str) -> object:
    """Import the defining module on first access (PEP 562) and cache the name here."""
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attr = _WHERE[name]
    value = getattr(importlib.import_module(f"{__name__}.{module}"), attr)
    globals()[name] = value
    return value
