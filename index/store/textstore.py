"""Message text at rest: compressed, and turned back into text and snippets on the way out.

The FTS index is contentless (it keeps only terms), so the text column is free to be compact;
short texts stay raw because zlib would make them longer.
"""

from __future__ import annotations

import functools
import re
import zlib

_RAW, _ZLIB, _DEFLATE = b"\x00", b"\x01", b"\x02"  # _ZLIB: indexes written by 0.1.0 pre-releases
# Below this many bytes a text is stored raw: each deflate call costs ~10 us before its first byte
# (setting up the compressor, building the block's Huffman trees) and saves at most a few hundred
# bytes here, so short texts cost the parsers more CPU per byte saved than long ones
# (docs/benchmarks.md, "Pack, identifier parts and the hand-over").
_MIN_COMPRESS = 400


def pack(text: str) -> bytes:
    """Raw deflate at level 1: most of the size win of higher levels at a third of the CPU. (A
    compressor object: `zlib.compress` takes `wbits` only from Python 3.11.)"""
    return pack_utf8(text.encode("utf-8", "replace"))


def pack_utf8(data: bytes) -> bytes:
    """`pack` of the text whose UTF-8 (`errors="replace"`) is `data`."""
    if len(data) < _MIN_COMPRESS:
        return _RAW + data
    z = zlib.compressobj(1, zlib.DEFLATED, -15)
    return _DEFLATE + z.compress(data) + z.flush()


def unpack(blob: bytes | str | None) -> str:
    if blob is None:
        return ""
    if isinstance(blob, str):
        return blob
    if blob[:1] == _DEFLATE:
        return zlib.decompress(blob[1:], -15).decode("utf-8", "replace")
    if blob[:1] == _ZLIB:
        return zlib.decompress(blob[1:]).decode("utf-8", "replace")
    return blob[1:].decode("utf-8", "replace")


# Chars of a text searched for the window first: the scan is what a snippet costs, and a long tool
# output holding the terms near its start (the usual case) need not be read to its end.
_SCAN = 20_000


def _needle(term: str) -> str:
    """Regex for one query term: identifiers verbatim, words by their stem up to the word's end."""
    if not term.isalnum():
        return re.escape(term)
    stem = term[: max(4, len(term) - 2)] if len(term) > 5 else term
    return r"(?<![^\W_])" + re.escape(stem) + r"[^\W_]*"


@functools.lru_cache(maxsize=32)
def _pattern(needles: tuple[str, ...]) -> re.Pattern[str]:
    """One query's terms as one pattern, built once per query rather than once per snippet. The
    lookahead on the terms' first letters lets the scan skip most positions without trying each term."""
    first = "".join(sorted({re.escape(n[0].lower()) for n in needles}))
    # A word matches only where a word starts, so inside a word only an identifier's first letter
    # can start a match: that test fails most positions first (same matches, 2x faster on long text).
    loose = "".join(sorted({re.escape(n[0].lower()) for n in needles if not n.isalnum()}))
    start = r"(?:(?<![^\W_])|(?=[" + loose + "]))" if loose else r"(?<![^\W_])"
    return re.compile(f"{start}(?=[{first}])(?:" + "|".join(_needle(n) for n in needles) + ")", re.I)


def _needles(terms: list[str]) -> tuple[str, ...]:
    return tuple(sorted({t for t in terms if len(t) > 1}, key=len, reverse=True))


def split_marks(marked: str, terms: list[str]) -> list[tuple[str, bool]]:
    """A `snippet` as (piece, is_match) pairs without its [marks]; brackets of the text itself stay
    (`[[x]]` around a match of `x` is the text's `[x]`)."""
    needles = _needles(terms)
    if not needles:
        return [(marked, False)]
    out: list[tuple[str, bool]] = []
    pos = 0
    for m in re.finditer(r"\[(" + _pattern(needles).pattern + r")\]", marked, re.I):
        out += [(marked[pos : m.start()], False), (m.group(1), True)]
        pos = m.end()
    out.append((marked[pos:], False))
    return [p for p in out if p[0]]


# Characters that `re.IGNORECASE` equates with an ASCII letter though `str.lower` does not map them
# to it (dotless i, long s; the dotted capital I and the Kelvin sign for good measure).
_FOLDS_TO_ASCII = ("\u0131", "\u017f", "\u0130", "\u212a")


def _starts(rx: re.Pattern[str], needles: tuple[str, ...], flat: str, lo: int, hi: int) -> list[int]:
    """Where the first 400 matches of `rx` in flat[lo:hi] start, as `rx.finditer` finds them. Every
    match starts with a term's first letters, so the pattern is tried only where `str.find` sees them
    in the lower-cased text (20x fewer tries on long tool output); when lower-casing could move or hide
    a letter (a character it lengthens, one the regex folds differently) every position is tried."""
    low = flat.lower()
    if (
        len(low) != len(flat)
        or not all(n.isascii() for n in needles)
        or any(c in flat for c in _FOLDS_TO_ASCII)
    ):
        return [m.start() for _, m in zip(range(400), rx.finditer(flat, lo, hi))]
    places: set[int] = set()
    for head in {n[:3].lower() for n in needles}:
        at = low.find(head, lo, hi)
        while at >= 0:
            places.add(at)
            at = low.find(head, at + 1, hi)
    out: list[int] = []
    end = lo
    for at in sorted(places):
        if at < end:
            continue  # inside the previous match, which finditer does not look into
        m = rx.match(flat, at, hi)
        if m:
            out.append(at)
            end = m.end()
            if len(out) == 400:
                break
    return out


def snippet(text: str, terms: list[str], width: int = 220) -> str:
    """A window of `text` around the densest run of query terms, terms in [brackets]."""
    flat = " ".join(text.split())
    if not flat:
        return ""
    needles = _needles(terms)
    if not needles:
        return flat[:width] + ("…" if len(flat) > width else "")
    rx = _pattern(needles)
    positions = _starts(rx, needles, flat, 0, _SCAN)
    if not positions and len(flat) > _SCAN:  # a long text whose start does not hold the terms
        positions = _starts(rx, needles, flat, _SCAN, len(flat))
    if not positions:
        return flat[:width] + ("…" if len(flat) > width else "")
    best, best_n, j = positions[0], 0, 0
    for i, p in enumerate(positions):
        while positions[j] < p - width // 2:
            j += 1
        if i - j + 1 > best_n:
            best, best_n = positions[j], i - j + 1
    lo = max(0, best - width // 4)
    hi = min(len(flat), lo + width)
    out = rx.sub(lambda m: f"[{m.group(0)}]", flat[lo:hi])
    return ("…" if lo > 0 else "") + out + ("…" if hi < len(flat) else "")
