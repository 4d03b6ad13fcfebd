"""Bans, standing decisions and standing orders (X8, X9): instructions meant to hold beyond the current step.

A *ban* is a standing prohibition ("never commit without signing", "stop adding emojis", "do not use
mocks"). A *standing decision* is a standing choice between alternatives ("we use pnpm", "go with
Postgres from now on", "prefer X over Y"); a *standing order* is a standing instruction that chooses
nothing ("always run the hooks", "keep the commits small", "while in beta we only do patch releases").
They are told apart by grammar (a pick verb or a named alternative), never by the words of a project:
the eval counts a choice as a decision and an order as a rule only. A hedge ("maybe we should always
...") is neither. A reversal ("we moved from npm to pnpm", "no longer X, use Y") is a standing decision
carrying ``from`` / ``to`` / ``supersedes`` so the index can retire the older decision. Pasted code-review feedback ("PR feedback: ... avoid X") and fragments cut off by a
hard-wrapped paste are not the user's standing instructions.
"""

from __future__ import annotations

import re

from extractors.cues import Cue, review_paste, table
from extractors.patterns import Hit, View, as_typed, clip, sentence_at

# One-off qualifiers: "don't push yet" is not a standing ban.
_ONE_OFF = re.compile(
    r"\b(?:yet|for now|right now|this time|just now|today|at the moment|for this (?:one|pr|commit|task|step)|"
    r"until (?:i|we) (?:say|tell|review|check))\b",
    re.A,
)

# A ban's object that stops on a function word was cut off (a hard-wrapped paste), not a complete rule.
_DANGLING = frozenset(
    "the a an to of from with for in on at by and or but that this these those which your our my its is are be as "
    "than into onto when if".split()
)

# A "never" whose following words are no rule on their own, so the ban is the whole sentence: said of a
# thing ("ensure this never repeats" would leave "repeats again"), before a past participle ("never
# assumed, never inferred": how something is to be, not a thing not to do) or before a preposition whose
# verb sits in an earlier clause ("..., and never in the artifacts").
_NOT_ORDERED = re.compile(r"\b(?:this|that|it|which|there|they|he|she)\s+$", re.A)
_NEVER_DESCRIBES = re.compile(
    r"^(?!\w*(?:eed|embed)\b)\w{2,}ed\b|^(?:in|on|at|from|for|with|into|by|within|inside|under)\b", re.A
)

# A hypothetical ("the easiest would be to ... and we always ...") proposes; it does not rule.
_HYPOTHETICAL = re.compile(r"\b(?:would be (?:to|if)|theoretically|in theory|hypothetically|what if)\b", re.A)

# A cue inside a purpose clause ("rework the branch so we only have larger commits", "so that it's always
# correct") describes the result one change should have, not a rule; a sentence in question form asks.
_PURPOSE = re.compile(r"\bso (?:that )?(?:[\w']+ ){0,3}$", re.A)
_QUESTION_FORM = re.compile(
    r"^\W*(?:is|are|do|does|did|can|could|should|would|will|was|were) (?:it|you|we|this|that|there|they|i)\b",
    re.A,
)

# Starts only at the first space of a run ((?<!\s)): from every space of a long run it is quadratic.
_TRAILING_TIME = re.compile(
    r"(?<!\s)\s+(?:(?:last|this|next) \w+|recently|yesterday|today|now|already|a while ago)\s*$", re.I
)

_BAN = table(
    Cue(
        r"\b(?:never|don'?t ever|do not ever|never ever)\s+(?!mind\b)(?P<x>[a-z](?:[^.;!?\n]|\.(?=\w)){2,120})"
    ),
    Cue(
        r"\bstop (?P<x>(?:\w+ing|using|adding|making|creating|writing|asking)\b(?:[^.;!?\n]|\.(?=\w)){0,120})"
    ),
    Cue(
        r"\b(?:do not|don'?t|please don'?t|please do not|you (?:must|should) not|you mustn'?t|we (?:must|should) "
        r"not|must not|mustn'?t|shouldn'?t)\s+(?P<x>(?:use|add|commit|push|run|touch|modify|edit|create|"
        r"write|include|call|mock|install|delete|remove|change|rename|skip|bypass|disable|force|amend|"
        r"rebase|merge|deploy|hardcode|hard-code|put|leave|introduce|rely on|depend on)\b(?:[^.;!?\n]|\.(?=\w)){1,120})"
    ),
    Cue(
        r"\b(?:no more|we (?:explicitly )?don'?t want|i (?:never|don'?t ever) want)\s+(?P<x>[a-z](?:[^.;!?\n]|\.(?=\w)){2,120})"
    ),
    # "avoid X" as an instruction, not "..., avoiding X" in a description.
    Cue(
        r"(?:^|[.!;:]\s+|\b(?:please|always|should|must|to|and)\s+)avoid\s+(?P<x>[a-z](?:[^.;!?\n]|\.(?=\w)){2,120})",
        need="avoid",
    ),
    Cue(r"\b(?:is|are) (?:forbidden|not allowed|banned|off[- ]limits)\b"),
)

