"""Assistant decisions (X2, assistant side): an approach switch or a choice announced with its reason.

"npm is blocked, let me build from the local clone", "Decided approach: ...", "Linear style it is";
not a recommendation or a menu of options still waiting for the user, not narration ("let me fix it
using that approach:"), and not a restatement of the switch the user just asked for. The user side
(picks, "X instead of Y", deferring) is :mod:`extractors.decisions`.
"""

from __future__ import annotations

import re

from extractors.choices import offer_of
from extractors.cues import Cue, cues, weigh
from extractors.decisions import THRESHOLD, overlap
from extractors.patterns import Hit, View, clip, normalise, sentence_at, squash, tail

# Assistant side: what is being chosen or switched to ...
_SWITCH = cues(
    (
        r"\b(?:let me|i'?ll|i will|we'?ll|i'?m going to|i should|we should)\b(?! help\b)[^.\n]{0,80}?\b(?:instead|rather than)\b|"
        r"\binstead,? (?:let me|i'?ll|we'?ll|i will)\b",
        0.6,
        "instead rather",
    ),
    (
        r"\b(?:better|different|simpler|cleaner|alternative|another|new|right|radically different) approach\b",
        0.6,
    ),
    (
        r"\b(?:i'?ll|i will|let me|i'?m going to|we'?ll|i'?ve decided to|i decided to) (?:also )?(?:go with|use|"
        r"switch to|stick with|opt for|take|build|fall back|bypass|skip|drop|keep|amend|start)\b",
        0.3,
    ),
    (
        r"\b(?:i'?ve decided|i decided|we decided|decided to|(?:my|the|our|final) decision (?:is|was|here)|"
        r"i'?m going with|going with|settled on|opting for|opted for|switching to|switched to|i chose|we chose)\b",
        0.9,
    ),
    (r"\bgood (?:choice|call|pick)\b", 0.6),
    (
        r"\bkey (?:architectural |design )?(?:shift|decision|change|choice)\b|\bwe bypassed\b|\bwe chose\b",
        1.0,
    ),
    (
        r"\b(?:close|good) enough\b|\b(?:within|in) (?:the )?(?:acceptable |target |expected )?(?:range|budget|target|limits?)\b|"
        r"\bacceptable\b",
        0.7,
        "enough | range budget target limit limits | acceptable",
    ),
    (
        r"\b(?:is|seems like|looks like|would be) (?:the )?(?:best|right|cleanest|simplest|safest) (?:fit|approach|option|choice|"
        r"way|path|solution|bet)\b|\bthe (?:best|right|cleanest|simplest) (?:approach|option|fix|solution|way) (?:is|here)\b|"
        r"\bthe way to go\b",
        0.7,
    ),
    # A labelled conclusion ("**Approach:** ...", "Decision: ..."), not "... using that approach:" narration.
    (
        r"(?:^|\n)\W{0,6}(?:\w+ )?(?:approach|decision|strategy|choice|verdict)\W{0,3}:",
        0.6,
        "approach decision strategy choice verdict",
    ),
    # "Let me try AppleScript to open ...": a named alternative, not "let me try again".
    (
        r"\b(?:let me|i'?ll|i will) try (?:using |with )?"
        r"(?!(?:again|that|this|it|to|running|once|one|another|different|a|an|the)\b)[\w`.\-]+ (?:instead|to|for|which)\b",
        0.6,
        "try",
    ),
    (r"\b(?:i'?ll|let me|i should) do the same\b|\bit'?s (?:option )?[a-z0-9] then\b", 0.5, "same | then"),
    (r"\b(?:from the local|locally|directly|manually|by hand|ourselves|myself)\b", 0.3),
    (r"\boption [a-z0-9]\b", 0.4),
    (
        r"^(?:##+ )?(?:the plan|plan:|approach:|decision:)",
        0.5,
        "plan approach decision",
    ),
    # The course laid out as settled, opening a sentence or a heading: "Here's the picture: ...", "Now I have
    # the full picture. Here's the reconciliation plan: ..." (2 of 2 over both sets, two sources; one that
    # still asks the user is discounted below like any other).
    (
        r"(?:^|[.!:]\s+)(?:##+ )?here'?s the (?:\w+ )?(?:picture|plan)\b",
        1.0,
        "here heres & picture plan",
    ),
    (
        r"\bwait,? (?:i think )?(?:the )?(?:better|simpler|right)\b|\bactually,? (?:a )?(?:better|simpler)\b",
        0.8,
    ),
    # A choice announced as settled, whatever is chosen: "Linear style it is.", "Decided approach",
    # "the pinned decision", something kept, dropped or parked, "X, not Y".
    (
        r"\b\w+ it is(?:[.!]|$|, (?:since|because|then)\b)|"
        r"\b(?:decided|chosen|agreed|pinned|locked|settled) (?:approach|decision|design|plan|option)\b",
        0.9,
        "it & is | decided chosen agreed pinned locked settled",
    ),
    (
        r"\b(?:scrapped|scrapping|dropped|dropping|parked|parking|shelved|abandoned|abandoning|ditched|ditching)\b|"
        r"\b(?:which )?i (?:kept|left|dropped|skipped)\b",
        0.6,
    ),
    # ... and announced as the course itself, opening its sentence: "Parking rev 3 and filing the ticket,
    # then I'll draft the design", "Scrapped the old CLI and built ..." (on top of the cue above); not a
    # course weighed ("Dropping the goldens would remove the only regression net").
    (
        r"(?:^|[.!:]\s+|\n\W*)(?:scrapped|scrapping|parked|parking|shelved|shelving|dropped|dropping|ditched|"
        r"ditching|deferred|deferring|postponed|postponing|abandoned|abandoning)\b"
        r"(?![^.\n]{0,80}?\b(?:would|could|might|may)\b)",
        0.4,
        "scrapped scrapping parked parking shelved shelving dropped dropping ditched ditching deferred deferring "
        "postponed postponing abandoned abandoning",
    ),
    (r"\b(?:rather than|instead of)\b|\w, not (?:by|with|in|the|a)\b", 0.4, "rather instead not"),
    # A course of action opening a sentence with its reason or the rejected course beside it: "Writing
    # mine separately - theirs doesn't scan the goldens", "Sending it back to the agent, since it has the
    # full context", "Rewriting that section to use safe JSX instead of ..." (not "Checking the logs:").
    (
        r"(?:^|[.!:]\s+)(?:now |so )?(?:writing|sending|parking|rewriting|removing|dropping|keeping|moving|"
        r"switching|merging|spawning|filing|splitting|reverting|replacing)\b[^.\n]{0,120}?"
        r"(?:\bsince\b|\bbecause\b|\bso that\b|\s[\u2014\u2013-]\s|\binstead\b|\brather than\b|, not\b)",
        1.0,
        "writing sending parking rewriting removing dropping keeping moving switching merging spawning filing "
        "splitting reverting replacing",
    ),
    # Restructuring announced as settled: "There's already a folder with similar tests. I'll merge them."
    (
        r"(?:^|[.!:]\s+)i'?ll (?:merge|spawn|split|fold|rewrite|replace|drop|remove|keep|move)\b",
        1.0,
        "merge spawn split fold rewrite replace drop remove keep move",
    ),
    # The plainer course taken: "let me just restart the service and proceed", "I'll just amend it" (not
    # "let me just check ...": the verbs are courses of action, not looking).
    (
        r"\b(?:let me|i'?ll|i'?m going to) just (?:\w+ )?(?:restart|use|go with|drop|skip|keep|amend|switch|revert|"
        r"merge|stick|rebuild|reinstall|delete|remove|hardcode|inline|disable|pin)\b",
        0.6,
        "just",
    ),
    # The user's alternative taken: "your version is better, and ...", "Approved and recorded. Updating
    # the design ..." (not a verdict on the user's claim: "you're right that ...").
    (
        r"\byour (?:\w+ )?(?:version|idea|approach|framing|suggestion|proposal|plan|design|direction|solution)"
        r"(?: is|'s) (?:\w+ )?(?:better|cleaner|simpler|stronger)\b|"
        r"^\W{0,4}(?:approved|agreed)(?: and| -|,)? (?:recorded|noted|locked)\b",
        1.0,
        "your & version idea approach framing suggestion proposal plan design direction solution & is s & better "
        "cleaner simpler stronger | approved agreed & recorded noted locked",
    ),
)
# ... and why.
_REASON = cues(
    (r"\b(?:since|because|given (?:that|the)|so that|that way|which means|as a result)\b", 0.4),
    (
        r"\b(?:blocked|blocking|not available|unavailable|doesn'?t support|won'?t work|isn'?t working|"
        r"failing|permission|encountering|timeouts?|times out|not supported)\b",
        0.4,
    ),
    # (Not "a cleaner approach": that is the switch cue itself, not a second piece of evidence.)
    (
        r"\b(?:cleaner|simpler|better|faster|safer|more robust|more elegant(?:ly)?|wasteful|overkill|less work)\b"
        r"(?! (?:approach|way|solution|option|fix|method)\b)|"
        r"\bclose enough\b|\bgood enough\b|\bwithin range\b",
        0.4,
    ),
    (r"\bdue to\b|\bdidn'?t (?:work|help)\b", 0.4),
    (r"\bthe (?:fundamental |real |core |main )?(?:issue|problem) (?:is|was)\b", 0.4),
    (r"\bper (?:the|your) (?:instructions|workflow|guidelines)\b|\bper the user'?s\b", 0.3),
)
_WAITING = Cue(
    r"\b(?:would you like|which (?:would|do) you|which (?:one|option|approach)|do you want|want me to|should i\b|"
    r"let me know which|your call|what do you think|shall i|does that sound|or would you prefer|prefer\?|"
    r"which path|your preference)"
)


