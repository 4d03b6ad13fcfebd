"""Goals (X10) with a status, and the user's own progress reports.

The user's failed-attempt reports are in :mod:`extractors.attempts`.

A goal is what the work is trying to achieve: a feature, fix, set-up or investigation objective, or a
substantive deliverable. Mechanical steps (commit, push, run, show, install one thing), information
questions and requests to be told ("should X be proxied?", "explain what X does"), work given only by
reference ("work on bead spotter-4te"), steps on something just shown ("please fix these") and relayed
review remarks are not goals; "is there a way to ...", "update X to show ...", opening an ideation
("let's brainstorm ...") and a few words with an objective verb ("harden gitleaks for this repo") are.
Status signals
("that's done", "let's park this", "blocked on X", "forget about it") set ``context.status``; a
message that only moves a goal's status yields a ``goal_progress`` row instead of a new goal.
"""

from __future__ import annotations

import re

from extractors.cues import NEW_TOPIC, Cue, cues, fails, review_paste, table, weigh
from extractors.patterns import Hit, View, clip, sentence_at, squash

THRESHOLD = 1.0

_OPENER = (
    r"^(?:please |pls |(?:can|could|would) (?:you|we) (?:please )?(?:also )?|let'?s |now |"
    r"ok(?:ay)?[,.]? (?:now |so )?|so[,.]? |i need you to |go ahead and |next,? )?"
)
_GOAL = cues(
    (
        r"\bi (?:want|need|wanna) (?:to|you to|a|an|each|the|it|this|every|all|my|our)\b|"
        r"\bi (?:do|really|just|still) want (?:to|you to)\b|"
        r"\bi (?:wanted|was hoping) to (?!ask|say|know|check|see|confirm|mention|let\b)|"
        r"\bi(?:'d| would) (?:like|love) (?:to|you to|your help|a|an|the|it|for|each|every|all|my|our)\b",
        1.1,
    ),
    (
        r"\bi (?:need|want) (?:a |an )?(?:better |clear |clearer |quick |good )?(?:understanding|explanation|"
        r"overview|summary|idea|sense|answer|recommendation|comparison)\b",
        -1.0,
    ),
    (
        r"\b(?:do )?what ?ever (?:it takes|you need|is needed) to\b|\bwould it be possible to\b|\bis it possible to\b|"
        r"\bdo you think (?:it would be possible|we could|you could)\b",
        0.9,
    ),
    (
        r"\bwe (?:should|must) (?:change|make|add|implement|support|build|rework|switch|move|fix|improve)\b",
        0.8,
    ),
    (
        r"\bwe (?:need|want|have|'d like|would like) to (?!use\b)\w|\bwe(?:'re| are) (?:going to|gonna) (?:build|make|add|create)\b",
        1.1,
    ),
    (
        r"\b(?:the|my|our|main|end) goal (?:is|here|would be)\b|\bthe (?:idea|aim|objective|point) is to\b",
        1.3,
    ),
    (
        r"\b(?:i'?m|we're|i am|we are) trying to\b|\bi keep getting\b|\bhelp me (?!with (?:this|that)\b)\w+",
        1.0,
    ),
    (r"\b(?:implement|execute|follow) (?:the|this) (?:following )?plan\b|\bimplement the following\b", 1.3),
    (r"^(?:the )?(?:task|goal|objective|mission|feature request|new feature|bug|problem)\s*(?:is|:)", 1.1),
    (
        r"\blet'?s work on\b|\bi need help (?:with|to|getting)\b|\bhelp me (?:with )?(?:get|make|set|build|fix|figure)\b",
        1.0,
    ),
    # "Is there a way to ...", "do you think there's a simple way to ...", "wouldn't there be a way to ...":
    # asking how to achieve something is stating the objective.
    (
        r"\b(?<!if )(?<!whether )(?:is there|there'?s|there is|would there be|wouldn'?t (?:there )?be|"
        r"could there be) (?:a|any|some)? ?(?:\w+ )?way (?:to|of)\b",
        1.1,
    ),
    (
        r"\bmake it so (?:that )?\b|\badd support for\b|\bwrite (?:a|an|some) (?:script|tool|test|tests|function|cli|program) (?:that|to|for)\b",
        0.9,
    ),
    (r"\b(?:find|figure) out (?:why|how|what|where)\b|\binvestigate (?:why|how|what|the)\b", 0.9),
    # Opening an ideation: "let's brainstorm", "start thinking about what level 2 should look like", "I need
    # ideas of how to ...", "I wanted to strategize about ...".
    (
        r"\b(?:let'?s|lets|we should|we need to|i want to|i wanted to|i'?d like to|start) (?:\w+ )?(?:think(?:ing)?|"
        r"brainstorm(?:ing)?|strategi[sz]e|explore|discuss|rethink|come up with)\b|\b(?:i need|any|give me|some) "
        r"ideas\b|\bideas (?:for|of|on) how\b",
        1.0,
    ),
    (
        r"^(?:so,? |ok(?:ay)?,? |now,? |alright,? )?how (?:do|can|could|would|should) (?:we|i|you) (?:\w+ )?"
        r"(?:enable|make|set up|setup|get|fix|disable|add|install|configure|build|create|implement|deploy|"
        r"migrate|integrate|support|handle|troubleshoot|improve|speed|have|turn|allow|avoid|prevent|stop|"
        r"move|serve|automate|reduce|increase|optimi[sz]e)\b",
        1.0,
    ),
    # An imperative opening the prompt. Objective verbs (investigate, harden, refactor ...) name work with
    # an aim even in a few words; the others ("add ...", "generate ...") need more to be more than a step.
    (
        _OPENER
        + r"(?:implement|build|troubleshoot|investigate|debug|diagnose|figure out|find out|find a way|"
        r"refactor|migrate|harden|audit|evaluate|design|develop|research|analy[sz]e|optimi[sz]e|automate|"
        r"integrate|port|secure|lock down|set up|setup|clean up|cleanup|clean (?:it|this|everything|things) up|"
        r"redesign|modernize|scaffold|prototype|restructure|reorganize|consolidate|unify|overhaul|rework|"
        r"speed up|come up with)\b",
        1.0,
    ),
    (
        _OPENER + r"(?:create|add|make|fix|perform|generate|write|rewrite|improve|review|convert|enable|"
        r"adjust|support|document|execute|deploy|extend|replace|scrub|purge|sanitize|propose|plan|draft|simplify|"
        r"split|extract|recreate)\b",
        0.8,
    ),
    # "Update the index page to contain ...", "change the default behaviour to look up ...": a behaviour change.
    (
        _OPENER + r"(?:update|change|modify|adapt|extend|make|tweak|alter) (?:the |this |that |our |my |it )"
        r"(?:[^.?!\n]|\.(?=\w)){0,80}?\b(?:to|so (?:that )?it) (?:contain|show|include|display|support|handle|"
        r"use|look|accept|return|print|allow|ignore|skip|work|report|list|sum|aggregate|launch|open|load|save|"
        r"sort|group|filter|hide)\b",
        0.9,
    ),
    (
        r"\blet'?s (?:build|create|implement|add|make|start|fix|figure out|try to|set up|get|move|design|write)\b",
        0.9,
    ),
    (
        r"\bso (?:that )?(?:i|we|it|they|you|this|that|these|the \w+|users?|people|everyone|anyone) "
        r"(?:can|could|don'?t|won'?t|doesn'?t|(?:is|are) able)\b|\bin order to\b",
        0.4,
    ),
    # A behaviour asked for under a condition ("can we log errors when the palette can't be read?", "could
    # you collapse the panel whenever it loses focus?"): a change to what the product does.
    (
        r"\b(?:can|could|would) (?:we|you) (?:please |also |just )?(?!tell|explain|confirm|check|see|share|show me|"
        r"remind|list|describe|give|let|help)[a-z]+ [^?.!\n]{0,60}?\b(?:when|whenever|once)\b",
        0.6,
    ),
    (
        r"\b(?:new feature|feature request|bug|issue|regression|is broken|doesn'?t seem to|doesnt seem to|"
        r"isn'?t working|(?:are|is) (?:somehow |still |suddenly )?failing|keeps? failing|keep getting)\b",
        0.4,
    ),
    # A defect the operator observed in the product ("i noticed when i press start ... that shouldn't happen",
    # "we have a small bug"); "i've noticed you ..." is about the assistant (a correction cue).
    (
        r"\bi(?:'ve| have)? (?:just |also )?noticed\b(?! (?:that )?you\b)|\bshouldn'?t (?:happen|be happening)\b|"
        r"\bwe (?:have|found|hit) (?:a|an|another) (?:small |little |new |weird |strange |minor )?bug\b",
        0.7,
    ),
    (r"\b(?:comprehensive|thorough|full|end-to-end|complete|detailed)\b", 0.3),
    (
        r"\b(?:report|plan|spec|design doc|proposal|prototype|mvp|pipeline|integration|feature|tool|app|service)\b",
        0.2,
    ),
)
# "change X to look up ...": not the mechanical "change the port".
_BEHAVIOUR = re.compile(
    r"^(?:please |can you (?:please )?|could you (?:please )?|would you (?:please )?|now |so,? )?"
    r"(?:update|change|modify|adapt|extend|make|tweak|alter) (?:the |this |that |our |my |it )"
    r"(?:[^.?!\n]|\.(?=\w)){0,80}?\b(?:to|so (?:that )?it) [a-z]+"
)
_MECHANICAL = re.compile(
    r"^(?:please |can you (?:please )?|could you (?:please )?|now |ok(?:ay)?,? |then )?"
    r"(?:commit|push|pull|merge|rebase|run|rerun|re-run|show|read|list|open|print|cat|ls|check|status|sync|"
    r"install|uninstall|update|upgrade|login|log in|resume|continue|go on|proceed|stop|restart|start|kill|"
    r"end|close|exit|save|copy|move|rename|delete|remove|clear|undo|try again|retry|verify|test|tell|"
    r"explain|describe|summari[sz]e|look at|search|grep|ssh|cd|go to|switch to|give|change|enable|disable|"
    r"publish|cycle|create the|add (?:it|this|that|them)|work on|do next|do the|do it|yes|no|ok|sure)\b"
)
# "please fix these", "add these in the README", "review this proposal with X": a step on something just
# shown, not an objective.
_DEICTIC_STEP = re.compile(
    r"^(?:please |pls |(?:can|could) you (?:please )?|now |ok(?:ay)?,? )?(?:add|put|include|update|apply|use|change|"
    r"move|save|write|document|test|run|try|implement|fix|do|handle|address|solve|resolve|check|debug|investigate|"
    r"troubleshoot|look into|review|merge|revert|remove|delete|rename) (?:these|this|that|it|them|those)\b"
)
_REFERENCE_ONLY = re.compile(
    r"^(?:please )?(?:work on|implement|do|tackle|pick up|handle|continue|start|finish|close)\s+"
    r"(?:(?:bead|issue|ticket|task|story|epic|#)\s*)?[\w.]+[-#]\w+\b"  # not \s+(…)?\s*: quadratic on spaces
)
_INFO_QUESTION = re.compile(
    r"^(?:what|which|who|where|when|is|are|does|do|did|has|have|can you explain|what'?s|whats|how (?:does|is|are|much|many|long|hard|big))\b"
)
# A question asks for work when it requests a change or a way to reach something ("can we log errors
# when ...?", "how do we enable ...?", "any ideas why the uploads fail?"); any other question in a running
# exchange ("should the dns entries be proxied?", "oauth won't work for previews, right?") asks to be told.
_ASKS_WORK = re.compile(
    r"\b(?:can|could|would|will) (?:we|you)(?: please| also| just| maybe){0,2} (?!tell|explain|confirm|clarify|"
    r"check|see|share|show|remind|list|describe|summari[sz]e|give|let|help me understand)[a-z]+|"
    r"\bhow (?:do|can|could|would|should|will) (?:we|you)\b|\bway (?:to|of)\b|\bany ideas?\b|"
    r"\bwe (?:should|need|must|have to)\b|(?<!do )\bi (?:want|need|'d like|would like)\b|\blet'?s\b|\banaly[sz]e\b|"
    r"\binvestigate\b|\bfigure out\b|\bhelp me\b"
)
# Asking to be told rather than for work: "explain what X does", "give me an overview of ...", "can you
# list, in 5 bullet points, the strengths ...", "tell me if I'm wrong" (eval README: information requests
# are not goals, whether asked as a question or as an order).
_TELL_ME = Cue(
    r"\b(?:explain|describe|summari[sz]e)(?: to me| me)? (?:what|how|why|the|this|that|it|these|those|in|whether|if)\b|"
    r"\b(?:give|show) me (?:an? |the )?(?:overview|summary|rundown|breakdown|list)\b|\bcan you (?:please )?list\b|"
    r"\blist,? (?:in|the|all)\b[^.?!\n]{0,30}\b(?:points|what|which)\b|\btell me (?:what|how|why|if|whether|about)\b"
)
# Version-control chores anywhere in a short prompt ("okay lets commit these changes and push", "first
# commit the previous task, then proceed", "create a pr for phase 12"): steps, not objectives. (Not a
# command being named: "where you type git commit".)
_VCS_STEP = Cue(
    r"(?<!git )(?<!git-)\b(?:commit|push|(?:create|open|make|raise|submit) (?:a |the )?(?:pr|pull request)|merge|"
    r"rebase|pull in|branch off)\b(?!-)",
    need="commit push pr pull merge rebase branch",
)
# "I'm building / we're setting up X" frames the work when it opens a thread; later in one it narrates what
# the operator is doing at the moment ("ok i am setting up the dns entries. should they be proxied?").
_DOING = Cue(
    r"\b(?:i'?m|we're|i am|we are) (?:working on|building|developing|writing|migrating|porting|setting up)\b"
)
_SUBSTANTIVE = Cue(
    r"\b(?:so (?:that|i|we)|report|all|every|each|full|feature|plan|system|pipeline|architecture|"
    r"security|performance|hardening|history|workflow|support|integration|program|notebook|library|app|"
    r"service|api|tests?|suite|setup|infrastructure|project|repo|documentation|docs)\b"
)

