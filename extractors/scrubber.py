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

import binascii
import re
from collections.abc import Callable
from typing import Any

from extractors import secret_patterns as sp

Span = tuple[int, int, str]  # (start, end, replacement) in the original text
Handler = Callable[[str, "re.Match[str]"], "Span | None"]

_DIGITS = frozenset("0123456789")


def _marker(label: str) -> str:
    return sp.MARKER_FMT.format(label)


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


def _token(text: str, m: re.Match[str]) -> Span | None:
    rule = sp.TOKEN_RULES_BY_NAME[m.lastgroup or ""]
    start = m.start() - rule.back
    if start < 0 or (start and text[start - 1] in sp.ALNUM):
        return None
    for rx, label, mixed in rule.precise:
        pm = rx.match(text, start)
        if pm is None:
            continue
        end = pm.end()
        if rule.fixed_end and end < len(text) and text[end] in sp.ALNUM:
            continue
        if mixed and not sp.mixed_alnum(text[start + rule.back + 1 : end]):
            continue
        return start, end, _marker(label)
    return None


def _pem(text: str, m: re.Match[str]) -> Span | None:
    start = m.start()
    head = sp.PEM_HEAD.match(text, start)
    if head is None:
        return None
    end = sp.PEM_END.search(text, head.end(), head.end() + 40_000)
    if end is None:  # truncated block (e.g. a clipped tool result): redact what is left of the body
        body = sp.PEM_BODY.match(text, head.end())
        return start, body.end() if body else head.end(), _marker("private_key")
    return start, end.end(), _marker("private_key")


def _jwt(text: str, m: re.Match[str]) -> Span | None:
    dot = m.start()
    lo = max(0, dot - 8192)
    s = text.rfind("eyJ", lo, dot)
    while s > 0 and text[s - 1] in sp.ALNUM:
        s = text.rfind("eyJ", lo, s)
    if s < 0:
        return None
    jm = sp.JWT.match(text, s)
    if jm is None or jm.end() <= dot:
        return None
    return s, jm.end(), _marker("jwt")


def _slack_hook(text: str, m: re.Match[str]) -> Span | None:
    hm = sp.SLACK_HOOK.match(text, m.start() - 5)
    return (hm.start(1), hm.end(1), _marker("slack_webhook")) if hm else None


def _telegram(text: str, m: re.Match[str]) -> Span | None:
    colon = m.start() - 1
    i = colon
    while i > 0 and colon - i <= 12 and text[i - 1] in _DIGITS:
        i -= 1
    if not 6 <= colon - i <= 12 or (i and text[i - 1] in sp.ALNUM and text[i - 3 : i] != "bot"):
        return None
    bm = sp.TELEGRAM_BODY.match(text, colon + 1)
    if bm is None or (bm.end() < len(text) and text[bm.end()] in sp.ALNUM) or not sp.mixed_alnum(bm.group()):
        return None
    return bm.start(), bm.end(), _marker("telegram_bot_token")


def _sas(text: str, m: re.Match[str]) -> Span | None:
    vm = sp.SAS_VALUE.match(text, m.start() + 1)
    return (vm.start(), vm.end(), _marker("azure_sas")) if vm else None


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


def _b64_spans(text: str) -> list[Span]:
    """Base64 blobs that decode to text holding a secret (`echo <token> | base64`, a docker `auth`).

    Candidates are found in C (encode + translate + find, see secret_patterns.B64_TABLE); each is
    decoded at most four times and the decoded text goes through the whole scrubber, so every format
    above counts when encoded.
    """
    marks = text.encode("ascii", "replace").translate(sp.B64_TABLE)
    out: list[Span] = []
    i = marks.find(sp.B64_CORE)
    while i >= 0:
        start = marks.rfind(b" ", 0, i) + 1
        end = marks.find(b" ", i)
        end = len(text) if end < 0 else end
        if end - start >= sp.B64_MIN:
            run = text[start:end]
            if run not in _b64_plain:  # identifiers, paths and digests repeat across a transcript
                hit = _b64_run(text, marks, start, end, i)
                if hit is not None:
                    out.append(hit)
                elif len(_b64_plain) < _CACHE_MAX:
                    _b64_plain.add(run)
                else:
                    _b64_plain.clear()
        i = marks.find(sp.B64_CORE, end)
    return out


_b64_plain: set[str] = set()  # runs known to hold no encoded secret


def _b64_run(text: str, marks: bytes, start: int, end: int, core: int) -> Span | None:
    """The blob in a run of base64 characters, if it decodes to text holding a secret.

    The run may carry a path or an identifier stuck to the blob (`/home/dev/<blob>/app`,
    `token-<blob>`): when the whole run does not decode to text, the piece holding the candidate's core
    (between `/ - _` separators) is tried, alone and run to either end of the run.
    """
    if end - start > 65_536:  # too big to be a credential (an image)
        return None
    hit = _b64_blob(text, start, end)
    if hit is not None:
        return hit
    a = marks.rfind(b"b", start, core) + 1 or start
    b = marks.find(b"b", core, end)
    b = end if b < 0 else b
    for x, y in ((a, b), (a, end), (start, b)):
        if y - x >= sp.B64_MIN and (x, y) != (start, end):
            hit = _b64_blob(text, x, y)
            if hit is not None:
                return hit
    return None


