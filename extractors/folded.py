"""Case-insensitive searches run as case-sensitive ones over the lower-cased text.

sre cannot skip ahead in a case-insensitive pattern: it tries every position of the text, folding
each character. The same pattern without IGNORECASE over the lower-cased text opens with plain
letters, which sre scans for in a tight loop.
Both find the same spans when lower-casing keeps every character in its place (its length unchanged:
not so for "İ") and the text holds no character that matches an ASCII letter only under IGNORECASE
(dotless ı, long ſ); otherwise the original pattern runs. ``tests/test_folded.py`` checks, over every
Unicode character, that each kind of atom these patterns use (ASCII letters and punctuation, ``\\w``,
``\\b``) matches a character under IGNORECASE exactly when its plain form matches the lower-cased one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

# Characters that match an ASCII letter of a pattern only under sre's IGNORECASE, not once lower-cased.
CASE_ONLY = ("\u0131", "\u017f")  # dotless i, long s


def same_when_lowered(text: str, low: str) -> bool:
    """``low`` (``text.lower()``) holds every character of ``text`` in its place and none that only
    IGNORECASE would fold onto an ASCII letter: a plain pattern finds in ``low`` what its
    case-insensitive form finds in ``text``."""
    return len(low) == len(text) and not any(c in text for c in CASE_ONLY)


class Folded:
    """A case-insensitive pattern (``rx``) and its plain twin for lower-cased text."""

    __slots__ = ("rx", "_low")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.rx = re.compile(pattern, flags | re.IGNORECASE)
        self._low = re.compile(pattern, flags & ~re.IGNORECASE)

    def found(self, text: str, low: str) -> bool:
        """``rx.search(text)`` finds something; ``low`` is ``text.lower()``."""
        if same_when_lowered(text, low):
            return self._low.search(low) is not None
        return self.rx.search(text) is not None

    def finditer(self, text: str, low: str) -> Iterator[re.Match[str]]:
        """The matches of ``rx.finditer(text)``, by their spans (the matched text of a lower-cased run
        is lower-cased: take ``text[m.start():m.end()]``); ``low`` is ``text.lower()``."""
        if same_when_lowered(text, low):
            return self._low.finditer(low)
        return self.rx.finditer(text)


_WORD_CHAR = re.compile(r"\w")


class FoldedWords:
    """``\\b(?:words)\\b``, case-insensitive (``rx``), searched where lower-casing finds the same as
    ``(?:words)\\b`` over the lower-cased text, the boundary before a hit checked after it. Every word
    starts with a letter, so that boundary holds where the hit starts the text or follows a non-word
    character. A pattern opening with ``\\b`` makes sre try every position; one opening with the words'
    first letters lets it skip to them (about half the time, for the profile's voice words)."""

    __slots__ = ("rx", "_tail")

    def __init__(self, words: str) -> None:
        self.rx = re.compile(rf"\b(?:{words})\b", re.IGNORECASE)
        self._tail = re.compile(rf"(?:{words})\b")

    def found(self, text: str, low: str) -> bool:
        """``rx.search(text)`` finds something; ``low`` is ``text.lower()``."""
        if not same_when_lowered(text, low):
            return self.rx.search(text) is not None
        hit = self._tail.search(low)
        while hit is not None:
            at = hit.start()
            if at == 0 or _WORD_CHAR.match(low, at - 1) is None:
                return True
            hit = self._tail.search(low, at + 1)
        return False
