"""Features of one utterance for the confidence model (:mod:`extractors.confidence`).

The heuristics' additive evidence per class (the raw cue scores the extractors compute) plus what the
message and the one it answers look like: length, questions, openers, a fixed list of common English
function and intent words, whether the assistant had just claimed success, offered options or asked
for information, and how much of the prompt is pasted material. Nothing here names a project, a tool
or a phrase of one team: the list of words is general English, so weights learnt from several teams
can carry to others. Pure and cheap: token-set look-ups over the view the extractors already built.
"""

from __future__ import annotations

import math
import re

from extractors.cues import PROPOSAL, claims_success, offers_choice
from extractors.gate import wordset
from extractors.model import Utterance
from extractors.patterns import View, tail

# Common words whose presence says something about intent in any project (negation, pushback, choice,
# objective, report). Each becomes a 0/1 feature ``w:<word>``.
USER_WORDS = wordset(
    "no not don doesn didn isn wasn aren won can cannot wrong still again instead rather but why should "
    "shouldn supposed expected actually thought think maybe perhaps let lets go want need like prefer "
    "i we you it this that please can could would fix error errors fail failed failing broken bug issue "
    "works work working worked add make use using skip later both option first second all every always never "
    "every plan implement build create feature how what where is are does do did done finished thanks "
    "great perfect good ok okay yes yeah sure also just now commit push lost missing forgot seems looks "
    "same wait hmm um umm oh ah change update instead idea ideas help trying try tried"
)
ASSISTANT_WORDS = wordset(
    "right sorry apologize mistake wrong missed overlooked instead approach decided decision switch "
    "simpler better option recommend fail failed failing error errors still again didn doesn won can "
    "unable couldn done complete completed pass passes passing tests committed pushed fixed next remaining "
    "let me ll will now found issue problem because since works working summary"
)
_OPENERS = (
    "no", "but", "why", "wait", "ok", "okay", "yes", "please", "let", "can", "could", "i", "we", "so",
    "actually", "hmm", "how", "what", "is", "you", "the", "this", "that", "it", "also", "now", "and",
)
_OPENER_SET = frozenset(_OPENERS)
_FIRST_WORD = re.compile(r"[a-z']+")
_A_OPENERS = ("you", "i", "let", "done", "now", "the", "perfect", "great", "good", "wait", "sorry", "found")
_A_OPENER_SET = frozenset(_A_OPENERS)


def _first_word(low: str) -> str:
    m = _FIRST_WORD.match(low.lstrip(" *#>-\"'`([").replace("'", ""))
    return m.group(0) if m else ""


def _clip(x: float, lo: float = -2.0, hi: float = 4.0) -> float:
    return min(hi, max(lo, x))


def _shape(v: View) -> dict[str, float]:
    words = v.words
    text_len = max(1, len(v.text))
    return {
        "log_words": math.log1p(words) / 5.0,
        "words<=3": float(words <= 3),
        "words<=12": float(words <= 12),
        "words>60": float(words > 60),
        "question": float(v.question),
        "pasted": _clip(1.0 - len(v.prose) / text_len, 0.0, 1.0),
        "no_prose": float(len(v.prose) < 0.1 * text_len and len(v.text) > 200),
    }


def user_features(u: Utterance, v: View, evidence: dict[str, float]) -> dict[str, float]:
    """Features of a human prompt; ``evidence``: the heuristics' raw score per class."""
    f = {f"h:{k}": _clip(x) for k, x in evidence.items()}
    f.update(_shape(v))
    prev = v.prev
    f["first"] = float(not prev)
    if prev:
        ptail = tail(prev, 700)
        f["prev_success"] = float(claims_success(prev, v.prev_tok))
        f["prev_offers"] = float(offers_choice(tail(prev, 900), v.prev_tok))
        f["prev_proposal"] = float(PROPOSAL.search(tail(prev, 400), v.prev_tok) is not None)
        f["prev_question"] = float("?" in ptail[-200:])
        f["prev_long"] = float(len(v.prev_raw) > 1500)
    f["tool_error"] = float(any(t.is_error for t in u.recent_tools))
    first = _first_word(v.low)
    if first in _OPENER_SET:
        f["open:" + first] = 1.0
    for w in USER_WORDS.intersection(v.tok):
        f["w:" + w] = 1.0
    return f


def assistant_features(u: Utterance, v: View, evidence: dict[str, float]) -> dict[str, float]:
    """Features of an assistant text block; ``evidence``: the heuristics' raw score per class."""
    f = {f"h:{k}": _clip(x) for k, x in evidence.items()}
    f.update(_shape(v))
    errors = sum(1 for t in u.recent_tools if t.is_error)
    f["tool_errors"] = min(errors, 3) / 3.0
    f["tools"] = min(len(u.recent_tools), 8) / 8.0
    f["after_prompt"] = float(bool(u.prev_user_text))
    first = _first_word(v.low)
    if first in _A_OPENER_SET:
        f["open:" + first] = 1.0
    for w in ASSISTANT_WORDS.intersection(v.tok):
        f["w:" + w] = 1.0
    return f
