"""The single central secrets scrubber: every string is passed through here before it is stored.

Secret VALUES are replaced by `[REDACTED:<type>]`; key names, URL hosts, header names and the rest of the
text survive so a memory stays readable ("set DB_PASSWORD=[REDACTED:password] in .env"). The scrubber is
idempotent and never re-matches its own markers.

Speed: the scan regexes (see secret_patterns) only start matches at a few anchor characters and reject
almost every position with C-level lookarounds, so text with no secrets costs one regex pass per anchor
(one pass in all for short strings); the rare candidates are confirmed by the small handlers below.
Handlers return a span to replace or None; they never scan far, so adversarial input stays linear.
Base64 blobs are found in C as well (runs of base64 characters) and decoded once; a blob whose text
holds a secret is redacted whole, so `echo <token> | base64` output does not carry the token through.
"""

from __future__ import annotations

import re
from typing import Any

from extractors import secret_patterns as sp
from extractors.scrub_base64 import CACHE_MAX, CORE, blob_marks, blob_spans
from extractors.scrub_base64 import MIN_RUN as _B64_MIN_RUN
from extractors.scrub_base64 import plain as _b64_plain
from extractors.scrub_tokens import TOKEN_HANDLERS as _TOKEN_HANDLERS
from extractors.scrub_tokens import Handler
from extractors.secret_patterns import Span

_marker = sp.marker


def _label_for(value: str, label: str) -> str:
    """The marker for `value`: the specific format's when the whole value is one known token.

    Only the token handlers are consulted (never the key/value one), so this cannot recurse.
    """
    v = value.strip()
    if len(v) > 1024:  # no single token is this long (bounds the work on huge values)
        return _marker(label)
    for m in sp.SCAN.finditer(v):
        if m.lastgroup in _TOKEN_HANDLERS:
            hit = _HANDLERS[m.lastgroup](v, m)
            if hit is not None:
                return hit[2] if (hit[0], hit[1]) == (0, len(v)) else _marker(label)
    return _marker(label)


def _scheme_marker(scheme: str, cred: str) -> str:
    """Marker for the credentials after an Authorization scheme word."""
    tag = {"bearer": "bearer", "basic": "basic_auth"}.get(scheme.lower())
    return _marker(tag) if tag else _label_for(cred, "secret")


# --- handlers: each gets the scan match and returns the span to replace, or None -------------------


def _url(text: str, m: re.Match[str]) -> Span | None:
    colon = m.start()
    um = sp.URL_USERINFO.match(text, colon + 3)
    if um is None or not sp.URL_SCHEME_END.search(text[max(0, colon - 32) : colon]):
        return None
    pw = um.group(1)
    if pw.startswith(sp.PLACEHOLDER_START) or sp.PLACEHOLDER_RE.fullmatch(pw):
        return None
    return um.start(1), um.end(1), _label_for(pw, "password")


# Values are read at most this far (a base64 RSA-4096 key is ~4.4 KB). Bounding the read keeps the
# work per candidate constant, so adversarial text like "password=" * 10**5 stays linear.
_PROBE = 8192


def _read_value(text: str, i: int) -> tuple[int, int, bool] | None:
    """Span of the literal starting at `i` (quoted, JSON-escaped-quoted or bare) and whether quoted."""
    end = i + _PROBE
    c = text[i : i + 1]
    if c in ('"', "'"):
        vm = (sp.DQ_VALUE if c == '"' else sp.SQ_VALUE).match(text, i, end)
    elif text.startswith('\\"', i):
        vm = sp.ESC_DQ_VALUE.match(text, i, end)
    else:
        um = sp.UNQUOTED_VALUE.match(text, i, end)
        if um is None:
            return None
        ve = um.end()
        while ve > i and text[ve - 1] in ".:":  # sentence punctuation, or code cut off mid-expression
            ve -= 1
        return (i, ve, False) if ve > i else None
    return (vm.start(1), vm.end(1), True) if vm else None


def _auth_value(text: str, i: int) -> Span | None:
    """`Authorization: <scheme> <credentials>`: redact the credentials, keep the scheme."""
    if text[i : i + 1] == "`":  # JS template literal: `Bearer ${token}`
        i += 1
    if text[i : i + 1] in ('"', "'") or text.startswith('\\"', i):
        span = _read_value(text, i)
        a, b = (span[0], span[1]) if span else (i, i)
    else:
        lm = sp.LINE_REST.match(text, i, i + _PROBE)
        a, b = i, lm.end() if lm else i
    am = sp.AUTH_SCHEME.match(text, a, b)
    cred_start = am.end() if am else a
    cm = sp.AUTH_CRED.match(text, cred_start, b)  # credentials are one token (Bearer/Basic/token)
    if cm is None:
        return None
    cred, b = cm.group(), cm.end()
    if not sp.plausible_value(cred, "secret", 6):
        return None
    return cred_start, b, _scheme_marker(am.group(1) if am else "", cred)


