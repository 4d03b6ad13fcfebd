"""Profile counters of a chunk (extractors/profiles.py): machines, typed vocabulary, learned typos."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from extractors.profiles import chunk_counters, learned_typos
from lib.context import Context
from lib.model import Message


def _msg(i: int, text: str, cwd: str | None, kind: str = "prompt") -> Message:
    return Message(f"u{i}", "s1", None, "user", kind, "2026-01-02T09:30:00Z", text, cwd=cwd)


def test_machine_counted_once_per_message_by_home_directory() -> None:
    cwds = ["/home/ana/p", "/Users/bo/q", "/home/ana/p", "C:\\Users\\cy\\r", "/srv/app", None, "/home/ana/p"]
    msgs = [_msg(i, "x", cwd, kind="tool_result") for i, cwd in enumerate(cwds)]
    c = chunk_counters(msgs, [])
    machines = {k[1]: n for k, n in c.items() if k[0] == "machine"}
    assert machines == {"linux|ana": 3, "macos|bo": 1, "windows|cy": 1}


def test_vocabulary_keeps_mixed_case_names_and_acronyms() -> None:
    m = _msg(
        1,
        "Fix parseConfig and the JSON loader in AeroSpace; Python says McD isnt Word, KUBERNETESAPI",
        "/home/a/p",
    )
    c = chunk_counters([m], [(m, Context())])
    vocab = {k[1] for k in c if k[0] == "vocab"}
    assert vocab == {"parseConfig", "JSON", "AeroSpace"}


def test_typos_are_learned_from_the_words_the_assistant_used() -> None:
    reference = "The Dispatcher reads the dispatcher queue; the DISPATCHER restarts. Configuration too."
    assert learned_typos("the dispacher hangs, check the configuraton", reference) == [
        ("dispacher", "dispatcher"),
        ("configuraton", "configuration"),
    ]
    assert learned_typos("teh dispatcher", None) == [("teh", "the")]


def test_every_test_runner_holds_a_checked_word() -> None:
    """The word check before the runner regex never hides a runner."""
    from extractors.profiles import _TEST_WORDS, TEST_RUNNERS

    assert all(any(w in runner for w in _TEST_WORDS) for runner in TEST_RUNNERS)


COMMAND_WORDS = [
    "git",
    "commit",
    "push",
    "ssh",
    "scp",
    "rsync",
    "mosh",
    "-p",
    "22",
    "user@box",
    "box:/tmp",
    "&&",
]
COMMAND_WORDS += ["gitk", "legit", "sshd", "-i", "key", "host-1", "pull", "x.y", ";", "\n", "cd", "digit"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(COMMAND_WORDS), max_size=12).map(" ".join))
def test_word_checks_before_the_git_and_ssh_regexes_hide_nothing(target: str) -> None:
    """Every match of `_GIT_RE` holds "git" and of `_SSH` one of `_SSH_WORDS`: the checks only skip."""
    from extractors.profiles import _GIT_RE, _SSH, _SSH_WORDS

    if _GIT_RE.findall(target):
        assert "git" in target
    if _SSH.findall(target):
        assert any(w in target for w in _SSH_WORDS)


def test_learned_typos_with_the_callers_words_and_early_exit() -> None:
    """Given the prompt's words, or with no word that could be a typo, the answer is the same."""
    from extractors.profiles import _WORD

    reference = "The Dispatcher reads the dispatcher queue. Configuration too."
    for prompt in ("the dispacher hangs", "ok", "teh end", "yes yes dispacher dispacher", "don't"):
        assert learned_typos(prompt, reference, _WORD.findall(prompt)) == learned_typos(prompt, reference)
    assert learned_typos("ok teh", reference) == [("teh", "the")]
    # the early exit never hides a typo of a reference word
    assert learned_typos("the dispacher hangs", reference) == [("dispacher", "dispatcher")]
    assert learned_typos("the dispacher dispacher hangs", reference) == []  # said twice: a word, not a slip


PM_WORDS = "uv pip pipenv pnpm npm apt-get apt cargo go sudo brew choco install add run i test build".split()
PM_WORDS += ["(", ";", "&&", "|", "\n", "-r", "x.txt", "gopher"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PM_WORDS), max_size=12).map(" ".join))
def test_the_package_manager_name_check_hides_nothing(target: str) -> None:
    """Every match of `_PM_RE` holds one of `_PM_NAMES`: the check before it only skips."""
    from extractors.profiles import _PM_NAMES, _PM_RE, PACKAGE_MANAGERS

    if _PM_RE.findall(target):
        assert _PM_NAMES.search(target)
    assert all(_PM_NAMES.search(p) for p in PACKAGE_MANAGERS)


