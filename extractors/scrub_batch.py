"""The one scrubber over many strings at once: what `scrub_text` changes among a chunk's distinct values.

Most distinct values of a parsed chunk are identifiers (record and session UUIDs, timestamps: ~37 k per
49 MB, and ~13 k API ids), which `scrub_text` returns as they are after a call, a cache look-up and an
identifier test each (~2,000 instructions). Here the short ASCII ones are joined and mapped through the
scrubber's own identifier table in one C pass, each is then told apart by its
segment of the marks, and only the rest go through `scrub_text`. The verdict is `scrub_text`'s for every
value: an identifier-shaped short string or an API id is exactly what it returns unchanged before any
scan, and everything else is passed to it.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import compress, filterfalse
from operator import not_

from extractors.scrubber import API_ID, ID_TABLE, MIN_LEN, SHORT, scrub_text


def scrub_changes(texts: Iterable[str]) -> dict[str, str]:
    """Each of `texts` that scrubbing changes, mapped to its scrubbed form (`scrub_text`)."""
    ids: list[str] = []  # short ASCII values: identifier-shaped unless the marks say otherwise
    out: dict[str, str] = {}
    for t in texts:
        n = len(t)
        if n < MIN_LEN:
            continue  # scrub_text returns these untouched
        if n <= SHORT and t.isascii():
            ids.append(t)
            continue
        clean = scrub_text(t)
        if clean is not t and clean != t:
            out[t] = clean
    # One segment of marks per value (" " for an identifier character, "x" otherwise), told apart in C;
    # a value holding the separator makes more segments: then each is judged on its own.
    marks = SEP.join(ids).encode().translate(_TABLE).split(b"\n")
    rest: Iterable[str] = (
        compress(ids, map(not_, map(bytes.isspace, marks))) if len(marks) == len(ids) else ids
    )
    for t in filterfalse(API_ID, rest):  # API ids (~13 k per 49 MB) told apart in C, not one by one
        clean = scrub_text(t)
        if clean is not t and clean != t:
            out[t] = clean
    return out


SEP = "\x00"
_TABLE = b"\n" + ID_TABLE[1:]  # the scrubber's identifier table, the separator (byte 0) as "\n"