_BUG = Cue(r"\b(?:error|errors|fail|fails|failing|broken|crash|crashes|crashing)\b")

_STATUS = (
    (
        "done",
        Cue(
            r"\b(?:that'?s|it'?s|this is|we're|all|everything(?:'s| is)) (?:all )?(?:done|finished|complete|"
            r"completed|shipped|merged)\b|\b(?:goal|task|feature|epic|milestone) (?:is )?(?:done|complete|achieved)\b|"
            r"\bship(?:ped)? it\b|\bwe(?:'re| are) done\b|\bmission accomplished\b"
        ),
    ),
    (
        "paused",
        Cue(
            r"\blet'?s (?:park|pause|shelve|table|defer|postpone|come back to|revisit)\b|\bpark (?:this|it|that)\b|"
            r"\bon hold\b|\bput (?:this|it|that) aside\b|\bpick (?:this|it) up (?:later|tomorrow)\b"
        ),
    ),
    (
        "blocked",
        Cue(
            r"\bblocked (?:on|by)\b|\bwaiting (?:on|for) (?:the|a|an|\w+'s)\b|\bcan'?t (?:proceed|continue|move on) "
            r"until\b|\bblocker is\b"
        ),
    ),
    (
        "abandoned",
        Cue(
            r"\bforget (?:about )?(?:it|this|that|the)\b|\bnever ?mind\b|\bscrap (?:it|this|that|the)\b|"
            r"\babandon(?:ing)? (?:it|this|that|the)\b|\bdrop (?:it|this|that|the idea)\b|\bno longer need\b|"
            r"\bgive up on\b|\bnot worth it\b"
        ),
    ),
)

