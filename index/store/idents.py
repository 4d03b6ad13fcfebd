"""Identifier-aware terms (I2): make camelCase / PascalCase names findable by their parts.

FTS5's unicode61 tokenizer already splits snake_case, dotted names, paths and ERR_CODES at the
punctuation; what it cannot split is `parseConfig` or `HTTPServerError`. For those we index the
parts in a second FTS column, so `config` finds `parseConfig` and `parseConfig` still matches whole.
"""

from __future__ import annotations

import re

_WORDS = re.compile(r"[A-Za-z][A-Za-z0-9]{3,}")
_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_MAX_TERMS = 400


def identifier_parts(text: str) -> str:
    """Space-separated parts of every camel-case identifier in `text` (deduplicated)."""
    seen: dict[str, None] = {}
    for word in set(_WORDS.findall(text)):
        if word.islower() or word.isupper() or (word[0].isupper() and word[1:].islower()):
            continue
        for part in _PARTS.findall(word):
            if len(part) > 1:
                seen[part.lower()] = None
        if len(seen) >= _MAX_TERMS:
            break
    return " ".join(sorted(seen))
