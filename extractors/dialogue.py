"""Dialogue-structure features of a prompt for the confidence model (:mod:`extractors.features`).

What the operator's turn does to the assistant's last one, read from the shape of the exchange and
not from any team's vocabulary: how much of the prompt reuses the assistant's words (a reply about
what was just done, not a new topic), whether it negates or finds fault with that ("it's still too
faded", "the footer is not the right colour", "that has already been fixed"), whether it answers the
assistant's question with an order or opens a new one, and the voice it is said in (a wish, a joint
plan, a hedge, a report of what the operator saw). Every pattern is general English grammar: a cue
that names one project, tool or reviewer fits the teams that use it and no one else (issue 11).
"""

from __future__ import annotations

import re

from extractors.patterns import View, tail
from lib.text import STOPWORDS

DIALOGUE_PREFIX = "dlg:"
_WORD = re.compile(r"[a-z][a-z0-9_\-]{3,}")
_NEG_WORDS = frozenset("not no never nothing none nowhere dont doesnt isnt cant".split())
# Finding fault with a quality, whatever the quality is: "too faded", "not gold enough", "a little
# bigger", "still 17px", "should be wider", "X instead".
_DEFICIENT = re.compile(
    r"\btoo \w+|\bnot (?:\w+ ){0,2}enough\b|\b(?:a (?:little|bit|lot)|much|way|slightly|even) (?:too |more |less )?"
    r"\w+er\b|\b(?:still|again)\b|\bshould(?:n'?t| not)? (?:be|have|look|stay|go|start|end)\b|"
    r"\b(?:doesn'?t|does not|don'?t|didn'?t|isn'?t|is not|aren'?t|wasn'?t|can'?t|cannot) (?:\w+ )?"
    r"(?:seem|look|work|show|appear|stay|start|end|render|load|match|fit|happen)"
)
# The operator reports what they saw or did: "when i refresh, ...", "i noticed", "i see", "i tried".
_OBSERVED = re.compile(
    r"\b(?:when|after|if) i \w+|\bi (?:noticed|see|saw|tried|ran|clicked|opened|refreshed|get|got|"
    r"still see|can'?t|cannot|don'?t see)\b|\bnow (?:it|the|when|i)\b"
)
# Second person as the subject of a past or present act of the assistant: "you added", "you said".
_YOU_DID = re.compile(r"\byou(?:'ve| have| had)? (?:\w+ed|said|made|put|wrote|set|ran|gave|took|did)\b")
_WHY_OPEN = re.compile(r"^\W*(?:(?:but|so|and|ok|okay|hmm)\W+)?why\b")
_INFO_OPEN = re.compile(
    r"^\W*(?:what|how|where|which|who|when|is there|are there|do you know|can you (?:tell|explain|show))\b"
)
# The voice of a turn: a wish or need, a joint plan, a hedge.
_WISH = re.compile(r"\bi(?:'d| would)? (?:want|wanna|need|like|love|wish)\b|\bwe (?:need|want)\b")
_PLAN = re.compile(r"\blet'?s\b|\blets\b|\bwe (?:should|could|can|will|'ll)\b|\bwe'll\b|\bgo with\b")
_HEDGE = re.compile(r"\bi (?:think|feel|guess|suppose|wonder)\b|\bmaybe\b|\bperhaps\b|\bprobably\b|\bidk\b")
# An order: the turn opens with a bare verb (after an optional softener).
_IMPERATIVE = re.compile(
    r"^\W*(?:(?:ok|okay|now|then|so|and|please|pls|great|good|cool|thanks)\W+){0,2}(?:please )?"
    r"(?:add|make|fix|use|run|create|update|change|remove|delete|write|move|rename|build|install|commit|push|"
    r"deploy|review|check|test|continue|start|stop|try|show|explain|keep|leave|drop|skip|revert|merge|rebase|"
    r"open|read|look|find|replace|put|give|tell|go|do|set|switch|implement|investigate|research|ignore|"
    r"document|log|pull|clean|refactor|rework|apply|let|proceed|wait|hold)\b"
)
# (feature name, pattern, the words one of which it needs)
_VOICE: tuple[tuple[str, re.Pattern[str], frozenset[str]], ...] = (
    ("dlg:observed", _OBSERVED, frozenset(("i", "now"))),
    ("dlg:you_did", _YOU_DID, frozenset(("you",))),
    ("dlg:wish", _WISH, frozenset("want wanna need like love wish".split())),
    ("dlg:plan", _PLAN, frozenset("let lets we we'll go".split())),
    ("dlg:hedge", _HEDGE, frozenset("think feel guess suppose wonder maybe perhaps probably idk".split())),
)
_SENTENCE = re.compile(r"[.!?\n]+")  # (a plain run: a trailing-context test would backtrack on "!!!…")


def _content_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text) if w not in STOPWORDS}


def _any(tok: frozenset[str], words: frozenset[str]) -> bool:
    return not words.isdisjoint(tok)


def dialogue_features(v: View) -> dict[str, float]:
    """Features of how the prompt answers the assistant's previous turn (empty parts are omitted).
    Each regex runs only when the prompt holds one of the words it needs (a token-set look-up)."""
    low, tok = v.low[:1200], v.tok
    f: dict[str, float] = {}
    neg = "n't" in low or _any(tok, _NEG_WORDS)
    deficient = _DEFICIENT.search(low) is not None
    if neg:
        f["dlg:neg"] = 1.0
    if deficient:
        f["dlg:deficient"] = 1.0
    for name, rx, need in _VOICE:
        if _any(tok, need) and rx.search(low):
            f[name] = 1.0
    imperative = _IMPERATIVE.match(low) is not None
    if imperative:
        f["dlg:imperative"] = 1.0
    if v.question:
        if _WHY_OPEN.match(low):
            f["dlg:why_q"] = 1.0
        elif _INFO_OPEN.match(low):
            f["dlg:info_q"] = 1.0
    sentences = len([s for s in _SENTENCE.split(low) if len(s.split()) >= 3])
    f["dlg:sentences>3"] = float(sentences > 3)
    if not v.prev:
        return f
    words = _content_words(low)
    shared = len(words & v.prev_tok) / len(words) if words else 0.0
    f["dlg:overlap"] = shared
    asked = "?" in tail(v.prev, 300)
    if (neg or deficient) and shared >= 0.2:
        # Negating or faulting something the assistant just said or did.
        f["dlg:fault_prev"] = 1.0
    if imperative and asked:
        f["dlg:order_after_q"] = 1.0
    if v.question and asked:
        f["dlg:q_after_q"] = 1.0
    if shared < 0.1 and len(words) >= 6:
        f["dlg:new_topic"] = 1.0
    return f
