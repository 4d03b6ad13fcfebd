"""Token handlers for the one scrubber (extractors/scrubber.py): each gets a scan match at its anchor
and returns the span of the token to replace, or None. Prefixed tokens, PEM blocks, JWTs, Slack
webhooks, Telegram bot tokens and Azure SAS signatures: formats recognisable without a key name."""

from __future__ import annotations

import re
from collections.abc import Callable

from extractors import secret_patterns as sp
from extractors.secret_patterns import Span

Handler = Callable[[str, "re.Match[str]"], "Span | None"]

_DIGITS = frozenset("0123456789")


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
        return start, end, sp.marker(label)
    return None


def _pem(text: str, m: re.Match[str]) -> Span | None:
    start = m.start()
    head = sp.PEM_HEAD.match(text, start)
    if head is None:
        return None
    end = sp.PEM_END.search(text, head.end(), head.end() + 40_000)
    if end is None:  # truncated block (e.g. a clipped tool result): redact what is left of the body
        body = sp.PEM_BODY.match(text, head.end())
        return start, body.end() if body else head.end(), sp.marker("private_key")
    return start, end.end(), sp.marker("private_key")


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
    return s, jm.end(), sp.marker("jwt")


def _slack_hook(text: str, m: re.Match[str]) -> Span | None:
    hm = sp.SLACK_HOOK.match(text, m.start() - 5)
    return (hm.start(1), hm.end(1), sp.marker("slack_webhook")) if hm else None


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
    return bm.start(), bm.end(), sp.marker("telegram_bot_token")


def _sas(text: str, m: re.Match[str]) -> Span | None:
    vm = sp.SAS_VALUE.match(text, m.start() + 1)
    return (vm.start(), vm.end(), sp.marker("azure_sas")) if vm else None


TOKEN_HANDLERS: dict[str, Handler] = {r.name: _token for r in sp.TOKEN_RULES}
TOKEN_HANDLERS.update(pem=_pem, jwt=_jwt, telegram=_telegram, slackhook=_slack_hook, sas=_sas)
