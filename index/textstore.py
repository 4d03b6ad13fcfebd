"""Message text at rest: compressed, and turned back into text and snippets on the way out.

The FTS index is contentless (it keeps only terms), so the text column is free to be compact;
short texts stay raw because zlib would make them longer.
"""

from __future__ import annotations

import re
import zlib

_RAW, _DEFLATE = b"\x00", b"\x02"
_MIN_COMPRESS = 200  # below this, deflate saves little and its per-call setup dominates


def pack(text: str) -> bytes:
    """Raw deflate at level 1: most of the size win of higher levels at a third of the CPU."""
    data = text.encode("utf-8", "replace")
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
    return blob[1:].decode("utf-8", "replace")


_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def snippet(text: str, terms: list[str], width: int = 220) -> str:
    """A window of `text` around the densest run of query terms, terms in [brackets]."""
    flat = " ".join(text.split())
    if not flat:
        return ""
    low = flat.lower()
    needles = sorted({t.lower() for t in terms if len(t) > 1}, key=len, reverse=True)
    positions: list[tuple[int, int]] = []
    for n in needles:
        stem = n[: max(4, len(n) - 2)] if len(n) > 5 else n
        start = 0
        while len(positions) < 200:
            i = low.find(stem, start)
            if i < 0:
                break
            positions.append((i, len(stem)))
            start = i + 1
    if not positions:
        return flat[:width] + ("…" if len(flat) > width else "")
    positions.sort()
    best, best_n = positions[0][0], 0
    j = 0
    for i, (p, _) in enumerate(positions):
        while positions[j][0] < p - width // 2:
            j += 1
        if i - j + 1 > best_n:
            best, best_n = positions[j][0], i - j + 1
    lo = max(0, best - width // 4)
    hi = min(len(flat), lo + width)
    out = flat[lo:hi]
    for n in needles:
        out = re.sub("(?i)(" + re.escape(n[: max(4, len(n) - 2)] if len(n) > 5 else n) + r"\w*)", r"[\1]", out)
    out = re.sub(r"\[\[([^\]]*)\]\]", r"[\1]", out)
    return ("…" if lo > 0 else "") + out + ("…" if hi < len(flat) else "")
