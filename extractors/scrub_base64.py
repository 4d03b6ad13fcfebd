"""Base64 blobs, for the one scrubber (extractors/scrubber.py): a blob whose decoded text holds a secret
is redacted whole (`echo <token> | base64`, a docker `auth` string), also when it is stuck to a path
or an identifier. The scrubber passes itself in to judge the decoded text, so every format it knows
counts when encoded.

Candidates are found in C (encode + translate + find, see TABLE); each is decoded at most four
times, and runs known to hold nothing are remembered (identifiers, paths and digests repeat across a
transcript).
"""

from __future__ import annotations

import binascii
from collections.abc import Callable

from extractors import secret_patterns as sp
from extractors.secret_patterns import Span

Judge = Callable[[str], list[Span]]

# Bytes of the text map to "a" for letters, digits and "+", to "b" for "/ - _" (base64 characters that also separate path pieces and
# identifiers) and to " " otherwise, so candidates are found in C: a core of 24 "a" (paths, UUIDs and
# snake_case names have none), widened to the whole run of "a" and "b".
_CORE_CHARS = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+"
TABLE = bytes(ord("a") if i in _CORE_CHARS else ord("b") if i in b"/-_" else ord(" ") for i in range(256))
MIN_RUN = 26  # the unpadded base64 of the shortest token formats above (AKIA…, 20 characters)
CORE = b"a" * 24
TEXT_LEADS = frozenset("CDIJKLMNOPQRSTUVWXYZabcdef")  # first char of a group encoding tab, LF, CR or ' '..'~'
URL_TO_STD = str.maketrans("-_", "+/")

CACHE_MAX = 100_000  # bound of the scrubber's remembered verdicts (cleared wholesale when full)
plain: set[str] = set()  # runs known to hold no encoded secret
_MAX_BLOB = 65_536  # bigger is not a credential (an image)


def blob_marks(text: str) -> bytes:
    """`text` mapped through TABLE (all in C): a blob can start only where the marks hold CORE. The
    scrubber computes them once per text and hands them to `blob_spans` (they cost as much as a scan
    of the text: computing them twice was a twentieth of scrubbing)."""
    return text.encode("ascii", "replace").translate(TABLE)


def blob_spans(text: str, judge: Judge, marks: bytes | None = None) -> list[Span]:
    """Spans of the base64 blobs in `text` whose decoded text `judge` finds secrets in (`marks`: its
    `blob_marks`, when the caller has them)."""
    if marks is None:
        marks = blob_marks(text)
    out: list[Span] = []
    i = marks.find(CORE)
    while i >= 0:
        start = marks.rfind(b" ", 0, i) + 1
        end = marks.find(b" ", i)
        end = len(text) if end < 0 else end
        if end - start >= MIN_RUN:
            run = text[start:end]
            if run not in plain:
                hit = _run(text, marks, start, end, i, judge)
                if hit is not None:
                    out.append(hit)
                elif len(plain) < CACHE_MAX:
                    plain.add(run)
                else:
                    plain.clear()
        i = marks.find(CORE, end)
    return out


def _run(text: str, marks: bytes, start: int, end: int, core: int, judge: Judge) -> Span | None:
    """The blob in a run of base64 characters. When the whole run does not decode to text, the piece
    holding the candidate's core (between `/ - _` separators) is tried, alone and run to either end."""
    if end - start > _MAX_BLOB:
        return None
    hit = _blob(text, start, end, judge)
    if hit is not None:
        return hit
    a = marks.rfind(b"b", start, core) + 1 or start
    b = marks.find(b"b", core, end)
    b = end if b < 0 else b
    for x, y in ((a, b), (a, end), (start, b)):
        if y - x >= MIN_RUN and (x, y) != (start, end):
            hit = _blob(text, x, y, judge)
            if hit is not None:
                return hit
    return None


def _blob(text: str, start: int, end: int, judge: Judge) -> Span | None:
    run = text[start:end]
    # Each 4-char group of base64 over printable text starts with one of 24 letters (the top 6 bits of
    # an ASCII byte): random runs, digests and identifiers fail this before anything is decoded.
    if not TEXT_LEADS.issuperset(run[::4]):
        return None
    n = len(text)
    while end < n and text[end] == "=" and end - start < len(run) + 2:
        end += 1  # padding belongs to the blob
    body = run[: len(run) - len(run) % 4] if len(run) % 4 == 1 else run
    try:
        raw = binascii.a2b_base64((body + "=" * (-len(body) % 4)).translate(URL_TO_STD))
    except (ValueError, binascii.Error):
        return None
    if not raw.isascii():
        return None
    spans = judge(raw.decode("ascii"))
    if not spans:
        return None
    return start, end, spans[0][2] if len(spans) == 1 else sp.marker("secret")
