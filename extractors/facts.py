"""Durable preferences and facts about the user (X5, X16).

``implicit_preference``: how the user likes things done, not phrased as a rule ("I'd rather use
computer-use tools than Playwright", "I only want one version, preferably brew", "keep it dependency
free"). ``domain_fact``: facts about their machines, tools, paths and conventions ("M-Claude is in the
Documents folder", "legion is this device", "I host on Vercel", "slate is the router").
"""

from __future__ import annotations

import re

from extractors.cues import Cue
from extractors.patterns import Hit, View, clip, sentence_at

_PREFERENCE = (
    Cue(
        r"\bi (?:prefer|'d prefer|would prefer|'d rather|would rather|like to|love to|hate|dislike|don'?t like|"
        r"only want|want only|always use|usually use|tend to use|never use|like using|like my|like it when|"
        r"like the way)\b"
    ),
    Cue(r"\bpreferabl(?:y|e)\b|\bmy (?:preference|preferred|favou?rite|go-to)\b|\bi'?m a fan of\b"),
    Cue(r"\bi'?m (?:more )?(?:comfortable|used to|familiar|happier) with\b"),
    Cue(
        r"\bkeep(?:ing)? (?:it|things|this|them|the \w+) (?:simple|minimal|small|lean|dependency[- ]free|"
        r"compilation[- ]free|the same|short|readable|plain)\b"
    ),
    Cue(r"\b(?:dependency|compilation|build|framework)[- ]free\b|\bno (?:external )?dependencies\b"),
    Cue(r"\bi don'?t want to (?:make|assume|depend|rely|use|add|install|have)\b"),
    Cue(r"\b(?:literal|exact|hard-?coded) expected (?:strings?|values?|output)\b|\bbranch prefix\b"),
)
_FACT = (
    Cue(
        r"\b[\w.~/\\:-]+ (?:is|are|lives|sits|resides) (?:in|at|under|on|inside) (?:the |my |our |a )?"
        r"[\w.~/\\:-]+(?: (?:folder|directory|dir|repo|drive|machine|server|box|host|path))?\b",
        need="is are lives sits resides",
    ),
    Cue(
        r"\b(?:is|are) (?:this|our|my|the) (?:current )?(?:device|machine|laptop|desktop|repo|router|server|"
        r"host|box|workstation|mac|pc|phone|project|folder|dir|directory|main|default)\b"
    ),
    Cue(
        r"\b(?:this|it) is (?:a|an|my|our) (?:\w+ ){0,2}(?:term|terminal|machine|laptop|server|router|repo|"
        r"monorepo|worktree|container|vm|mac|pc|cluster)\b"
    ),
    Cue(r"\b(?:we|i) (?:host|deploy|run|build|develop|work) (?:it |this |everything )?(?:on|with|in) [a-z]"),
    Cue(r"\bi (?:have|use|run|am on|'m on|am using|'m using) (?:both |a |an |my )?[\w.+-]+ (?:and|installed|on|as|for)\b"),
    Cue(r"\b(?:are|is) (?:separate|different|distinct) (?:clients|machines|hosts|devices|repos|projects|accounts)\b"),
    Cue(r"\bour (?:repo|server|router|machine|domain|branch|cluster|db|database|stack|ci|registry|vpn) (?:is|uses|runs)\b"),
    Cue(r"\bwe(?:'re| are) (?:on|using|in) (?:a |an )?(?:worktree|monorepo|\w+ \d|macos|linux|windows|wsl)\b"),
    Cue(r"\b(?:i have|we have) `?[\w.()-]+`? in\b"),
)
# A bare path given as an answer ("1. /Users/me/Documents/M-Claude") is where something lives; inside a
# long request it is only context for that request.
_PATHS = (
    Cue(r"/(?:users|home)/[\w./\\-]+", need="users home"),
    Cue(r"~/[\w./-]+"),
    Cue(r"\b[a-z]:\\\\[\w.\\-]+", need="c d e f g h"),
)
# Facts hidden in questions are still facts ("I have redirects() in next.config.js, would that work?"),
# but a bare question with a path is not.
_QUESTION_ONLY = re.compile(r"^(?:what|where|which|is|are|does|do|can|could|how)\b[^.!\n]*\?\s*$")


def extract_facts(v: View) -> list[Hit]:
    low = v.low
    if not low or v.words > 250:
        return []
    hits: list[Hit] = []
    scan = low[:900]
    for rx in _PREFERENCE:
        m = rx.search(scan, v.tok)
        if m:
            hits.append(Hit("implicit_preference", sentence_at(v.prose, m.start()), 0.6, {}))
            break
    for rx in _FACT:
        m = rx.search(scan, v.tok)
        if m is None:
            continue
        sentence = sentence_at(v.prose, m.start())
        if _QUESTION_ONLY.match(sentence.lower()):
            continue
        hits.append(Hit("domain_fact", clip(sentence, 240), 0.55, {}))
        break
    else:
        if v.words <= 20:
            for rx in _PATHS:
                m = rx.search(scan, v.tok)
                if m is not None:
                    hits.append(Hit("domain_fact", clip(v.prose, 240), 0.5, {"path": m.group(0)}))
                    break
    return hits
