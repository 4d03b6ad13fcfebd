"""Durable preferences and facts about the user (X5, X16).

``implicit_preference``: how the user likes things done, not phrased as a rule ("I'd rather use
computer-use tools than Playwright", "I only want one version, preferably brew", "keep it dependency
free"). ``domain_fact``: facts about their machines, tools, paths and conventions ("M-Claude is in the
Documents folder", "legion is this device", "I host on Vercel", "slate is the router").
"""

from __future__ import annotations

import re

from extractors.cues import Cue, table
from extractors.patterns import Hit, View, clip, sentence_at

_PREFERENCE = table(
    Cue(
        r"\bi(?:'d| would) (?:prefer|rather|much rather)\b|"
        r"\bi (?:prefer|like to|love to|hate|dislike|don'?t like|"
        r"only want|want only|always use|usually use|tend to use|never use|like using|like my|like it when|"
        r"like the way)\b"
    ),
    Cue(r"\bpreferabl(?:y|e)\b|\bmy (?:preference|preferred|favou?rite|go-to)\b|\bi'?m a fan of\b"),
    # Said of things in general: "off the shelf tools are always preferred", "keep this as serverless as
    # possible".
    Cue(r"\b(?:is|are) (?:always |generally |usually |strongly )?preferred\b"),
    Cue(r"\bkeep(?:ing)? (?:it|things|this|them|everything) as [\"']?\w+[\"']? as possible\b"),
    Cue(r"\bi'?m (?:more )?(?:comfortable|used to|familiar|happier) with\b"),
    Cue(
        r"\bkeep(?:ing)? (?:it|things|this|them|the \w+) (?:simple|minimal|small|lean|dependency[- ]free|"
        r"compilation[- ]free|the same|short|readable|plain)\b"
    ),
    Cue(r"\b(?:dependency|compilation|build|framework)[- ]free\b|\bno (?:external )?dependencies\b"),
    Cue(r"\bi don'?t want to (?:assume|depend|rely|use|add|install|have)\b"),
    Cue(
        r"\b(?:i|we) (?:like|love|hate|dislike) (?:it )?when\b|\bi (?:(?:really|very much|actually|absolutely|"
        r"quite|kind of|do|don'?t|dont|do not|also|much) ){0,3}(?:like|love|hate|dislike|enjoy)(?: much)? "
        r"(?:the|this|that|these|those|using|having|how|it|working|my|our)\b"
    ),
    # "I dont want unlock to be only a password": how things should be, said as a wish.
    Cue(
        r"\bi (?:don'?t|dont|do not) want (?!you\b|to\b)(?:\w+ ){1,3}to (?:be|use|have|require|need|depend|rely)\b"
    ),
    Cue(r"\b(?:in|use) british english\b|\b(?:use|prefer) (?:tabs|spaces|single quotes|double quotes)\b"),
    # A naming scheme ("name it aie[xxx] with [xxx] being the python version", "prefix them with punt-"),
    # not the name of one thing ("just call it Claude Tmux": a one-off instruction).
    Cue(
        r"\b(?:call|name) (?:it|them|this|these|each|every \w+) [\"'`]?[\w.-]*(?:\[|\{|<)|"
        r"\b(?:prefix|suffix) (?:it|them|each|every \w+|all \w+) with\b|\bnaming (?:convention|scheme)\b"
    ),
    Cue(r"\b(?:literal|exact|hard-?coded) expected (?:strings?|values?|output)\b|\bbranch prefix\b"),
)
_FACT = table(
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
        r"\b(?:this|it)(?: is|'s) (?:a|an|my|our) (?:\w+ ){0,2}(?:term|terminal|machine|laptop|server|router|repo|"
        r"monorepo|worktree|container|vm|mac|pc|cluster)\b"
    ),
    Cue(r"\b(?:we|i) (?:host|deploy|run|build|develop|work) (?:it |this |everything )?(?:on|with|in) [a-z]"),
    Cue(
        r"\b(?:i'?m|i am|we're|we are) on (?:a |an |my )?(?:mac|macos|windows|linux|ubuntu|debian|arch|fedora|wsl|m1|m2|m3|m4)\b"
    ),
    Cue(
        r"\bmy (?:username|user name|email|github|handle|machine|laptop|desktop|server|router|home dir|shell|editor|terminal|os) is\b"
    ),
    Cue(
        r"\b(?:is|are) (?:hosted|deployed|running|installed) (?:on|at|in|via)\b"
        r"(?! (?:the )?(?:current|latest|old|older|new|newer|same|wrong|main) | (?:https?://)?(?:localhost|127\.|0\.0\.0\.0|"
        r"port\b))|\b(?:it|this|that|everything|(?:my|our|the) [\w.-]+) (?:runs|lives) on\b"
    ),
    # A host glossed with its role or identity: "book(this machine)", "slate(router)", "zimaboard (proxmox)".
    # (Both branches open with "(", so the search skips ahead to each parenthesis.)
    Cue(
        r"\((?:this|my|our|the) (?:machine|device|laptop|computer|mac|pc|server|box|host)\)|"
        r"\((?:router|server|nas|laptop|desktop|workstation|hypervisor|proxmox|vm|gateway|"
        r"firewall|dns|raspberry pi|pi)\)",
        need="this my our the router server nas laptop desktop workstation hypervisor proxmox vm gateway firewall "
        "dns raspberry pi",
    ),
    # Where something was put: "I cloned it to /Users/me/x", "it's at https://github.com/...".
    Cue(
        r"\b(?:(?:it'?s|it is|is|are|lives|located) (?:at|in|under)|(?:cloned|saved|installed|moved) (?:it )?"
        r"(?:to|into|in|at)) (?:~?/|https?://|git@|[a-z]:\\)",
        need="it its is are lives located cloned saved installed moved",
    ),
    Cue(
        r"\b(?:is|are) (?:the|my|our) (?:router|server|nas|laptop|desktop|workstation|dev box|build machine|gateway|vpn)\b"
    ),
    Cue(
        r"\bi (?:have|use|run|am on|'m on|am using|'m using) (?:both |a |an |my )?[\w.+-]+ (?:and|installed|on|as|for)\b"
    ),
    Cue(
        r"\b(?:are|is) (?:separate|seperate|different|distinct) (?:clients|machines|hosts|devices|repos|projects|"
        r"accounts)\b"
    ),
    Cue(
        r"\bour (?:repo|server|router|machine|domain|branch|cluster|db|database|stack|ci|registry|vpn) (?:is|uses|runs)\b"
    ),
    Cue(
        r"\bwe(?:'re| are) (?:on|using|in) (?:a |an )?(?:worktree|monorepo|\w+ \d|macos|linux|windows|wsl)\b"
    ),
    Cue(r"\b(?:i have|we have) `?[\w.()-]+`? in\b"),
    # Where something is kept: "which is located at my home folder", "the dashboard is deployed here:
    # https://...", "you can learn about the cli here: Documents/work/cli".
    Cue(
        r"\b(?:located|stored|kept|saved|lives) (?:at|in|under) (?:my|our|the) (?:\w+ )?(?:folder|directory|dir|"
        r"drive|machine|server|repo)\b"
    ),
    Cue(
        r"\b(?:(?:is|are) (?:deployed|hosted|running|served|located|installed) here|here)\s?:\s?"
        r"(?:https?://|~/|/(?:users|home)/|(?:documents|desktop|downloads)/)",
        need="here",
    ),
    # An identifier given as a value: "the client id is 1645...", "my username is jdoe42".
    Cue(
        r"\b(?:the|my|our) (?:[\w-]+ )?(?:id|username|user name|email|account|hostname|host|domain|address|ip|"
        r"endpoint|port|region|bucket) is [\w.@:/-]*\d[\w.@:/-]*"
    ),
)
# A bare path given as an answer ("1. /Users/me/Documents/M-Claude") is where something lives; inside a
# long request it is only context for that request.
_PATHS = table(
    Cue(
        r"/(?:users|home|applications|volumes|opt|srv|mnt)/[\w./\\\[\]-]+",
        need="users home applications volumes opt srv mnt",
    ),
    Cue(r"~/[\w./-]+"),
    Cue(r"\b(?:documents|desktop|downloads)/[\w.-]+", need="documents desktop downloads"),
    Cue(r"\b\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\b"),
    Cue(r"\b[a-z]:\\\\[\w.\\-]+", need="c d e f g h"),
)
# "I like this", "I don't like the idea of ...", "ew I hate all of those": a verdict on the thing at hand
# (mostly the assistant's last output), an approval or a correction rather than a durable taste. A generic
# object is a taste ("I don't like emdashes", "I like using X", "I like it when ..."), and so is a verdict
# backed by the user's own experience with the thing ("I used it already in another project").
_REACTION = re.compile(
    r"\b(?:like|love|hate|dislike|enjoy)(?: (?:much|very much|at all))? "
    r"(?:this|that|these|those|how|the|all|what|your|some|any|it\b(?! when))"
)
_EXPERIENCE = re.compile(
    r"\bi (?:\w+ )?(?:used|tried|struggled with|worked with)\b[^.?!\n]{0,12}\b(?:it|this|that|them)\b|"
    r"\bin my experience\b|\bi(?:'ve| have)? had (?:good|bad|great|mixed|no) (?:luck|experiences?|results?)\b"
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
    for _, m in _PREFERENCE.matches(scan, v.tok):
        if _REACTION.search(scan, m.start(), m.end() + 16) and not _EXPERIENCE.search(scan):
            continue
        hits.append(Hit("implicit_preference", sentence_at(v.prose, m.start()), 0.6, {}))
        break
    for _, m in _FACT.matches(scan, v.tok):
        sentence = sentence_at(v.prose, m.start())
        if _QUESTION_ONLY.match(sentence.lower()):
            continue
        hits.append(Hit("domain_fact", clip(sentence, 240), 0.55, {}))
        break
    else:
        if v.words <= 20:
            path = _PATHS.first(scan, v.tok)
            if path is not None:
                hits.append(Hit("domain_fact", clip(v.prose, 240), 0.5, {"path": path[1].group(0)}))
    return hits
