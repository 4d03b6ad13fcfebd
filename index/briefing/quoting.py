"""Recalled text made safe to put in front of a model (issue 10 #15): one line, no markup, no way to end
our fence or an item's «quote», with its date and session. Its own light module so the PreToolUse hook
quotes a ban without importing the bundle."""

from __future__ import annotations

import re

from lib.injected import MARK
from lib.text import clip

ITEM_CHARS = 150

# Brackets that read like < and > (fullwidth, angle), and the « » that quote our items. (‹ › are what
# safe_text turns < > into, so it can run twice over the same text.)
_LOOKALIKE = str.maketrans(
    {c: "<" for c in "＜﹤〈⟨《❮"} | {c: ">" for c in "＞﹥〉⟩》❯"} | {"«": '"', "»": '"'}
)
_TAG = re.compile(r"<\s*(?:/\s*)?[A-Za-z!?][^<>]{0,200}>")  # one \s* per gap: linear
_OUR_MARK = re.compile(re.escape(MARK), re.I)
_FENCE = re.compile(r"```+")


def safe_text(text: str | None, limit: int = ITEM_CHARS) -> str:
    """Recalled text on one line that cannot pose as markup (a system/tool envelope, a closing
    `</untrusted>`), end our fence or an item's «quote»: look-alike brackets are read as < >, tag-like
    spans are dropped, any other < > becomes ‹ ›, and our marker's name is spelt differently."""
    t = (text or "").translate(_LOOKALIKE)
    t = _TAG.sub(" ", t).replace("<", "‹").replace(">", "›")
    t = _OUR_MARK.sub("total-recall memory", _FENCE.sub("'", t))
    return clip(t, limit).lstrip("-*• ")


def quote(text: str | None, limit: int = ITEM_CHARS) -> str:
    """A recalled text as one «quoted» item (see safe_text)."""
    return "«" + safe_text(text, limit) + "»"


def provenance(date: str | None, session_id: str | None) -> str:
    """Where an item comes from: ` (2026-01-03, session 1a2b3c4d)`, or less when unknown."""
    parts = [p for p in (date, f"session {session_id[:8]}" if session_id else None) if p]
    return f" ({', '.join(parts)})" if parts else ""
