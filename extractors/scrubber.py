"""The single central secrets scrubber: every string is passed through here before it is stored.

Secret VALUES are replaced by `[REDACTED:<type>]`; key names, URL hosts, header names and the rest of the
text survive so a memory stays readable ("set DB_PASSWORD=[REDACTED:password] in .env"). The scrubber is
idempotent and never re-matches its own markers.

Speed: `SCAN` (see secret_patterns) only starts matches at a few rare anchor characters, so text with no
secrets costs one C-level regex pass; candidates are confirmed by small handlers below.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from extractors import secret_patterns as sp

Span = tuple[int, int, str]  # (start, end, replacement) in the original text
Handler = Callable[[str, "re.Match[str]"], "Span | None"]

_WS = frozenset(" \t\r\n")
_DIGITS = frozenset("0123456789")


def _marker(label: str) -> str:
    return sp.MARKER_FMT.format(label)


def _looks_random(v: str) -> bool:
    """Token-like rather than a word: letters and digits, or long and mixed-case."""
    if len(v) < 8:
        return False
    if sp._mixed(v):
        return True
    return len(v) >= 20 and any(c.isupper() for c in v) and any(c.islower() for c in v)


def _plausible(v: str, label: str, min_len: int) -> bool:
    """A literal worth redacting: not empty, a placeholder, a variable reference, a path or a count."""
    v = v.strip()
    if len(v) < min_len or v.startswith(sp.PLACEHOLDER_START) or sp.PLACEHOLDER_RE.fullmatch(v):
        return False
    if "***" in v:  # already masked: `ghp_****`, `sk-a***REDACTED***wxyz`
        return False
    if v.startswith("-----BEGIN") or ("{" in v and "}" in v) or sp.PATH_RE.fullmatch(v):
        return False
    return not (v.isdigit() and label != "password")


def _label_for(value: str, label: str) -> str:
    """The marker for `value`: the specific format's when the whole value is one known token.

    Only the token handlers are consulted (never the key/value one), so this cannot recurse.
    """
    v = value.strip()
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
        if mixed and not sp._mixed(text[start + rule.back + 1 : end]):
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
    if bm is None or (bm.end() < len(text) and text[bm.end()] in sp.ALNUM) or not sp._mixed(bm.group()):
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


def _auth_value(text: str, i: int) -> Span | None:
    """`Authorization: <scheme> <credentials>`: redact the credentials, keep the scheme."""
    c = text[i : i + 1]
    if c in ('"', "'"):
        vm = (sp.DQ_VALUE if c == '"' else sp.SQ_VALUE).match(text, i)
        a, b = vm.span(1) if vm else (i, i)
    elif text.startswith('\\"', i):
        vm = sp.ESC_DQ_VALUE.match(text, i)
        a, b = vm.span(1) if vm else (i, i)
    else:
        lm = sp.LINE_REST.match(text, i)
        a, b = i, lm.end() if lm else i
    am = sp.AUTH_SCHEME.match(text, a, b)
    cred_start = am.end() if am else a
    cm = sp.AUTH_CRED.match(text, cred_start, b)  # credentials are one token (Bearer/Basic/token)
    if cm is None:
        return None
    cred, b = cm.group(), cm.end()
    if not _plausible(cred, "secret", 6):
        return None
    return cred_start, b, _scheme_marker(am.group(1) if am else "", cred)


def _random_segment(seg: str) -> bool:
    """A long mixed-case alphanumeric run with digits: token material, not an identifier."""
    return (
        len(seg) >= 16 and any(c.isdigit() for c in seg) and any(c.isupper() for c in seg)
        and any(c.islower() for c in seg)
    )


def _code_ref(v: str) -> bool:
    """`os.environ`, `self.token`, `env.AUTH0_CLIENT_SECRET` (but not a vault `s.<random>` token)."""
    return bool(sp.DOTTED_RE.fullmatch(v)) and not any(_random_segment(seg) for seg in v.split("."))


def _unquoted_ok(text: str, v: str, end: int, sep: str, spaced: bool) -> bool:
    """Unquoted values only count in env/shell/config style, never when they look like code."""
    after = text[end : end + 1]
    if after in ("(", "[", "."):
        return False
    if sp.PATH_RE.fullmatch(v) or _code_ref(v):
        return False
    if sp.IDENT_RE.fullmatch(v):
        if sp.KEYWORDISH_RE.search(v) or v in sp.CODE_WORDS or (sep == ":" and sp.CAMEL_TYPE_RE.fullmatch(v)):
            return False
        rest = text[end : end + 40].lstrip(" \t")
        if rest[:1] in (",", ")", "}"):
            return False  # call keyword argument or object literal: `f(token=tok)`, `{token: tok}`
        if spaced and sep == "=" and not _looks_random(v):
            return False  # `token = other_variable`
    if spaced and sep == "=":  # INI style `password = hunter2`: the value must end the line
        nl = text.find("\n", end)
        if text[end : nl if nl >= 0 else len(text)].strip():
            return False
    return True


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
    k, lo = j, max(0, j - 128)
    while k > lo and text[k - 1] in sp.KEY_NAME_CHARS:
        k -= 1
    label = sp.secret_key_label(text[k:j])
    if label is None or text[k - 2 : k] == "//":  # URL userinfo is the '@' handler's job
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
    c = text[i : i + 1]
    if c in ('"', "'"):
        vm = (sp.DQ_VALUE if c == '"' else sp.SQ_VALUE).match(text, i)
    elif text.startswith('\\"', i):
        vm = sp.ESC_DQ_VALUE.match(text, i)
    else:
        um = sp.UNQUOTED_VALUE.match(text, i)
        if um is None or not _plausible(um.group(), label, 6):
            return None
        if not _unquoted_ok(text, um.group(), um.end(), sep, spaced):
            return None
        return um.start(), um.end(), _label_for(um.group(), label)
    if vm is None or not _plausible(vm.group(1), label, 4):
        return None
    return vm.start(1), vm.end(1), _label_for(vm.group(1), label)


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
    c = text[i : i + 1]
    if c in ('"', "'"):
        vm = (sp.DQ_VALUE if c == '"' else sp.SQ_VALUE).match(text, i)
        span = vm.span(1) if vm else (i, i)
    else:
        um = sp.UNQUOTED_VALUE.match(text, i)
        span = um.span() if um else (i, i)
    v = text[span[0] : span[1]]
    if v.startswith("-") or not _plausible(v, label, 6) or _code_ref(v):
        return None
    return span[0], span[1], _label_for(v, label)


_TOKEN_HANDLERS: dict[str, Handler] = {r.name: _token for r in sp.TOKEN_RULES}
_TOKEN_HANDLERS.update(pem=_pem, jwt=_jwt, telegram=_telegram)
_HANDLERS: dict[str, Handler] = dict(_TOKEN_HANDLERS)
_HANDLERS.update(flag=_flag, slackhook=_slack_hook, kvcolon=_key_value, sas=_sas, kveq=_key_value, url=_url)


def _candidates(text: str) -> list[re.Match[str]]:
    """Scan matches (each one anchor char wide) in text order."""
    if len(text) < sp.LONG_TEXT:
        first = sp.SCAN.search(text)  # the common no-candidate case costs one C call
        return [] if first is None else list(sp.SCAN.finditer(text, first.start()))
    found: list[re.Match[str]] = []
    for rx in sp.SCANS:  # one fast single-literal pass per anchor char
        found.extend(rx.finditer(text))
    found.sort(key=_start)
    return found


def _start(m: re.Match[str]) -> int:
    return m.start()


def _hits(text: str) -> list[Span]:
    """Every confirmed secret span, each candidate judged on its own."""
    out: list[Span] = []
    for m in _candidates(text):
        hit = _HANDLERS[m.lastgroup or ""](text, m)
        if hit is not None and hit[1] > hit[0]:
            out.append(hit)
    return out


def _spans(text: str) -> list[Span]:
    """Non-overlapping replacement spans in text order; where spans overlap the earliest (then longest)
    wins. Judging candidates independently matters: a URL password span starts after a token in the
    user part (`https://ghp_x:x-oauth-basic@github.com`), and both must go."""
    hits = _hits(text)
    if len(hits) < 2:
        return hits
    hits.sort(key=_span_order)
    out: list[Span] = []
    last = 0
    for hit in hits:
        if hit[0] >= last:
            out.append(hit)
            last = hit[1]
    return out


def _span_order(hit: Span) -> tuple[int, int]:
    return hit[0], -hit[1]


def scrub_text(text: str) -> str:
    """Return `text` with every secret value replaced by `[REDACTED:<type>]` (idempotent)."""
    spans = _spans(text)
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
    return any(_HANDLERS[m.lastgroup or ""](text, m) for m in _candidates(text))


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


def scrub_obj(obj: Any) -> Any:
    """Recursively scrub strings inside dicts/lists/tuples; dict keys are kept, values under
    secret-named keys ("password", "api_key", ...) are redacted whole. Returns a new object."""
    if isinstance(obj, str):
        return scrub_text(obj)
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            if v and isinstance(v, str) and isinstance(k, str) and (label := sp.secret_key_label(k)):
                out[k] = _redact_field(v, label)
            else:
                out[k] = scrub_obj(v)
        return out
    if isinstance(obj, list):
        return [scrub_obj(v) for v in obj]
    if isinstance(obj, tuple):
        return tuple(scrub_obj(v) for v in obj)
    return obj
