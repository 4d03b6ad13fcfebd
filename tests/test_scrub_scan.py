"""The scrubber's scan, second speed pass (branch wt-scrub2): the same candidates for fewer instructions.

Two changes, both in how candidates are found (the handlers that judge them are unchanged):

- the `:` and `=` key/value guards open with one three-character lookbehind (`_KV_NEAR`) that each of
  their forms implies, so most separators in text fail one lookbehind instead of three or four;
- texts over `SHORT` characters are scanned one pass per anchor char they hold (`_anchor_matches`)
  instead of by `SCAN`'s character-set loop (below 2,048 characters; all eight passes above).

The reference is the scan as it was on main: the key/value guard is copied here as it was
(`_old_kv_guard`), the anchor patterns are rebuilt with it, and `old_candidates` finds candidates the
way main did. `scrub_text` with `old_candidates` patched in is main's `scrub_text`: every other line
it runs is unchanged. (`bench`: the corpora's every string was compared with main's module as well.)
"""

from __future__ import annotations

import re
from unittest import mock

from fixtures.secrets import KEYED, PREFIXED, RNG, jwt, pem
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from extractors import scrubber
from extractors import secret_patterns as sp

# --- the reference: main's scan ----------------------------------------------------------------------


def _old_kv_guard(sep: str) -> str:
    """`secret_patterns._kv_guard` as it was before the near check (copied, the reference)."""
    ends = sorted({w[-2:] for w in sp._KV_WORDS})
    cls = "[" + "".join(sorted({c for e in ends for c in e + e.upper()})) + "]"
    lasts = "[" + "".join(sorted({e[1] for e in ends} | {e[1].upper() for e in ends})) + "]"
    pairs = "|".join(e for x in ends for e in (x, x.upper()))
    by_len: dict[int, list[str]] = {}
    for w in sp._KV_WORDS:
        by_len.setdefault(len(w), []).extend(sp._variants(w))
    forms = []
    for tail in sp._KV_TAILS[sep]:
        t = tail + re.escape(sep)
        words = "|".join(f"(?<=(?:{'|'.join(vs)}){t})" for vs in by_len.values())
        forms.append(f"(?<={cls}{lasts}{t})(?<=(?:{pairs}){t})(?:{words})")
    return "(?:" + "|".join(forms) + ")" + sp._KV_VALUE_AHEAD


def _old_patterns() -> dict[str, str]:
    by_anchor: dict[str, list[str]] = {}
    for rule in sp.TOKEN_RULES:
        by_anchor.setdefault(rule.anchor, []).append(f"{rule.guard}(?P<{rule.name}>)")
    for name, anchor, guard in sp.SPECIAL_RULES:
        if name in ("kvcolon", "kveq"):
            guard = _old_kv_guard(anchor)
        by_anchor.setdefault(anchor, []).append(f"{guard}(?P<{name}>)")
    return {
        a: f"{re.escape(a)}{sp._PRE_GUARDS.get(a, '')}(?:{'|'.join(alts)})" for a, alts in by_anchor.items()
    }


OLD_PATTERNS = _old_patterns()
OLD_SCAN = re.compile("|".join(OLD_PATTERNS.values()))
OLD_PASSES = tuple(re.compile(p) for p in OLD_PATTERNS.values())
OLD_LONG_TEXT = 2048


def old_candidates(text: str) -> list[re.Match[str]]:
    """Main's `_candidates`: SCAN below 2,048 characters, every per-anchor pass above, sorted."""
    if len(text) < OLD_LONG_TEXT:
        return list(OLD_SCAN.finditer(text))
    found = [m for rx in OLD_PASSES for m in rx.finditer(text)]
    found.sort(key=lambda m: m.start())
    return found


def old_scrub_text(text: str) -> str:
    scrubber.clear_caches()
    with (
        mock.patch.object(scrubber, "_candidates", old_candidates),
        mock.patch.object(scrubber, "_anchor_matches", old_candidates),
    ):
        return scrubber.scrub_text(text)


def sig(matches: object) -> list[tuple[int, int, str | None]]:
    return [(m.start(), m.end(), m.lastgroup) for m in matches]  # type: ignore[attr-defined]


# --- adversarial texts ---------------------------------------------------------------------------------

# What may follow a key word: every tail of `_KV_TAILS` before each separator, and some that are not.
SEPS = tuple(
    q + t + s
    for q in ("", '"', "'", '\\"')
    for t in ("", " ", "  ", ":", " :")
    for s in ("=", ":", "=>", "==", "::", '="', "='", ": ", " = ")
)
CASES = (str.lower, str.upper, str.capitalize, str.swapcase, str.title)
WORDS = sp._KV_WORDS + ("bypass", "keyboard", "monkey", "tokenizer", "pad_token", "sig", "Sig", "sk", "SK")
PREFIXES = ("", "x", "_", "-", ".", "$", "DB_", "api_", "client-", "my.", "Xx", "\\", '"', "'", " ")


def _secret_pieces() -> list[str]:
    """One of each format. The fixtures share one seeded generator: its state is put back afterwards,
    so the other scrubber tests draw the same values whether or not this module was imported."""
    state = RNG.getstate()
    try:
        return _pieces()
    finally:
        RNG.setstate(state)


