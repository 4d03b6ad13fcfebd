"""Does an assistant text open by announcing success? ("Excellent! We've fixed ...", "Almost there!",
"Network is fully operational!", "Verdict landed, exploit fixed, everything pushed.") Such a report
states progress; a test still failing inside it is what remains, not an attempt that failed
(`assistant_voice.failed_attempt`).

`SUCCESS_OPEN` is the definition. Its last alternative (a success word anywhere in the first 60
characters of the first sentence) is what costs: sre tries it from each of the up to seven starts the
leading `\\W{0,6}` allows, and from each the word alternation at every one of up to 60 places (≈ 1 µs
per assistant text, the costliest anchored regex of extraction; 0.7 µs this way). That alternative can
only match where one of its words starts within the first 66 characters, so it ends within the first
83: a text whose head holds none of them is asked only the other alternatives (`_OPEN_WORDS`), which sre
settles in a few steps; the others still get the whole pattern.
"""

from __future__ import annotations

import re

# The alternatives: announcements at the very start, and a success word further into the first sentence.
_AT_START = (
    r"(?:excellent|perfect|great|awesome|success|done|nice|fantastic)\b[^.\n]{0,12}[!.]|almost there\b|"
    r"(?:all )?(?:done|fixed|complete|set)\b[.!]"
)
_FURTHER = (
    r"[^.!?\n]{0,60}\b(?:fully operational|now working|works now|all (?:tests|checks) pass\w*|fixed|pushed|"
    r"landed)\b[^.!?\n]{0,30}[.!]"
)
SUCCESS_OPEN = re.compile(r"^\W{0,6}(?:" + _AT_START + "|" + _FURTHER + ")")
_OPEN_WORDS = re.compile(r"^\W{0,6}(?:" + _AT_START + ")")  # without `_FURTHER`
# The last alternative's words; one of them starts at most 6 + 60 characters in, so it ends within
# `_HEAD` characters ("fully operational" is the longest, 17).
_WORDS = (
    "fixed",
    "pushed",
    "landed",
    "fully operational",
    "now working",
    "works now",
    "all tests pass",
    "all checks pass",
)
_HEAD = 6 + 60 + 17


def success_open(low: str) -> bool:
    """`SUCCESS_OPEN.match(low)`, as a truth value."""
    head = low[:_HEAD]
    for w in _WORDS:
        if w in head:
            return SUCCESS_OPEN.match(low) is not None
    return _OPEN_WORDS.match(low) is not None