_PROGRESS = cues(
    (
        r"\bi(?:'ve| have)? (?:just )?(?:edited|saved|deleted|removed|added|created|installed|updated|fixed|"
        r"merged|pushed|committed|deployed|ran|changed|set|configured|restarted|rebooted|moved|renamed|"
        r"upgraded|reverted|cleaned|enabled|disabled|applied|swapped|restored|uploaded|approved|published)\b",
        1.0,
    ),
    (
        r"\bwe(?:'ve| have)? (?:just |already )?(?:done|finished|completed|merged|shipped|deployed|released|"
        r"fixed|refactored|migrated|landed)\b",
        1.0,
    ),
    (r"\b(?:is|are) now (?:fixed|done|working|merged|live|deployed|green|passing|restored|installed)\b", 1.0),
    (r"\b(?:now )?(?:it )?works now\b|\bthat (?:worked|did it|fixed it)\b|\bit worked\b", 0.9),
    (r"\b(?:there'?s|some|good|great|making|made) progress\b|\b(?:already|is|are) done\b", 0.9),
    (r"\b(?:connection|internet|network|access|service) (?:is )?(?:back|restored|fixed)\b", 0.8),
)


_STATUS_TABLE = table(*(rx for _, rx in _STATUS))


def goal_status(low: str, tokens: frozenset[str]) -> str | None:
    found = _STATUS_TABLE.first(low, tokens)
    return _STATUS[found[0]][0] if found is not None else None