def _name_start(text: str, j: int) -> int:
    """Start of the key name ending at j. A redaction marker counts as part of the name, as the token it
    replaced did, so a second pass sees the same name context as the first."""
    k, lo = j, max(0, j - 128)
    while k > lo:
        c = text[k - 1]
        if c in sp.KEY_NAME_CHARS:
            k -= 1
        elif c == "]" and (r := text.rfind("[REDACTED:", lo, k)) >= 0 and sp.MARKER_RE.fullmatch(text, r, k):
            k = r
        else:
            break
    return k


def _key_value(text: str, m: re.Match[str]) -> Span | None:
    p = m.start()
    sep = text[p]
    j = p
    if sep == "=" and text[j - 1] == ":":  # Go `:=`
        j -= 1
    spaced = text[j - 1] == " "
    if spaced:
        j -= 1
    if text[j - 1] in "\"'":
        j -= 1
        if j and text[j - 1] == "\\":
            j -= 1
    k = _name_start(text, j)
    label = sp.secret_key_label(text[k:j])
    if label is None or (sep == ":" and text[k - 2 : k] == "//"):  # `scheme://token:x@`: see _url
        return None
    i, n = p + 1, len(text)
    nxt = text[i : i + 1]
    if nxt == sep:
        return None  # `==` comparison, `::` scope operator
    if nxt == (">" if sep == "=" else "="):
        i += 1  # `=>` (Ruby/PHP), `:=` (Go)
    while i < n and text[i] in " \t":
        i += 1
        spaced = True
    if label == "authorization":
        return _auth_value(text, i)
    span = _read_value(text, i)
    if span is None:
        return None
    vs, ve, quoted = span
    v = text[vs:ve]
    if not quoted and "/" in v and sp.PATH_RE.fullmatch(v):  # `/home/dev/TOKEN=<value>/app/app.py`
        head = v[: sp.secret_path_head(v)]
        if not sp.looks_random(head) or head.startswith(sp.PLACEHOLDER_START):
            return None  # a path
        return vs, vs + len(head), _label_for(head, label)
    if not sp.plausible_value(v, label, 4 if quoted else 6):
        return None
    if not quoted and not sp.unquoted_value_ok(text, v, ve, sep, spaced, text[k:j]):
        return None
    return vs, ve, _label_for(v, label)


def _flag(text: str, m: re.Match[str]) -> Span | None:
    p = m.start()
    if p >= 2 and text[p - 2] not in " \t\n\"'":
        return None
    nm = sp.FLAG_NAME.match(text, p + 1)
    label = sp.secret_key_label(nm.group()) if nm else None
    if nm is None or label is None or label == "authorization":
        return None
    i, n = nm.end(), len(text)
    while i < n and text[i] in " \t":
        i += 1
    span = _read_value(text, i)
    if span is None:
        return None
    v = text[span[0] : span[1]]
    if v.startswith("-") or not sp.plausible_value(v, label, 6) or sp.code_ref(v):
        return None
    return span[0], span[1], _label_for(v, label)


def _bearer(text: str, m: re.Match[str]) -> Span | None:
    """`Bearer <token>` in prose or a bare header value: the token must look random (not a word)."""
    i, n = m.start() + 6, len(text)
    while i < n and text[i] in " \t":
        i += 1
    cm = sp.AUTH_CRED.match(text, i, i + _PROBE)
    if cm is None:
        return None
    v = cm.group().rstrip(".,;:)]}`")
    if not sp.plausible_value(v, "secret", 8) or not sp.looks_random(v):
        return None
    return i, i + len(v), _marker("bearer")


_HANDLERS: dict[str, Handler] = dict(_TOKEN_HANDLERS)
_HANDLERS.update(flag=_flag, kvcolon=_key_value, kveq=_key_value, url=_url, bearer=_bearer)


def _candidates(text: str) -> list[re.Match[str]]:
    """Scan matches (each one anchor char wide, a URL's `://` three) in text order."""
    if len(text) <= SHORT:
        first = _SCAN_SEARCH(text)  # the common no-candidate case costs one C call
        return [] if first is None else list(sp.SCAN.finditer(text, first.start()))
    return _anchor_matches(text)


def _anchor_matches(text: str) -> list[re.Match[str]]:
    """`SCAN.finditer(text)`, one pass per anchor char the text holds: every match starts at its
    anchor char and covers no other anchor char, so the passes' matches, sorted, are SCAN's."""
    found: list[re.Match[str]] = []
    for anchor, rx in sp.scans():
        if anchor in text:
            m = rx.search(text)  # the common case: no match, one call
            if m is not None:
                found.append(m)
                found.extend(rx.finditer(text, m.end()))
    if len(found) > 1:
        found.sort(key=_start)
    return found


def _start(m: re.Match[str]) -> int:
    return m.start()


