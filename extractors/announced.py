"""What an assistant message announces it will do next ("I'll switch to ...", "let me try ..."): a
correction that rejects it names that approach (`corrections.rejected_approach`)."""

from __future__ import annotations

import re

from extractors.folded import same_when_lowered

ANNOUNCED = re.compile(
    r"(?:let me|i'?ll|i will|i'?m going to|now i'?ll|i'?m)\s+(?:try |use |switch to |fix |add |create |"
    r"replace |remove |update |change |implement |write |run |refactor |modify |install |set up )"
    r"([^.\n:]{6,140})",
    re.I,
)
# The same pattern without IGNORECASE, run on the lower-cased text: sre cannot skip ahead in a
# case-insensitive pattern (it tries every position), and can in this one (by its first letters).
_ANNOUNCED_LOW = re.compile(ANNOUNCED.pattern)


def last_announced(text: str) -> str | None:
    """The last thing `text` announces doing ("I'll switch to ..."), as `ANNOUNCED` finds it. On the
    lower-cased text when lower-casing keeps every character in its place (not so for "İ") and no
    character of the text matches a letter only case-insensitively: then both find the same spans."""
    low = text.lower()
    fast = same_when_lowered(text, low)
    last = None
    for last in _ANNOUNCED_LOW.finditer(low) if fast else ANNOUNCED.finditer(text):  # noqa: B007
        pass
    return None if last is None else text[last.start() : last.end()]