def goal_score(v: View, correction: float) -> tuple[float, int]:
    low = v.low
    tok = v.tok
    score, pos = weigh(_GOAL, low[:800], tok)
    if v.words < 3:
        score -= 1.0
    if _MECHANICAL.match(low) and not _SUBSTANTIVE.search(low[:300], tok) and not _BEHAVIOUR.match(low):
        score -= 0.9
    if _REFERENCE_ONLY.match(low) and v.words <= 25:
        score -= 2.0
    if v.words <= 20 and _DEICTIC_STEP.match(low):
        score -= 0.9
    if v.question and _INFO_QUESTION.match(low) and score < 1.0:
        score -= 0.6
    elif v.question and v.prev and not _ASKS_WORK.search(low[:600]):
        score -= 1.0
    if _TELL_ME.search(low[:600], tok):
        score -= 1.0
    if v.prev and NEW_TOPIC.search(low[:150], tok):
        score += 0.6
    if v.words <= 40 and _VCS_STEP.search(low[:300], tok):
        score -= 0.8
    if review_paste(low[:400]):
        score -= 1.0  # pasted or relayed review remarks correct the work under review; they set no objective
    if v.words >= 15:
        # Substantive requests take some words; "add an icon" is a tweak, not an objective.
        score += 0.2 if v.words < 40 else 0.3
    if not v.prev:
        # The first prompt of a thread usually states what the session is for.
        score += 0.4
        if _DOING.search(low[:800], tok):
            score += 1.0
        if fails(low[:400], tok) or _BUG.search(low[:200], tok):
            score += 0.6
    if correction >= 1.0:
        # (Lightly: a correction can set new work too, and the model reads the correction evidence itself.)
        score -= 0.2
    return score, pos


def extract_goal(v: View, correction: float, floor: float = THRESHOLD) -> list[Hit]:
    """A goal when the evidence reaches ``floor``; a status-only message yields ``goal_progress``."""
    low = v.low
    if not low:
        return []
    status = goal_status(low[:600], v.tok)
    score, pos = goal_score(v, correction)
    hits: list[Hit] = []
    if score >= floor:
        content = sentence_at(v.prose, pos) if pos > 0 else clip(v.prose, 300)
        if len(content) < 20:
            content = clip(v.prose, 300)
        hits.append(
            Hit("goal", content, squash(score - THRESHOLD + 0.8), {"status": status or "active"}, score)
        )
    if score < THRESHOLD and status and v.words <= 60:
        hits.append(Hit("goal_progress", clip(v.prose, 240), 0.6, {"status": status}))
    return hits


def extract_user_progress(v: View, floor: float = THRESHOLD) -> list[Hit]:
    score, pos = weigh(_PROGRESS, v.low[:600], v.tok)
    if v.question:
        score -= 2.0  # asking is not reporting
    if score < floor:
        return []
    return [Hit("progress", sentence_at(v.prose, max(pos, 0)), squash(score), {"by": "user"}, score)]