def _spans(text: str, found: list[re.Match[str]] | None = None, marks: bytes | None = None) -> list[Span]:
    """Non-overlapping replacement spans in text order (`found`: the text's scan matches, `marks`: its
    `blob_marks`, when the caller has them already).

    Candidates are judged in text order; one inside an accepted span is skipped (keeps long redacted
    values linear), and a hit overlapping an accepted span is dropped (first come wins). A candidate
    *before* an accepted span is still judged: a URL password span starts after a token in the user
    part (`https://ghp_x:x-oauth-basic@github.com`), and both must go.
    """
    out: list[Span] = []
    live: list[Span] = []  # accepted spans that end after the current candidate
    for m in _candidates(text) if found is None else found:
        p = m.start()
        if live:
            live = [h for h in live if h[1] > p]
            if any(h[0] <= p for h in live):
                continue
        hit = _HANDLERS[m.lastgroup or ""](text, m)
        if hit is None or hit[1] <= hit[0] or _overlaps(hit, out):
            continue
        out.append(hit)
        live.append(hit)
    if len(text) >= _B64_MIN_RUN:
        b64 = blob_spans(text, _spans, marks)
        if b64:
            out.extend(h for h in b64 if not _overlaps(h, out))
    out.sort()
    return out


def _overlaps(hit: Span, accepted: list[Span]) -> bool:
    """Does `hit` overlap an accepted span? Spans start at most ~16 KB before their candidate."""
    for h in reversed(accepted):
        if hit[0] < h[1] and h[0] < hit[1]:
            return True
        if h[1] + 20_000 < hit[0]:
            return False
    return False


_SCAN_SEARCH = sp.SCAN.search
API_ID = sp.API_ID.fullmatch
# A non-empty text made only of ID_CHARS (all ASCII) maps to spaces only: `not text.strip(ID_CHARS)`
# looks each character up in ID_CHARS (~3,200 instructions for a UUID, ~50 k ids per 49 MB), the table
# does it in C in ~1,300.
ID_TABLE = bytes(0x20 if chr(i) in sp.ID_CHARS else 0x78 for i in range(256))
MIN_LEN = 8  # nothing this scrubber redacts fits in fewer characters


# Short strings repeat a lot in transcripts (types, roles, model and tool names, session ids, cwd):
# remember their verdicts. Bounded; cleared wholesale when full.
SHORT = 128
_short_cache: dict[str, str] = {}


def scrub_text(text: str) -> str:
    """Return `text` with every secret value replaced by `[REDACTED:<type>]` (idempotent)."""
    n = len(text)
    if n <= SHORT:
        if n < MIN_LEN:
            return text
        hit = _short_cache.get(text)
        if hit is None:
            if (text.isascii() and text.encode().translate(ID_TABLE).isspace()) or API_ID(text):
                return text  # uuids, timestamps, API ids: unique (not worth caching) and never secret
            hit = _scrub(text)
            if len(_short_cache) >= CACHE_MAX:
                _short_cache.clear()
            _short_cache[text] = hit
        return hit
    found = _anchor_matches(text)
    if not found:  # the common case: a few C passes, no candidate
        marks = blob_marks(text)
        return text if marks.find(CORE) < 0 else _scrub(text, found, marks)
    return _scrub(text, found)


def clear_caches() -> None:
    """Forget remembered verdicts (benchmarks start cold, as an indexing run does)."""
    _short_cache.clear()
    _b64_plain.clear()


def _scrub(text: str, found: list[re.Match[str]] | None = None, marks: bytes | None = None) -> str:
    spans = _spans(text, found, marks)
    if not spans:
        return text
    parts: list[str] = []
    last = 0
    for start, end, repl in spans:
        parts.append(text[last:start])
        parts.append(repl)
        last = end
    parts.append(text[last:])
    return "".join(parts)


def contains_secret(text: str) -> bool:
    """Cheap check: would `scrub_text` change anything?"""
    if len(text) <= SHORT:
        return scrub_text(text) != text  # answered from the short-string cache
    return bool(_spans(text))


def _redact_field(value: str, label: str) -> str:
    """A value stored under a secret-named key is redacted whole (keeping an auth scheme word)."""
    if sp.MARKER_RE.fullmatch(value):
        return value
    if label == "authorization":
        am = sp.AUTH_SCHEME.match(value)
        if am:
            cred = value[am.end() :].strip()
            if sp.MARKER_RE.fullmatch(cred):
                return value
            return value[: am.end()] + _scheme_marker(am.group(1), cred)
        label = "secret"
    return _label_for(value, label)


_ATOMS = (int, float, bool, type(None))


def scrub_obj(obj: Any) -> Any:
    """Recursively scrub strings inside dicts/lists/tuples; dict keys are kept, values under
    secret-named keys ("password", "api_key", ...) are redacted whole. Returns a new object."""
    if isinstance(obj, str):
        return scrub_text(obj)
    if isinstance(obj, dict):
        return _scrub_dict(obj)
    if isinstance(obj, list):
        return [scrub_obj(v) for v in obj]
    if isinstance(obj, tuple):
        return tuple(scrub_obj(v) for v in obj)
    return obj


def _scrub_dict(obj: dict[Any, Any]) -> dict[Any, Any]:
    out = {}
    label_of = sp.secret_key_label
    for k, v in obj.items():
        tv = type(v)
        if tv is str:  # the hot path, inlined
            label = label_of(k) if v and type(k) is str else None
            out[k] = _redact_field(v, label) if label else scrub_text(v)
        elif tv in _ATOMS:
            out[k] = v
        else:
            out[k] = scrub_obj(v)
    return out
