"""Escalation risk (D1): how close is the operator to losing patience, and what should the agent do?

Pure: the caller (index/briefing/escalation.py) gathers the rows; this module only scores text and history.
Signals, each with a bounded weight, are summed into a 0..1 score:

- the live prompt reads as a correction ("no, …", "that's wrong", "I said …", "still doesn't work");
- a streak of corrections in the latest prompts of the session;
- frustration cues (swearing, "seriously", "ugh", "useless", "come on", "!!!");
- a repeated ask (the prompt says "again" / "I already said", or closely repeats an earlier prompt);
- shouting (words in capitals) and exclamation marks;
- a short, curt reply after long prompts;
- recent interrupts of the agent, and corrections across the project in the last hours;
- thanks/praise lowers the score.

States: calm < 0.2 ≤ watchful < 0.4 ≤ strained < 0.6 ≤ escalating < 0.8 ≤ critical.
Actions: proceed, acknowledge_and_verify, slow_down_and_confirm, stop_and_ask. A draft that matches
one of the project's bans raises the action to at least slow_down_and_confirm.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from lib.text import STOPWORDS

STATES = ("calm", "watchful", "strained", "escalating", "critical")
ACTIONS = ("proceed", "acknowledge_and_verify", "slow_down_and_confirm", "stop_and_ask")
_THRESHOLDS = ((0.8, "critical"), (0.6, "escalating"), (0.4, "strained"), (0.2, "watchful"))
_ACTION_OF = {
    "calm": "proceed",
    "watchful": "acknowledge_and_verify",
    "strained": "slow_down_and_confirm",
    "escalating": "slow_down_and_confirm",
    "critical": "stop_and_ask",
}

CORRECTION = re.compile(
    r"^\s*(?:no+\b|nope\b|wrong\b|stop\b|wait\b|not (?:that|this|what)\b|don'?t\b|why (?:did|are|would) you\b)"
    r"|\b(?:that'?s|this is|you'?re|it'?s) (?:wrong|not (?:right|correct|what i))"
    r"|\bnot what i (?:asked|wanted|meant|said)\b|\bi (?:said|told you|asked (?:you )?to|meant)\b"
    r"|\byou (?:didn'?t|did not|forgot|ignored|missed|broke|keep)\b|\bstill (?:doesn'?t|does not|not|broken|fail)"
    r"|\b(?:doesn'?t|does not|didn'?t|isn'?t) work|\bundo (?:that|it|this)\b|\brevert (?:that|it|this)\b"
    r"|\binstead of\b|\bstop (?:doing|adding|using|changing)\b",
    re.I,
)
FRUSTRATION = re.compile(
    r"\b(?:wtf|ffs|fs|omg|ugh+|argh+|damn|dammit|goddamn|shit|fuck\w*|crap|bloody|hell)\b"
    r"|\b(?:seriously|ridiculous|useless|pointless|annoying|frustrat\w*|sick of|tired of|come on|"
    r"for (?:god'?s|fuck'?s|christ'?s) sake|are you (?:kidding|serious|even)|what the|how many times|"
    r"waste of time|unbelievable|give up)\b|[!?]{3,}",
    re.I,
)
REPEAT = re.compile(
    r"\b(?:again|already (?:said|told|asked)|as i said|like i said|i keep (?:saying|telling)|"
    r"once more|one more time|for the (?:second|third|last) time|repeat(?:ing)? myself)\b",
    re.I,
)
PRAISE = re.compile(
    r"\b(?:thanks?|thank you|thx|great|perfect|awesome|nice|excellent|love it|well done|"
    r"good job|works now|that works|lgtm)\b",
    re.I,
)


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


_WORD = re.compile(r"[A-Za-z][A-Za-z']+")
_CAPS_WORD = re.compile(r"\b[A-Z]{3,}\b")
_ACRONYMS = _set(
    "API CLI JSON HTTP HTTPS URL SQL CSS HTML YAML TOML UTF UUID SSH PR CI CD MCP LLM GPU CPU "
    "RAM SSD DNS TCP UDP AWS GCP NPM TODO README FTS EOF OK JWT XML PDF IDE ENV PATH"
)
_SENT = re.compile(r"[.!?\n;]+")
_STOP = STOPWORDS | _set("never don't dont without")


@dataclass(slots=True)
class PastPrompt:
    text: str
    is_correction: bool = False


@dataclass(slots=True)
class Signals:
    """Everything the detector looks at besides the live prompt and draft."""

    history: list[PastPrompt] = field(default_factory=list)  # earlier prompts of the session, oldest first
    interrupts: int = 0  # interrupts among the session's recent turns
    project_corrections: int = 0  # corrections in the project in the last hours (other sessions included)
    bans: list[str] = field(default_factory=list)
    typos: list[tuple[str, str]] = field(default_factory=list)  # (typo, meant) from the voice profile


def looks_like_correction(text: str) -> bool:
    return bool(CORRECTION.search(text[:600]))


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def similarity(a: str, b: str) -> float:
    """Jaccard overlap of the word sets (≥ 3 letters) of two prompts."""
    wa = {w for w in _words(a) if len(w) > 2}
    wb = {w for w in _words(b) if len(w) > 2}
    if len(wa) < 3 or len(wb) < 3:
        return 0.0
    return len(wa & wb) / len(wa | wb)


def shouting(text: str) -> bool:
    caps = [w for w in _CAPS_WORD.findall(text) if w not in _ACRONYMS]
    letters = [c for c in text if c.isalpha()]
    upper = sum(1 for c in letters if c.isupper())
    return len(caps) >= 3 or (len(letters) >= 12 and upper / len(letters) > 0.6)


def banned_in(draft: str, bans: Iterable[str]) -> list[str]:
    """Bans the draft appears to do: the ban's phrase, or all its content words in one sentence."""
    low = " ".join(draft.lower().split())
    sentences = [set(_words(s)) for s in _SENT.split(low)]
    hits: list[str] = []
    for ban in bans:
        words = [w for w in _words(ban) if w not in _STOP and len(w) > 2]
        phrase = " ".join(_words(ban))
        if not words:
            continue
        if len(words) == 1 and len(words[0]) < 6:
            continue  # one short word is too weak to call a violation
        found = bool(phrase) and re.search(r"(?<!\w)" + re.escape(phrase) + r"(?!\w)", low) is not None
        if not found and len(words) >= 2:
            found = any(all(w in s for w in words) for s in sentences)
        if found and ban not in hits:
            hits.append(ban)
    return hits