def _pieces() -> list[str]:
    out = [make() for make, _ in PREFIXED.values()]
    out += [f"{key}={make()}" for make, key, _ in KEYED.values()]
    out += [
        jwt(),
        pem(),
        pem("EC ", 2, "\\n"),
        "https://user:s3cr3tPassw0rd@example.com/x",
        "postgres://u:p4ssW0rd99@db:5432/x",
        "Authorization: Bearer abcdEFGH1234ijklMNOP",
        '"Authorization": "Basic dXNlcjpwYXNzd29yZA=="',
        "Bearer Zx9Yw8Vu7Ts6Rq5Po4",
        "--api-key Zx9Yw8Vu7Ts6Rq5Po4nm",
        "--password=hunter2hunter2",
        "https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXX",
        "123456789:AAFakeTelegramBotToken0123456789abcdef",
        "?sv=2024&sig=AbCdEfGhIjKlMnOpQrStUv%2B%3D",
        "Z2hwX2FiY2RlZmdoaWprbG1ub3BxcnN0dXZ3eHl6MDEyMzQ1Njc4OQ==",
        "[REDACTED:secret]",
        "3f2a9c1e-7b4d-4e2a-9c1e-7b4d4e2a9c1e",
        "2026-11-29T10:31:24.123Z",
        "msg_01ABCdefGHIjklMNOpqr",
        # two candidates of one anchor side by side (a pass resumes right after a match)
        "password:://user:pa55w0rdXy@host/",
        "api_key:=:=Zx9Yw8Vu7Ts6Rq5Po4",
        "ghp_ghp_" + "a1B2" * 9,
    ]
    return out


SECRETS = _secret_pieces()
# Near misses: every piece cut short and cut at the front, so guards see partial prefixes and bodies.
NEAR = [s[:k] for s in SECRETS for k in (3, 5, 8, len(s) // 2, len(s) - 1)] + [s[2:] for s in SECRETS]
ALPHABET = "_-.:=ABK/@?&'\"\\ \t\nsSkKeyYpPaAdDwWtTnNhHlLrRoOgG0189xX$%{}[]()<>é—😀\x00"


@st.composite
def kv_pieces(draw: st.DrawFn) -> str:
    word = draw(st.sampled_from(CASES))(draw(st.sampled_from(WORDS)))
    value = draw(
        st.sampled_from(["hunter2hunter2", "Zx9Yw8Vu7Ts6Rq5Po4", "os.environ[", "x", '"q9W8e7R6t5Y4"'])
    )
    return draw(st.sampled_from(PREFIXES)) + word + draw(st.sampled_from(SEPS)) + value


PIECE = st.one_of(
    st.sampled_from(SECRETS),
    st.sampled_from(NEAR),
    kv_pieces(),
    st.text(alphabet=ALPHABET, max_size=16),
    st.text(max_size=6),
)
TEXTS = st.lists(PIECE, max_size=10).map("".join)
BOUNDARIES = (7, 8, 25, 26, 127, 128, 129, 130, 2046, 2047, 2048, 2049, 2050)
FILLERS = (" ", "a", "-", ":", "=", "é", "😀", "x_y.z ")


@st.composite
def sized_texts(draw: st.DrawFn) -> str:
    """A text padded (at the front or the back) or cut to a length at one of the scrubber's boundaries."""
    text, n, fill = draw(TEXTS), draw(st.sampled_from(BOUNDARIES)), draw(st.sampled_from(FILLERS))
    pad = (fill * (n // len(fill) + 1))[: max(0, n - len(text))]
    text = pad + text if draw(st.booleans()) else text + pad
    return text[:n] if draw(st.booleans()) else text[len(text) - n :]


ANY_TEXT = st.one_of(TEXTS, sized_texts())
SETTINGS = settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(ANY_TEXT)
def test_scan_patterns_match_as_before(text: str) -> None:
    """The near check only rejects what every key/value form rejects: same spans, same groups."""
    assert sig(sp.SCAN.finditer(text)) == sig(OLD_SCAN.finditer(text))
    for (_, new), old in zip(sp.scans(), OLD_PASSES, strict=True):
        assert sig(new.finditer(text)) == sig(old.finditer(text))


@SETTINGS
@given(ANY_TEXT)
def test_candidates_equal_mains(text: str) -> None:
    assert sig(scrubber._candidates(text)) == sig(old_candidates(text))
    assert sig(scrubber._anchor_matches(text)) == sig(OLD_SCAN.finditer(text))


@SETTINGS
@given(ANY_TEXT)
def test_scrub_text_equals_mains(text: str) -> None:
    want = old_scrub_text(text)
    scrubber.clear_caches()
    assert scrubber.scrub_text(text) == want
    assert scrubber.scrub_text(text) == want  # from the short-string cache, when short
    assert scrubber._scrub(text) == want


@settings(max_examples=300, deadline=None)
@given(st.lists(ANY_TEXT, max_size=8))
def test_scrub_obj_equals_mains(texts: list[str]) -> None:
    obj = {"password": texts[0] if texts else "", "items": texts, "nested": {"api_key": "".join(texts)}}
    scrubber.clear_caches()
    with (
        mock.patch.object(scrubber, "_candidates", old_candidates),
        mock.patch.object(scrubber, "_anchor_matches", old_candidates),
    ):
        want = scrubber.scrub_obj(obj)
    scrubber.clear_caches()
    assert scrubber.scrub_obj(obj) == want


def test_every_secret_piece_and_near_miss_alone_and_in_context() -> None:
    for s in SECRETS + NEAR:
        for text in (s, f"x {s} y", f'"{s}"', f"{s}\n" * 3, ("lorem ipsum " * 12) + s, s + ("é" * 130)):
            assert scrubber.scrub_text(text) == old_scrub_text(text), text
