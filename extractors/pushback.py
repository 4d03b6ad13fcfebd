"""Pushback without the classic cue words, read by the correction extractor (:mod:`extractors.corrections`).

General dialogue families, each seen in several teams' prompts (issue 11, docs/eval.md):

* redirecting the whole approach: "let's take a step back", "let's pull back, we're too far in the
  weeds", "we have to rethink this", "a slightly different view";
* conceding, then countering: "you're correct, but ...", "fair enough, but ...";
* a bare stop: the whole prompt is "hold up" / "wait" / "stop";
* handing the work back: the assistant asked the operator to try, run or confirm something, and the
  operator answers "test it out yourself", "you have access, check it yourself".
"""

from __future__ import annotations

import re

from extractors.cues import Cue, cues, weigh
from extractors.patterns import View, tail

_REDIRECT = cues(
    (
        r"\b(?:take|taking) (?:a )?step back\b|\b(?:step|pull|zoom) (?:back|out)\b(?! (?:in|into|to|on|of)\b)|"
        r"\brethink(?:ing)? (?:this|it|that|the|our)\b|\b(?:in|into) the weeds\b|\bgoing (?:round |around )?in circles\b|"
        r"\bover-?(?:complicat|engineer|think)\w*|\b(?:a )?(?:slightly )?different (?:view|angle|direction|tack)\b|"
        r"\badjust our thinking\b",
        0.8,
    ),
)
# "You're correct 100%, but ...": agreeing with the last turn only to push the other way.
_CONCEDE_BUT = re.compile(
    r"^\W*(?:yeah|yes|sure|right|true|fair(?: enough)?|agreed|i agree|you'?re (?:\w+ )?(?:right|correct)|"
    r"that'?s (?:\w+ )?(?:right|true|fair))\b[^.?!\n]{0,20}?,? but\b"
)
_STOP_ONLY = re.compile(r"^\W*(?:wait|hold (?:up|on)|hang on|stop|whoa)\W*$")
# The operator hands a task back to the assistant.
_HAND_BACK = Cue(
    r"\byourself\b|\byou have access\b|\byou (?:can|could) (?:\w+ )?(?:check|test|verify|run|try|ssh|log in|"
    r"login|look)\b"
)
# The assistant asked the operator to act ("Try uploading now", "Can you confirm with `docker ps` on your
# end?", "you'll need to run ...").
TRY_IT = Cue(
    r"\btry (?:it|this|that|again|committing|running|deploying|reloading|restarting)\b|\bgive it a (?:try|go)\b|"
    r"\blet me know (?:if|how|what)\b|\btest it\b|\bshould (?:now )?(?:fix|resolve|work)\b"
)
DELEGATED = Cue(
    r"\b(?:you'?ll need to|you need to|you (?:can|should) (?:now )?run|please run|run (?:this|these|the "
    r"following)|in your terminal|yourself|on your end|for you to)\b"
)
_ASKS_TO_ACT = Cue(
    r"\btry \w+ing\b|\b(?:can|could) you (?:confirm|check|run|try|verify|test|reload|refresh)\b|"
    r"\bif you can (?:ssh|run|check|log in|open)\b"
)


def pushback_score(v: View) -> float:
    """Evidence of pushback from the families above (0.0 when none applies)."""
    low, tok = v.low, v.tok
    score = weigh(_REDIRECT, low[:300], tok)[0]
    if _CONCEDE_BUT.match(low):
        score += 0.8
    if v.prev and _STOP_ONLY.match(low):
        score += 0.6
    if v.prev and _HAND_BACK.search(low[:400], tok):
        prev_tail = tail(v.prev, 500)
        if (
            DELEGATED.search(prev_tail, v.prev_tok)
            or TRY_IT.search(prev_tail, v.prev_tok)
            or _ASKS_TO_ACT.search(prev_tail, v.prev_tok)
        ):
            score += 0.6
    return score