_STANDING = table(
    Cue(r"\b(?:from now on|going forward|moving forward|in (?:the )?future|henceforth|from here on)\b"),
    # Not permissive or negated ("you can always use X", "it doesn't always have to be X").
    Cue(
        r"(?<!can )(?<!could )(?<!may )(?<!might )(?<!not )(?<!n't )(?<!nt )\balways\s+(?!been|was|were|had|has|is|are|fails?|failing|crash|seems?|get|gets|getting|happens?|"
        r"worked|works|did|does|returns?|shows?)[a-z]",
        need="always",  # (the lookbehinds keep `gate_of` from deriving it: the cue was searched on every prompt)
    ),
    Cue(
        r"\b(?:every time|each time|whenever) (?:you|we)\b|\b(?:at|after|before) (?:each|every) (?:step|change|commit|edit)\b"
    ),
    Cue(r"\bwe (?:always|only|never|generally|usually) (?:\w+)"),
    Cue(
        r"\b(?:while|as long as|until) (?:we're|we are|in|it'?s) (?:in )?(?:beta|alpha|dev|development|prod)\b"
    ),
    Cue(r"\b(?:wherever|whenever) (?:we|you|it|possible|we can|you can)\b|\bwherever possible\b"),
    Cue(r"\b(?:as a rule|by default|our convention|the convention is|house style|rule of thumb)\b"),
    Cue(r"\b(?:make sure|ensure) (?:to|you|that you) (?:always|never)\b"),
    Cue(r"\bcontinue until (?:all|every|everything)\b|\bkeep going until\b|\bdon'?t stop until\b"),
    Cue(r"\bwe (?:should|must|need to) be (?:using|doing|writing|running)\b"),
    Cue(
        r"\b(?:we|i) (?:use|prefer|standardi[sz]e on|stick (?:to|with)) [\w.@/-]+ (?:for|everywhere|across|in all)\b"
    ),
)
# What makes a standing instruction a choice: a pick verb ("use", "go with", "stick to", "switch to",
# "standardise on") or an alternative it is chosen over ("prefer X over Y", "X instead of Y").
_CHOICE = re.compile(
    r"\b(?:use|using|go(?:ing)? with|went with|stick(?:ing)? (?:to|with)|switch(?:ed|ing)? to|"
    r"standardi[sz]e on|opt for|settle on|choose|chose|pick)\b|"
    r"\bprefer(?:red)? (?:[\w.@/-]+ ){1,3}(?:over|to)\b|\b(?:instead of|rather than)\b",
    re.A,
)
# A hedge ("maybe we should always ...", "I think it might be good to ...") proposes; it does not stand.
_HEDGE = re.compile(
    r"\b(?:maybe|perhaps|might|probably|not sure|i (?:think|feel|guess|suppose|wonder)|"
    r"it (?:could|would) be (?:good|nice|better))\b",
    re.A,
)

_SUPERSEDE = table(
    Cue(
        r"\b(?:we|i)(?:'ve| have)? (?:moved|switched|migrated|changed|went|gone) (?:over )?from "
        r"(?P<from>(?:[^,.;!?\n]|\.(?=\w)){2,60}?) to (?P<to>(?:[^,.;!?\n]|\.(?=\w)){2,60})"
    ),
    Cue(
        r"\b(?:no longer|don'?t|do not) use (?P<from>(?:[^,.;!?\n]|\.(?=\w)){2,60}?)[,;]? (?:use|we use|switch to) (?P<to>(?:[^,.;!?\n]|\.(?=\w)){2,60})"
    ),
    Cue(
        r"\buse (?P<to>(?:[^,.;!?\n]|\.(?=\w)){2,60}?) instead of (?P<from>(?:[^,.;!?\n]|\.(?=\w)){2,60})(?:\s+(?:from now on|going forward|always))"
    ),
    Cue(
        r"\breplace(?:d)? (?P<from>(?:[^,.;!?\n]|\.(?=\w)){2,60}?) with (?P<to>(?:[^,.;!?\n]|\.(?=\w)){2,60}?)(?:\s+(?:everywhere|from now on|going forward))"
    ),
)


def extract_rules(v: View) -> list[Hit]:
    low = v.low
    if not low or v.words > 400 or review_paste(low[:400]):
        return []
    hits: list[Hit] = []
    tok = v.tok
    sup = _SUPERSEDE.first(low, tok)
    if sup is not None:
        m = sup[1]
        old = clip(as_typed(v, m, "from") or "", 80)
        new = clip(_TRAILING_TIME.sub("", as_typed(v, m, "to") or ""), 80)
        ctx: dict[str, object] = {"from": old, "to": new, "supersedes": old}
        return [Hit("standing_decision", sentence_at(v.prose, m.start()), 0.8, ctx)]
    for _, m in _BAN.matches(low, tok):
        sentence = sentence_at(v.prose, m.start())
        if _ONE_OFF.search(sentence.lower()):
            continue
        thing = as_typed(v, m, "x") if "x" in m.re.groupindex else None
        if thing and len(thing) < 120 and thing.split()[-1].lower() in _DANGLING:
            continue
        if low.startswith("never", m.start()) and (
            _NOT_ORDERED.search(low[max(0, m.start() - 12) : m.start()])
            or _NEVER_DESCRIBES.match((thing or "").lower())
        ):
            thing = None  # what follows "never" is no rule on its own: the sentence says what it is about
        content = clip(thing, 160) if thing else sentence
        hits.append(Hit("ban", content, 0.75, {"statement": sentence}))
        break
    for _, m in _STANDING.matches(low, tok):
        sentence = sentence_at(v.prose, m.start())
        if v.question and sentence.rstrip().endswith("?") or _QUESTION_FORM.match(sentence.lower()):
            continue
        if _PURPOSE.search(low[max(0, m.start() - 40) : m.start()]):
            continue
        lower = sentence.lower()
        if _ONE_OFF.search(lower) or _HYPOTHETICAL.search(lower) or _HEDGE.search(lower):
            continue
        if hits and hits[0].context.get("statement") == sentence:
            break
        hits.append(
            Hit("standing_decision" if _CHOICE.search(lower) else "standing_order", sentence, 0.65, {})
        )
        break
    return hits
