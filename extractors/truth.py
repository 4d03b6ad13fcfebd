"""Truth rhetoric (X11): how the assistant vouches for what it says.

Seven categories, one row per category found in a message (content = the sentence that shows it):

* ``certainty_claim``   - "definitely", "guaranteed", "99% chance it just works", "I'm confident"
* ``verification_claim``- "I verified", "tested and confirmed", "all tests pass", "double-checked"
* ``completion_claim``  - "production-ready", "fully implemented", "everything works", "ready to merge"
* ``apology``           - "sorry", "I apologise", "my mistake"
* ``agreement``         - "you're absolutely right", "great question", "good catch"
* ``hedge``             - "should now work", "probably", "might", "I think", "likely"
* ``blame_shift``       - "known issue with X", "this is a bug in X", "flaky", "the environment"

These feed ``get_past_truth_assertions`` and the escalation detector: a completion claim followed by
a user correction is the pattern worth remembering.
"""

from __future__ import annotations

from extractors.cues import Cue, table
from extractors.patterns import Hit, View, sentence_at

CATEGORIES: tuple[str, ...] = (
    "certainty_claim",
    "verification_claim",
    "completion_claim",
    "apology",
    "agreement",
    "hedge",
    "blame_shift",
)

_RULES: tuple[tuple[str, Cue, float], ...] = (
    (
        "certainty_claim",
        Cue(
            r"\b(?:definitely|certainly|guaranteed|undoubtedly|without (?:a )?doubt|"
            r"i'?m (?:confident|certain|sure)|absolutely (?:sure|certain)|no doubt|will (?:definitely|always) work|"
            r"this (?:will|is going to) (?:fix|solve|work)|nothing slips through)\b",
        ),
        0.6,
    ),
    (
        "certainty_claim",
        Cue(
            r"\b(?:100|9[0-9])% (?:chance|sure|certain|confident)\b", need="100 90 91 92 93 94 95 96 97 98 99"
        ),
        0.6,
    ),
    (
        "verification_claim",
        Cue(
            r"\b(?:i(?:'ve| have)? (?:verified|confirmed|tested|double-checked|checked that)|verified (?:that|quality|"
            r"it|the)|tested and (?:verified|confirmed|working)|all (?:\d+ )?(?:tests|checks) (?:now )?pass(?:ed|ing)?|"
            r"confirmed (?:working|that)|(?:tests?|checks?|build) (?:now )?pass(?:es)? (?:cleanly|locally)?)\b",
            need="verified confirmed tested double checked | tests checks test check build & pass passed passing passes",
        ),
        0.6,
    ),
    (
        "completion_claim",
        Cue(
            r"\b(?:production[- ]ready|fully (?:implemented|functional|working|configured|complete)|everything "
            r"(?:works|is working|is done|is complete)|ready (?:for|to) (?:merge|ship|production|deploy|use)|"
            r"(?:is|are) (?:now )?complete\b|all (?:done|set|fixed|issues (?:resolved|fixed))|completely "
            r"(?:implemented|fixed|resolved|removed)|works perfectly|fully resolved)",
            need="production | fully | everything | ready & merge ship production deploy use | complete | "
            "done set fixed resolved | completely | perfectly",
        ),
        0.6,
    ),
    (
        "apology",
        Cue(r"\b(?:sorry|i apologi[sz]e|apologies|my (?:mistake|bad|fault)|i was wrong)\b"),
        0.7,
    ),
    (
        "agreement",
        Cue(
            r"^\W{0,4}(?:you'?re (?:absolutely |totally |completely |exactly |so )?right|great (?:question|idea|"
            r"point|catch|observation)|good (?:catch|point|idea|call|question)|excellent (?:point|question|idea)|"
            r"exactly[!.]|absolutely[!.]|that'?s a (?:great|good|fair) point)"
        ),
        0.6,
    ),
    (
        "hedge",
        Cue(
            r"\b(?:should (?:now )?(?:work|fix|be (?:fixed|working|resolved))|probably|likely|might (?:be|work|"
            r"need)|may (?:be|need)|i (?:think|believe|suspect)|it seems|appears to|in theory|hopefully|"
            r"presumably|possibly)\b"
        ),
        0.45,
    ),
    (
        "blame_shift",
        Cue(
            r"\b(?:(?:a |this is a )?known (?:issue|bug|limitation)|(?:this|that) is a bug in|bug in (?:the )?\w+|"
            r"flaky|(?:an? )?environment(?:al)? (?:issue|problem)|on (?:their|its|github'?s|the server'?s) "
            r"(?:end|side)|not (?:my|our) (?:code|fault|change)|pre-?existing (?:issue|error|failure|problem)s?|"
            r"unrelated to (?:my|our|these|this) changes?|was already (?:broken|failing)|upstream (?:issue|bug))\b"
        ),
        0.6,
    ),
)


_TABLE = table(*(rx for _, rx, _ in _RULES))


def extract_truth(v: View) -> list[Hit]:
    low = v.low
    if not low:
        return []
    scan = low[:1500]
    hits: list[Hit] = []
    seen: set[str] = set()
    for i, m in _TABLE.matches(scan, v.tok):
        category, _, score = _RULES[i]
        if category in seen:
            continue
        seen.add(category)
        ctx: dict[str, object] = {"category": category, "cue": m.group(0)}
        hits.append(Hit("truth_rhetoric", sentence_at(v.prose, m.start()), score, ctx))
    return hits
