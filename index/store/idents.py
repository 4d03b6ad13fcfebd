"""Identifier-aware terms (I2): make camelCase / PascalCase names findable by their parts.

FTS5's unicode61 tokenizer already splits snake_case, dotted names, paths and ERR_CODES at the
punctuation; what it cannot split is `parseConfig` or `HTTPServerError`. For those we index the
parts in a second FTS column, so `config` finds `parseConfig` and `parseConfig` still matches whole.

A word is a run of ASCII letters and digits from its first letter, at least 4 long; it is an
identifier when it has an upper-case letter after its first character and a lower-case one (not
`word`, `WORD` or `Word`). Such a word holds a lower-case letter followed, digits apart, by an
upper-case one, or two upper-case letters, digits apart, followed by a lower-case one, so only the
runs around those places are read: the text is mapped to letter classes in C (`bytes.translate`),
digits counting as lower-case letters, so that both shapes show as `aA` or `AAa`, and the places
are found with `bytes.find`, which spares building a string for every word.
"""

from __future__ import annotations

import re

_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_MAX_TERMS = 400
# Every byte as its class: a lower-case letter or a digit, an upper-case letter, or a separator (UTF-8
# bytes of non-ASCII characters included, as `[A-Za-z0-9]` does not match them either).
_CLASS = bytes(
    ord("a") if 97 <= b <= 122 or 48 <= b <= 57 else ord("A") if 65 <= b <= 90 else 32 for b in range(256)
)
_PLACES = (b"aA", b"AAa")
_DIGITS = "0123456789"


def identifier_parts(text: str, memo: dict[bytes, tuple[str, ...]] | None = None) -> str:
    """Space-separated parts of every camel-case identifier in `text` (deduplicated, sorted).

    `memo` (one per file: its messages name the same identifiers again and again) keeps each run's
    parts, so a run seen before costs a dict look-up instead of its decoding, tests and split."""
    return utf8_parts(text.encode("utf-8", "replace"), memo)


def utf8_parts(data: bytes, memo: dict[bytes, tuple[str, ...]] | None = None) -> str:
    """`identifier_parts` of the text whose UTF-8 (`errors="replace"`) is `data`: for a caller that
    encoded the text already (the worker packs the same bytes)."""
    cls = data.translate(_CLASS)
    runs: set[bytes] = set()
    for place in _PLACES:
        at = cls.find(place)
        while at >= 0:
            end = cls.find(b" ", at)
            if end < 0:
                end = len(cls)
            runs.add(data[cls.rfind(b" ", 0, at) + 1 : end])
            at = cls.find(place, end)
    if not runs:
        return ""  # two texts in three
    if memo is None:
        memo = {}
    seen: set[str] = set()
    for run in runs:
        parts = memo.get(run)
        if parts is None:
            parts = memo[run] = _run_parts(run)
        seen.update(parts)
    if len(seen) >= _MAX_TERMS:
        return _capped(runs)
    return " ".join(sorted(seen))


def _run_parts(run: bytes) -> tuple[str, ...]:
    """The parts of a run's word, none when the word (from its first letter) is short or not an
    identifier."""
    word = run.decode("ascii").lstrip(_DIGITS)
    if len(word) < 4 or word.islower() or word.isupper() or (word[0].isupper() and word[1:].islower()):
        return ()
    return tuple(part.lower() for part in _PARTS.findall(word) if len(part) > 1)


def _capped(runs: set[bytes]) -> str:
    """A text past the cap keeps the parts of its words in sorted order until the cap, so which
    parts it keeps does not vary by run (below the cap, order does not change the result)."""
    seen: dict[str, None] = {}
    for word in sorted({w for w in (r.decode("ascii").lstrip(_DIGITS) for r in runs) if len(w) >= 4}):
        seen.update(dict.fromkeys(_run_parts(word.encode("ascii"))))
        if len(seen) >= _MAX_TERMS:
            break
    return " ".join(sorted(seen))