def test_vocabulary_skips_only_lower_case_words() -> None:
    """`_voice` skips a word that `str.islower` accepts: neither vocabulary test can hold for it."""
    for w in ["parse", "parseConfig", "AeroSpace", "API", "HTTPServer", "don't", "Ok", "aB", "abC'd"]:
        mixed = len(w) >= 4 and w[1:].lower() != w[1:] and w.upper() != w
        acronym = w.isupper() and 3 <= len(w) <= 12
        if w.islower():
            assert not mixed and not acronym


def _typos_brute(prompt: str, reference: str | None) -> list[tuple[str, str]]:
    """`learned_typos` the slow way: each possible typo against every reference word, no index."""
    from collections import Counter

    from extractors.profiles import _WORD, KNOWN_TYPOS, one_edit

    words = [w.lower() for w in _WORD.findall(prompt)]
    out = [(w, KNOWN_TYPOS[w]) for w in words if w in KNOWN_TYPOS]
    own = Counter(words)
    known = {r.lower() for r in _WORD.findall(reference or "") if len(r) >= 5}
    for w in own:
        if len(w) < 5 or own[w] > 1 or w in KNOWN_TYPOS or "'" in w or w in known:
            continue
        near = [r for r in known if r[0] == w[0] and abs(len(r) - len(w)) <= 1 and one_edit(w, r)]
        near = [r for r in near if not (r.startswith(w) or w.startswith(r))]
        if len(near) == 1:
            out.append((w, near[0]))
    return out


TYPO_WORDS = (
    "dispatcher dispacher Dispatcher dipsatcher configure configuer Config teh thier the build built".split()
)
TYPO_WORDS += ["parser", "praser", "PARSER", "don't", "dont", "x", ".", "\n", "K\u212aelvin", "kelvin"]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(TYPO_WORDS), max_size=10).map(" ".join),
    st.one_of(st.none(), st.lists(st.sampled_from(TYPO_WORDS), max_size=14).map(" ".join)),
)
def test_learned_typos_equals_the_brute_force(prompt: str, reference: str | None) -> None:
    assert learned_typos(prompt, reference) == _typos_brute(prompt, reference)


def _one_edit_spelled_out(a: str, b: str) -> bool:
    """`one_edit` from its definition: a neighbouring swap anywhere, a near key before the last two
    letters, or a letter dropped or doubled (the last place that works) before the last two."""
    from extractors.profiles import _NEAR

    if a == b:
        return False
    if len(a) == len(b):
        swaps = {b[:k] + b[k + 1] + b[k] + b[k + 2 :] for k in range(len(b) - 1)}
        slips = {b[:d] + c + b[d + 1 :] for d in range(len(b) - 2) for c in _NEAR.get(b[d], ())}
        return a in swaps or a in slips
    if abs(len(a) - len(b)) != 1:
        return False
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    cuts = [i for i in range(len(long_)) if long_[:i] + long_[i + 1 :] == short]
    return bool(cuts) and max(cuts) < len(long_) - 2


@settings(max_examples=500, deadline=None)
@given(st.text("eirsxz", min_size=3, max_size=7), st.text("eirsxz", min_size=3, max_size=7))
def test_one_edit_equals_its_definition(a: str, b: str) -> None:
    from extractors.profiles import one_edit

    assert one_edit(a, b) == _one_edit_spelled_out(a, b)
    assert one_edit(a, a[:2] + a[3:]) == _one_edit_spelled_out(a, a[:2] + a[3:])


_VOICE_PIECES = (
    "thanks thank you Thank You perfect great awesome excellent nice love it works now that works looks good "
    "lgtm well done exactly wrong broken still not still doesnt still doesn't failing doesn't work not working "
    "wtf ugh again? useless frustrated frustrating annoying stop please pls plz PLEASE"
).split(" ")
_VOICE_PIECES += list("x_9\u00e9\u00df\u0130\u0131\u017f\u212a'?.- \n")  # and what lower() moves or folds
_VOICE_PIECES += ["thanksgiving", "unstoppable", "plzz", "agains", "gr8", "niceness", "stop_it", "x-stop"]


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(_VOICE_PIECES), max_size=14).map("".join))
def test_voice_words_found_as_the_folded_pattern(text: str) -> None:
    """`FoldedWords.found` (the words searched without the leading `\\b`, the boundary checked at each hit)
    says what the case-insensitive pattern says, and what `Folded` said before, on any text of the words,
    their near misses and the characters that lower-casing moves or folds."""
    from extractors.folded import Folded
    from extractors.profiles import _NEGATIVE, _PLEASE, _POSITIVE

    low = text.lower()
    for words in (_POSITIVE, _NEGATIVE, _PLEASE):
        expected = words.rx.search(text) is not None
        assert words.found(text, low) == expected
        assert Folded(words.rx.pattern).found(text, low) == expected
    before = re.compile(r"\bplease\b|\bpls\b|\bplz\b", re.IGNORECASE)  # `_PLEASE` as it was written
    assert _PLEASE.found(text, low) == (before.search(text) is not None)
