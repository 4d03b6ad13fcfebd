"""Every regular expression of the product against adversarial input, under a time bound (issue 10 #16).

Queries, prompts, MCP arguments and transcript text are user input. A pattern that backtracks
quadratically (a 100 k-capital topic once took 47 s in `index/store/fts_query.py`) pins a CPU, stalls a hook
or an index run. The sweep finds every pattern: module-level compiled patterns (through the modules'
globals, so patterns built by concatenation count too) and literal patterns passed to `re.*` inside
functions (through the source). Each runs over long runs of one character class, alternations of two
classes and repetitions of its own literal words. A pattern is first tried on a short input; when that
costs more than a linear pattern could afford, it is run at full size and must finish in `BOUND` s.
The surfaces that take user text (the FTS sanitiser, the prompt policy, the escalation detector, the
summary extractor, the scrubber) are then run whole on 200 k-char inputs."""

from __future__ import annotations

import ast
import importlib
import re
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("lib", "extractors", "index", "detector", "hooks", "mcp_server", "total_recall", "vec")
BIG = 100_000  # characters per adversarial input
SMALL = 4_000  # the probe size: a quadratic pattern already costs milliseconds here
PROBE = 0.001  # s at SMALL; a quadratic pattern costs more, a linear one this cheap stays far under BOUND
BOUND = 0.5  # CPU s per pattern and input at BIG ("well below a second")
ESCALATE = 3  # probes per pattern run at BIG: the costliest three, and at once any that cost 10 × PROBE
HARD = 1.0  # CPU s: the alarm that stops a runaway pattern instead of hanging the suite
# Patterns that the product only ever runs anchored at one position (`match`/`fullmatch` on a short
# value or at a located offset), so a scan from every position is not how they can be made to run;
# they are checked the way they are used. Anything else that is slow must be fixed, not listed here.
ANCHORED = {
    "extractors.secret_patterns.JWT": "match",  # scrubber: at an `eyJ` the candidate scan found
    "extractors.secret_patterns.URL_USERINFO": "match",  # scrubber: right after a `://`, bounded {0,128}
    "extractors.secret_patterns.PATH_RE": "fullmatch",  # on one key=value value
    "extractors.secret_patterns.DOTTED_RE": "fullmatch",  # on one key=value value
    "extractors.secret_patterns.PLACEHOLDER_RE": "fullmatch",  # on one key=value value
    "extractors.secret_patterns.PEM_BODY": "match",  # after a -----BEGIN header
}

_FLAGS = {name: flag for name, flag in re.RegexFlag.__members__.items()}


def _walk(value: Any, where: str, out: dict[str, tuple[str, re.Pattern[str]]], depth: int = 0) -> None:
    if isinstance(value, re.Pattern):
        if isinstance(value.pattern, str):
            out.setdefault(value.pattern, (where, value))
    elif depth < 3 and isinstance(value, (tuple, list, set, frozenset)):
        for v in value:
            _walk(v, where, out, depth + 1)
    elif depth < 3 and isinstance(value, dict):
        for v in value.values():
            _walk(v, where, out, depth + 1)


def _flags_of(call: ast.Call) -> int:
    flags = 0
    for node in [*call.args[1:], *(k.value for k in call.keywords)]:
        for sub in ast.walk(node):
            if (
                isinstance(sub, ast.Attribute)
                and isinstance(sub.value, ast.Name)
                and sub.value.id == "re"
                and sub.attr in _FLAGS
            ):
                flags |= _FLAGS[sub.attr]
    return flags


