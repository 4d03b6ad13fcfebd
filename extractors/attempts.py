"""The operator's own report that an attempt failed (X9, user side).

A failed attempt is an approach, fix or command that was tried and did not work: "still failing", "that
didn't help", "the shell is now broken", "we were trying to ...", a pasted failure, giving up on it. It
is read against the assistant's previous turn: right after the assistant reported a change of its own
("I've switched ...", "this should work now"), a failure is that attempt failing; a bug report that opens
a thread is about what was there before. Pushback on a result with no failure in it is a correction,
not an attempt (:mod:`extractors.corrections`).
"""

from __future__ import annotations

import re

from extractors.assistant_voice import reports_change
from extractors.cues import FAIL_WORDS, GIVE_UP, cues, review_paste, weigh
from extractors.patterns import Hit, View, clip, sentence_at, squash

THRESHOLD = 1.0

_FAILED = cues(
    # ("still not great / quite right" judges a result: a correction, not an attempt that failed.)
    (
        r"\bstill (?:fail|failing|broken|not(?! (?:great|good|ideal|perfect|quite|enough|right|as)\b)|doesn'?t|isn'?t|"
        r"the same|getting|seeing|grouped|there)\b",
        1.0,
    ),
    (
        r"\b(?:didn'?t|did not|doesn'?t|does not|isn'?t|wasn'?t) (?:seem to )?(?:work|help|fix|change|solve)\b",
        1.0,
    ),
    (r"\bnot working\b|\bno luck\b|\bsame (?:error|issue|problem|result)\b", 1.0),
    (r"\b(?:errored|failed|failing|unhappy|broke|broken|fails)\b", 0.5),
    (r"\bsomething(?:'s| is)? (?:wrong|off|broken)\b|\bthere(?:'s| is) (?:a|another|still a) bug\b", 0.5),
    (r"\bthis is annoying\b|\bugh\b|\bagain\b", 0.3),
)

# What broke after the assistant's change ("CMD is now broken", "it no longer loads", "I still can't get
# past the login screen"), or an attempt looked back on: the attempt made things worse or did not get
# through.
_REGRESSED = cues(
    (
        r"\b(?:is|are|seems?|looks?) now (?:broken|failing|gone|missing|worse|empty|blank)\b|"
        r"\bnow (?:fails|crashes|errors|breaks|hangs)\b|\bno longer (?:works?|shows?|loads?|starts?|runs?|builds?)\b|"
        r"\bstopped (?:working|showing|loading)\b|\b(?:is|are) (?:broken|failing) now\b",
        1.0,
    ),
    (r"\bcan'?t (?:get past|get it to|make it)\b|\bstill can'?t\b", 0.8),
    # "Previously, the prompt stopped ... Now, it continues": behaviour that changed for the worse.
    (r"\b(?:previously|it used to)\b[^?]{0,300}?\bnow\b", 0.8, "previously used"),
    # "We were trying to use a hammer to fix a watch": an approach looked back on.
    (r"\b(?:we|i) (?:were|was|have been|'ve been) trying to\b", 0.8),
)

_YES_NO = re.compile(
    r"^\W*(?:(?:ok|okay|so|and|but|hmm+|also)\W+)?(?:do|does|did|is|are|was|were|can|could|should|would|will|"
    r"have|has)\b"
)


def extract_user_failed(v: View, correction: float, pasted_fail: bool, floor: float = THRESHOLD) -> list[Hit]:
    low = v.low
    if review_paste(low[:400]):
        return []  # review remarks on the code are corrections, not reports of an attempt that failed
    score, pos = weigh(_FAILED, low[:700], v.tok)
    regressed, at = weigh(_REGRESSED, low[:700], v.tok)
    if regressed > 0:
        score += regressed
        pos = at if pos < 0 else pos
    if GIVE_UP.search(low[:500], v.tok):
        score += 0.8
    if pasted_fail:
        score += 0.8
    if score <= 0 and not FAIL_WORDS.search(low[:700], v.tok):
        # Nothing failed, went wrong or was given up: pushback on the result is a correction, not an attempt.
        return []
    if _YES_NO.match(low):
        score -= 0.8  # asking whether something fails ("do we have the same issue in ...?") reports nothing
    if not v.prev:
        # A bug report that opens a thread is about pre-existing behaviour, not an attempt.
        score -= 0.6
    else:
        if reports_change(v.prev):
            # Right after the assistant said its change should now work, a failure is that attempt failing.
            score += 0.6
        if correction >= 1.0:
            score += 0.2
    if score < floor:
        return []
    content = sentence_at(v.prose, pos) if pos > 0 else clip(v.prose, 240)
    return [Hit("failed_attempt", content, squash(score), {"by": "user"}, score)]