def typos_in(prompt: str, typos: Iterable[tuple[str, str]]) -> list[dict[str, str]]:
    words = set(_words(prompt)) | set(prompt.lower().split())
    out = []
    for typo, meant in typos:
        if typo and typo.lower() in words and typo.lower() != (meant or "").lower():
            out.append({"typo": typo, "meant": meant})
    return out


def state_of(score: float) -> str:
    for bound, name in _THRESHOLDS:
        if score >= bound:
            return name
    return "calm"


def assess(prompt: str, signals: Signals, draft: str | None = None) -> dict[str, Any]:
    """Score the live prompt in its session context; see the module docstring for the rules."""
    reasons: list[str] = []
    score = 0.0
    text = prompt or ""
    is_corr = looks_like_correction(text)
    if is_corr:
        score += 0.2
        reasons.append("the prompt reads as a correction")
    streak = streak_of([p.is_correction for p in signals.history[-6:]])
    if streak:
        score += min(0.15 * streak, 0.45)
        reasons.append(f"{streak} correction(s) in a row before this prompt")
    frustration = len(FRUSTRATION.findall(text))
    if frustration:
        score += min(0.2 * frustration, 0.35)
        reasons.append("frustration cues")
    repeated = bool(REPEAT.search(text))
    best = max((similarity(text, p.text) for p in signals.history[-5:]), default=0.0)
    if best >= 0.6:
        repeated = True
    if repeated:
        score += 0.2
        reasons.append("repeats an earlier ask" if best >= 0.6 else "says it is asking again")
    if shouting(text):
        score += 0.15
        reasons.append("shouting (capitals)")
    bangs = text.count("!")
    if bangs >= 2:
        score += 0.1
        reasons.append("exclamation marks")
    n_words = len(text.split())
    prev_lengths = sorted(len(p.text.split()) for p in signals.history[-5:])
    if (
        prev_lengths
        and n_words <= 5
        and prev_lengths[len(prev_lengths) // 2] >= 20
        and not PRAISE.search(text)
        and (is_corr or frustration or bangs or text.rstrip().endswith("?"))
    ):
        score += 0.1
        reasons.append("a curt reply after long prompts")
    if signals.interrupts:
        score += min(0.1 * signals.interrupts, 0.2)
        reasons.append(f"{signals.interrupts} recent interrupt(s)")
    if signals.project_corrections >= 2:
        score += min(0.05 * signals.project_corrections, 0.1)
        reasons.append(f"{signals.project_corrections} corrections in this project recently")
    if PRAISE.search(text) and not is_corr and not frustration:
        score -= 0.15
        reasons.append("thanks or praise")
    banned = banned_in(draft, signals.bans) if draft else []
    if banned:
        score += 0.2
        reasons.append("the draft matches a ban: " + "; ".join(banned[:3]))
    score = round(min(max(score, 0.0), 1.0), 3)
    state = state_of(score)
    action = _ACTION_OF[state]
    if banned and ACTIONS.index(action) < ACTIONS.index("slow_down_and_confirm"):
        action = "slow_down_and_confirm"
    return {
        "score": score,
        "state": state,
        "action": action,
        "reasons": reasons,
        "banned_phrases": banned,
        "typos": typos_in(text, signals.typos),
    }


def streak_of(flags: Sequence[bool]) -> int:
    """Length of the run of True at the end of `flags`."""
    n = 0
    for f in reversed(flags):
        if not f:
            break
        n += 1
    return n
