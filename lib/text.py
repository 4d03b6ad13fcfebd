"""Plain-text helpers every layer shares (lib/ imports nothing above it): squash whitespace, clip
to a character budget at a word boundary, and the English function words that carry no topic."""

from __future__ import annotations

ELLIPSIS = "…"

# Function words dropped from search queries and topic words: a natural-language question matches
# on its content words. Modules add the words that are noise in their own domain.
STOPWORDS = frozenset(
    """
a an and are as at be been but by can could did do does doing done for from had has have how i if in
into is it its itself just me my of on or our ours please should so some such than that the their
them then there these they this those to too us was we were what when where which while who whom why
will with would you your yours about after again against all am any because before being below
between both down during each few further here more most no nor not off once only other out over own
same she he her him his under until up very let lets let's also via vs ago get got make made use
used using find found show
""".split()
)


def collapse(text: str | None) -> str:
    """`text` on one line: every run of whitespace one space, none at the ends."""
    return " ".join((text or "").split())


def clip(text: str | None, limit: int) -> str:
    """`text` squashed to one line of spaces and cut at a word boundary to at most `limit` chars."""
    t = collapse(text)
    if len(t) <= limit:
        return t
    if limit <= 1:
        return ELLIPSIS[:limit]
    cut = t[: limit - 1]
    space = cut.rfind(" ")
    if space > limit * 0.6:
        cut = cut[:space]
    return cut.rstrip(" ,;:") + ELLIPSIS
