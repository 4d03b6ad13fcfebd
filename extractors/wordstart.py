"""Searching a pattern that opens with ``\\b`` without sre trying it at every position.

sre skips ahead to where a match can start only when the pattern opens with a literal or a set of
first characters; a leading ``\\b`` hides them, so ``\\b(?:let me|i'll) ...`` is tried at every
offset of the text (a call into the matcher per character). Its twin without the ``\\b`` opens with
those characters: sre scans for them in a tight loop, and each place it stops at is kept only if a word
boundary is there, as the ``\\b`` would have required. Both find the same match: the leftmost offset at
which the boundary holds and the rest of the pattern matches, matched the same way (``\\b`` is zero
width and has no group).

The parser already factors a ``\\b`` shared by every top-level alternative (``\\bx|\\by`` is
``\\b(?:x|y)``), so the twin is the parsed pattern minus its first node, compiled as it is: same groups,
same flags. A pattern whose twin would not open with a literal keeps its plain search.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from typing import Any

if sys.version_info >= (3, 11):
    import re._compiler as _compiler
    import re._constants as _c
    import re._parser as _p
else:  # pragma: no cover - Python 3.10
    import sre_compile as _compiler
    import sre_constants as _c
    import sre_parse as _p

Search = Callable[[str], "re.Match[str] | None"]


def _ascii_word(ch: str) -> bool:
    return ch.isascii() and (ch.isalnum() or ch == "_")


def _unicode_word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def _twin(rx: re.Pattern[str]) -> re.Pattern[str] | None:
    """``rx`` without its leading ``\\b``, when that lets sre skip ahead (None otherwise)."""
    if not isinstance(rx.pattern, str) or rx.flags & re.IGNORECASE:
        return None
    parsed: Any = _p.parse(rx.pattern, rx.flags)
    if len(parsed.data) < 2 or parsed.data[0] != (_c.AT, _c.AT_BOUNDARY):
        return None
    del parsed.data[0]
    flags = rx.flags
    # Only a literal prefix pays: sre then finds it by a fast string search. A set of first characters
    # (`\b(?:is|are) ...`) stops at so many places that the boundary checks eat the gain.
    prefix, _, _ = _compiler._get_literal_prefix(parsed, flags)  # type: ignore[attr-defined]
    if not prefix:
        return None
    twin: re.Pattern[str] = _compiler.compile(parsed, flags)
    return twin


def word_start_search(rx: re.Pattern[str]) -> Search:
    """A function equal to ``rx.search`` (same match or None), cheaper when ``rx`` opens with ``\\b``."""
    twin = _twin(rx)
    if twin is None:
        return rx.search
    is_word = _ascii_word if rx.flags & re.ASCII else _unicode_word
    find = twin.search

    def search(text: str) -> re.Match[str] | None:
        pos = 0
        end = len(text)
        while (m := find(text, pos)) is not None:
            at = m.start()
            # sre's \b: a word character on exactly one side (nothing before offset 0 or after the end).
            if (at > 0 and is_word(text[at - 1])) != (at < end and is_word(text[at])):
                return m
            if at >= end:
                return None
            pos = at + 1
        return None

    return search
