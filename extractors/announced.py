"""What an assistant message announces it will do next ("I'll switch to ...", "let me try ..."): a
correction that rejects it names that approach (`corrections.rejected_approach`)."""

from __future__ import annotations

from extractors.folded import Folded

# Case-insensitive, searched on the lower-cased text where that finds the same (`extractors.folded`).
ANNOUNCED = Folded(
    r"(?:let me|i'?ll|i will|i'?m going to|now i'?ll|i'?m)\s+(?:try |use |switch to |fix |add |create |"
    r"replace |remove |update |change |implement |write |run |refactor |modify |install |set up )"
    r"([^.\n:]{6,140})"
)


def last_announced(text: str) -> str | None:
    """The last thing `text` announces doing ("I'll switch to ..."), in the text's own case."""
    last = None
    for last in ANNOUNCED.finditer(text, text.lower()):  # noqa: B007
        pass
    return None if last is None else text[last.start() : last.end()]