# A heading that names the choice ("### Decided approach", "## Verdict", "## Framework decision").
_HEADING_BODY = r"#{1,4} [^\n]{0,40}?\b(?:decided|decision|decisions|verdict|choice|chosen)\b"
_HEADING = re.compile("^" + _HEADING_BODY, re.M | re.I | re.A)
# The same after a newline: a match of `_HEADING` is one of this or one at the start of the text. Its
# literal "\n" (not cased: a prefix even under IGNORECASE) lets sre skip to the line starts, where it
# tried `^` at every position.
_HEADING_AFTER_NL = re.compile("\n" + _HEADING_BODY, re.I | re.A)


def _has_heading(text: str) -> bool:
    """`_HEADING.search(text)` finds something."""
    return _HEADING.match(text) is not None or _HEADING_AFTER_NL.search(text) is not None


# Several options laid out side by side: a menu or a recommendation for the user, unless one is taken.
_OPTION_LABEL = re.compile(r"\boption (?:[a-h]|\d{1,2})\b", re.A)
_RECOMMENDS = re.compile(
    r"\b(?:i(?: would|'d)? (?:recommend|suggest)|my recommendation|recommended(?: fix(?:es)?)?:)|\(recommended\)",
    re.A,
)
_COMMITS = Cue(
    r"\b(?:i'?ll go with|i'?m going with|going with|let'?s go with|i'?ve decided|i decided|we decided|settled on|"
    r"opted for|opting for|i chose|we chose)\b"
)
_INSTEAD = re.compile(r"\binstead\b|\brather than\b", re.A)