def collect() -> dict[str, tuple[str, re.Pattern[str]]]:
    """pattern text -> (where it lives, compiled pattern), for every module of the product."""
    found: dict[str, tuple[str, re.Pattern[str]]] = {}
    files = [f for pkg in PACKAGES for f in sorted((ROOT / pkg).rglob("*.py")) if f.stem != "__main__"]
    for f in files:
        name = ".".join(f.relative_to(ROOT).with_suffix("").parts)
        for attr, value in vars(importlib.import_module(name)).items():
            _walk(value, f"{name}.{attr}", found)
    for f in files:  # literal patterns used inline: re.search(r"…", text), re.sub(r"…", …)
        name = ".".join(f.relative_to(ROOT).with_suffix("").parts)
        for node in ast.walk(ast.parse(f.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "re"
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
                and node.args[0].value not in found
            ):
                found[node.args[0].value] = (
                    f"{name}:{node.lineno}",
                    re.compile(node.args[0].value, _flags_of(node)),
                )
    return found


SINGLES = list("aA0 \n\t_-./\\:\"'<>[](){}*=#@!,;`~|$%?+&^é你\x1b\u00a0")
AFTER = list("aA0 \n\t-._/*")  # runs tried after each of the pattern's own literals
PAIRS = [
    "aA",
    "Aa",
    "a ",
    "a.",
    "a_",
    "a-",
    "a/",
    "A1",
    "a1",
    "a\n",
    " \n",
    "a:",
    "<a",
    "[a",
    "a]",
    "a>",
    "a'",
    "x=",
    "a@",
    "a,",
    "1.",
    "a\\",
    ". ",
    "-a",
    "A_",
    "A-",
    "a\t",
    "\n\n-",
]
WORDS = [
    "word ",
    "Word ",
    "WORD ",
    "a-b_c.d/e ",
    "parseConfig ",
    "key=value ",
    "<a b=c ",
    "http://a.b/",
    "1. x\n",
]
ENDS = ("!", "a")  # a final character that makes a match fail (one is punctuation, one a letter)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v"}


def _fill(seed: str, n: int) -> str:
    return (seed * (n // len(seed) + 1))[:n]


def _literals(pattern: str) -> list[str]:
    """The pattern's own literal characters (a newline for `\\n`, `.` for `\\.`, `:` …) and words."""
    chars: set[str] = set()
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            if nxt in _ESCAPES or not nxt.isalnum():
                chars.add(_ESCAPES.get(nxt, nxt))
            i += 2
            continue
        if not c.isalnum():
            chars.add(c)
        i += 1
    words = list(dict.fromkeys(re.findall(r"(?<!\\)[A-Za-z][A-Za-z' ]{2,}", pattern)))[:8]
    return sorted(chars) + words


Make = Callable[[int], str]  # length -> adversarial text of that length


def _inputs(pattern: str) -> Iterator[tuple[str, Make]]:
    """(label, maker): every character class as a run (alone, and with a final character that may make
    a match fail), runs after each of the pattern's own literals, pairs of classes and words repeated,
    and the pattern's words repeated."""

    def run(head: str, c: str, end: str = "") -> Make:
        return lambda n: head + c * (n - len(head) - len(end)) + end

    for c in SINGLES:
        yield f"{c!r}*n", run("", c)
        for end in ENDS:
            yield f"{c!r}*n+{end!r}", run("", c, end)
    for lit in _literals(pattern):
        for c in AFTER:
            yield f"{lit!r}+{c!r}*n", run(lit, c)
            for end in ENDS:
                yield f"{lit!r}+{c!r}*n+{end!r}", run(lit, c, end)
        if len(lit) > 1:
            yield f"{lit!r} repeated", lambda n, lit=lit: _fill(lit, n)
            yield f"{lit + ' '!r} repeated", lambda n, lit=lit: _fill(lit + " ", n)
    for seed in [*PAIRS, *WORDS]:
        yield f"{seed!r} repeated", lambda n, seed=seed: _fill(seed, n)


def _timed(fn: Callable[[str], Any], text: str) -> float:
    """CPU seconds `fn(text)` took (the work, not how busy the shared machine is); HARD + 1 when the
    CPU-time alarm had to stop it."""

    def stop(*_: Any) -> None:
        raise TimeoutError

    old = signal.signal(signal.SIGVTALRM, stop)
    start = time.process_time()
    signal.setitimer(signal.ITIMER_VIRTUAL, HARD)
    try:
        fn(text)
        return time.process_time() - start
    except TimeoutError:
        return HARD + 1
    finally:
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)
        signal.signal(signal.SIGVTALRM, old)


def _runner(rx: re.Pattern[str], how: str) -> Callable[[str], Any]:
    if how == "match":
        return rx.match
    if how == "fullmatch":
        return rx.fullmatch
    return lambda s: sum(1 for _ in rx.finditer(s))


def _slow_input(pattern: str, run: Callable[[str], Any]) -> str | None:
    """`input: seconds` of the first input on which `run` exceeds BOUND at full size, else None."""

    def at_full_size(label: str, make: Make) -> str | None:
        took = _timed(run, make(BIG))
        return f"{label} (n={BIG}): {took:.2f}s" if took > BOUND else None

    probed: list[tuple[float, str, Make]] = []
    for label, make in _inputs(pattern):
        took = _timed(run, make(SMALL))
        if took >= 10 * PROBE:
            if found := at_full_size(label, make):
                return found
        elif took >= PROBE:
            probed.append((took, label, make))
    # the costliest probes at full size: a quadratic input is the costliest by far already
    probed.sort(key=lambda p: -p[0])
    return next((f for _, label, make in probed[:ESCALATE] if (f := at_full_size(label, make))), None)


def slow_patterns(patterns: dict[str, tuple[str, re.Pattern[str]]]) -> list[str]:
    """`where /pattern/ on input: seconds` for each pattern that exceeds BOUND on some input."""
    slow = []
    for text, (where, rx) in patterns.items():
        if found := _slow_input(text, _runner(rx, ANCHORED.get(where, "search"))):
            slow.append(f"{where} /{text[:60]}/ on {found}")
    return slow


@pytest.fixture(scope="module")
def patterns() -> dict[str, tuple[str, re.Pattern[str]]]:
    return collect()


def test_the_sweep_finds_every_kind_of_pattern(patterns: dict[str, tuple[str, re.Pattern[str]]]) -> None:
    where = {w for w, _ in patterns.values()}
    assert len(patterns) > 150
    # module-level, in a tuple of rules, and inline in a function body
    assert {
        "index.store.fts_query._CAMEL",
        "detector.policy.IDENT",
        "extractors.secret_patterns.SCAN",
        "extractors.corrections._REJECTED_IN_PROMPT",
    } <= where
    assert any(
        w.startswith("index.store.fts_query:") for w in where
    )  # re.split(r"[_-]+", word) in _name_parts
    assert set(ANCHORED) <= where  # no stale exemption


def test_the_sweep_catches_a_quadratic_pattern() -> None:
    bad = {r"[A-Z]{2,}[a-z]": ("example.BAD", re.compile(r"[A-Z]{2,}[a-z]"))}  # the old _CAMEL
    found = slow_patterns(bad)
    assert len(found) == 1 and found[0].startswith("example.BAD")


def test_every_pattern_is_linear_on_adversarial_input(
    patterns: dict[str, tuple[str, re.Pattern[str]]],
) -> None:
    assert slow_patterns(patterns) == []


# --- whole surfaces on 200 k characters ------------------------------------------------------------------
HUGE = 200_000
SURFACE_SEEDS = [
    "A",
    "a",
    " ",
    "\n",
    "aA",
    "a-",
    "a_",
    "a.",
    "a/",
    "a ",
    "eyJ",
    "[",
    "Word ",
    "next ",
    "\n1. ",
    "**Pending Tasks**:\n",
    "key=value ",
    "-----BEGIN ",
    "http://u:p@",
    "`x`",
    "ERR_",
    "aB1_",
]


def _surfaces() -> list[tuple[str, Callable[[str], Any]]]:
    from detector.escalation import Signals, assess
    from detector.policy import PolicyState, decide
    from extractors.model import Utterance
    from extractors.pipeline import extract
    from extractors.scrubber import scrub_text
    from extractors.summaries import extract_summary
    from index.store.fts_query import parse

    return [
        ("fts_query.parse", parse),
        ("policy.decide", lambda s: decide(s, PolicyState(), now=0.0)),
        ("escalation.assess", lambda s: assess(s, Signals(bans=["never force push"]), draft=s)),
        ("pipeline.extract user", lambda s: extract(Utterance("u", "s", "user", s, prev_assistant_text=s))),
        (
            "pipeline.extract assistant",
            lambda s: extract(Utterance("u", "s", "assistant", s, prev_user_text=s)),
        ),
        (
            "summaries away",
            lambda s: extract_summary("away_summary", s, uuid="u", session_id="s", ts=None, cwd=None),
        ),
        (
            "summaries compact",
            lambda s: extract_summary("compact_summary", s, uuid="u", session_id="s", ts=None, cwd=None),
        ),
        ("scrubber", scrub_text),
    ]


@pytest.mark.parametrize("name", [n for n, _ in _surfaces()])
def test_surfaces_stay_fast_on_huge_input(name: str) -> None:
    fn = dict(_surfaces())[name]
    slow = [(seed, t) for seed in SURFACE_SEEDS if (t := _timed(fn, _fill(seed, HUGE))) > 2 * BOUND]
    assert slow == [], name


def test_a_huge_query_is_cut_to_the_named_cap() -> None:
    from index.store.fts_query import MAX_QUERY_CHARS, bounded, parse

    topic = "A" * 100_000
    assert _timed(parse, topic) < BOUND
    assert len(bounded(topic)) == MAX_QUERY_CHARS
    words = " ".join(f"w{i}" for i in range(50_000))
    q = parse(words)
    assert 0 < len(q.terms) <= MAX_QUERY_CHARS // 2 and len(bounded(words)) <= MAX_QUERY_CHARS
    assert bounded(words).endswith(("0", "1", "2", "3", "4", "5", "6", "7", "8", "9"))  # cut between words
    assert parse("parseConfig").exact == ["parseConfig"]  # the linear _CAMEL still sees camelCase
    assert parse("HTTPServer").exact == ["HTTPServer"] and parse("HTTP").exact == []