def _b64_blob(text: str, start: int, end: int) -> Span | None:
    run = text[start:end]
    # Each 4-char group of base64 over printable text starts with one of 24 letters (the top 6 bits of
    # an ASCII byte): random runs, digests and identifiers fail this before anything is decoded.
    if not sp.B64_TEXT_LEADS.issuperset(run[::4]):
        return None
    n = len(text)
    while end < n and text[end] == "=" and end - start < len(run) + 2:
        end += 1  # padding belongs to the blob
    body = run[: len(run) - len(run) % 4] if len(run) % 4 == 1 else run
    try:
        raw = binascii.a2b_base64((body + "=" * (-len(body) % 4)).translate(sp.B64_URL_TO_STD))
    except (ValueError, binascii.Error):
        return None
    if not raw.isascii():
        return None
    spans = _spans(raw.decode("ascii"))
    if not spans:
        return None
    return start, end, spans[0][2] if len(spans) == 1 else _marker("secret")


_TOKEN_HANDLERS: dict[str, Handler] = {r.name: _token for r in sp.TOKEN_RULES}
_TOKEN_HANDLERS.update(pem=_pem, jwt=_jwt, telegram=_telegram)
_HANDLERS: dict[str, Handler] = dict(_TOKEN_HANDLERS)
_HANDLERS.update(flag=_flag, slackhook=_slack_hook, kvcolon=_key_value, sas=_sas, kveq=_key_value, url=_url,
                 bearer=_bearer)


def _candidates(text: str) -> list[re.Match[str]]:
    """Scan matches (each one anchor char wide) in text order."""
    if len(text) < sp.LONG_TEXT:
        first = sp.SCAN.search(text)  # the common no-candidate case costs one C call
        return [] if first is None else list(sp.SCAN.finditer(text, first.start()))
    found: list[re.Match[str]] = []
    for rx in sp.scans():  # one fast single-literal pass per anchor char
        found.extend(rx.finditer(text))
    found.sort(key=_start)
    return found


def _start(m: re.Match[str]) -> int:
    return m.start()


def _spans(text: str, scan: bool = True) -> list[Span]:
    """Non-overlapping replacement spans in text order (`scan=False`: the scan regex found nothing).

    Candidates are judged in text order; one inside an accepted span is skipped (keeps long redacted
    values linear), and a hit overlapping an accepted span is dropped (first come wins). A candidate
    *before* an accepted span is still judged: a URL password span starts after a token in the user
    part (`https://ghp_x:x-oauth-basic@github.com`), and both must go.
    """
    out: list[Span] = []
    live: list[Span] = []  # accepted spans that end after the current candidate
    for m in _candidates(text) if scan else ():
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
    if len(text) >= sp.B64_MIN:
        b64 = _b64_spans(text)
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
_B64_FIND, _B64_TABLE, _B64_CORE = bytes.find, sp.B64_TABLE, sp.B64_CORE
_API_ID = sp.API_ID.fullmatch
_MIN_LEN = 8  # nothing this scrubber redacts fits in fewer characters


# Short strings repeat a lot in transcripts (types, roles, model and tool names, session ids, cwd):
# remember their verdicts. Bounded; cleared wholesale when full.
_SHORT = 128
_CACHE_MAX = 100_000
_short_cache: dict[str, str] = {}


def scrub_text(text: str) -> str:
    """Return `text` with every secret value replaced by `[REDACTED:<type>]` (idempotent)."""
    n = len(text)
    if n <= _SHORT:
        if n < _MIN_LEN:
            return text
        hit = _short_cache.get(text)
        if hit is None:
            if not text.strip(sp.ID_CHARS) or _API_ID(text):
                return text  # uuids, timestamps, API ids: unique (not worth caching) and never secret
            hit = _scrub(text, _SCAN_SEARCH(text) is not None)
            if len(_short_cache) >= _CACHE_MAX:
                _short_cache.clear()
            _short_cache[text] = hit
        return hit
    if n < sp.LONG_TEXT and _SCAN_SEARCH(text) is None:  # the common case: two C passes, no candidate
        return text if _B64_FIND(text.encode("ascii", "replace").translate(_B64_TABLE), _B64_CORE) < 0 \
            else _scrub(text, False)
    return _scrub(text)


def _scrub(text: str, scan: bool = True) -> str:
    spans = _spans(text, scan)
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
    if len(text) <= _SHORT:
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