def _says_instead(text: str) -> bool:
    """`_INSTEAD` finds something; ruled out first by substring tests of its two phrases (which every
    match holds), cheaper than the pattern that sre tries at every position."""
    return ("instead" in text or "rather than" in text) and _INSTEAD.search(text) is not None


def _is_menu(v: View) -> bool:
    """Options laid out for the user (read from the raw text: option headings are not prose)."""
    if _COMMITS.search(v.low[:1200], v.tok) is not None:
        return False
    raw = normalise(v.text[:1500]).lower()
    if "option" in raw and len(set(_OPTION_LABEL.findall(raw))) >= 2:
        return True
    # A recommendation is only pending when the message also asks the user something.
    return "recommend" in raw and "?" in raw and _RECOMMENDS.search(raw) is not None


def _restates(sentence: str, prev_user: str) -> bool:
    """The assistant's "X instead of Y" repeats the switch the user just asked for. (The prompt is
    lower-cased only for a sentence that says "instead": most do not.)"""
    if not _says_instead(sentence):
        return False
    prev = normalise(prev_user[:1500]).lower()
    if not _says_instead(prev):
        return False
    return overlap(sentence, prev) >= 2


def assistant_decision(v: View, prev_user: str | None = None, floor: float = THRESHOLD) -> list[Hit]:
    """``prev_user``: the human prompt this text answers (a choice it already made is not the assistant's)."""
    low = v.low
    if not low:
        return []
    scan = low[:1200]
    switch, pos = weigh(_SWITCH, scan, v.tok)
    if "# " in v.text[:3000] and _has_heading(v.text[:3000]):  # (every heading match holds "# ")
        switch += 0.7  # (the prose drops headings: "### Decided approach", "## Verdict" are read raw)
    if switch <= 0 and floor > 0:
        return []
    reason, _ = weigh(_REASON, scan, v.tok)
    score = switch + min(reason, 0.8) if switch > 0 else 0.0
    if score < floor:
        return []
    if score > 0 and (_WAITING.search(tail(low, 300), v.tok) or _is_menu(v) or offer_of(v.text) is not None):
        score -= 1.0
        if score < floor:
            return []

    def content() -> str:
        return sentence_at(v.prose, max(pos, 0)) if pos > 0 else clip(v.prose)

    # The sentence is cut only when read (`Hit`): for the restatement test only when the prose says
    # "instead" or "rather" (a sentence of it that says "instead" / "rather than" lower-cased holds one,
    # and so does ``low``), else when the candidate is kept.
    if prev_user and ("instead" in low or "rather" in low) and _restates(content().lower(), prev_user):
        score -= 1.0
        if score < floor:
            return []
    return [Hit("decision", content, squash(score - THRESHOLD + 0.9), {}, score)]
