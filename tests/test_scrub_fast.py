"""The scrubber's fast paths equal the slow ones they replaced (speed pass, branch wt-walk).

- Identifier-shaped short strings are recognised by a byte table (`_ID_TABLE`) instead of
  `str.strip(ID_CHARS)`: the same verdict for any text of 8 characters or more.
- `blob_marks` are computed once per text and handed to `blob_spans`: the same spans as computing
  them there.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from extractors import scrubber
from extractors import secret_patterns as sp
from extractors.scrub_base64 import blob_marks, blob_spans

ALPHABET = sp.ID_CHARS + "ABCFTZgxyz_ /=\t\né€😀\x00\x7f\xff"


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=ALPHABET, min_size=8, max_size=80))
def test_id_table_equals_strip(text: str) -> None:
    fast = text.isascii() and text.encode().translate(scrubber._ID_TABLE).isspace()
    assert fast == (not text.strip(sp.ID_CHARS))


def test_id_table_covers_every_byte() -> None:
    for i in range(128):
        c = chr(i)
        assert (c * 8).encode().translate(scrubber._ID_TABLE).isspace() == (c in sp.ID_CHARS)


BLOBS = [
    "echo Z2hwX2FiY2RlZmdoaWprbG1ub3BxcnN0dXZ3eHl6MDEyMzQ1Njc4OQ== | base64 -d",
    "/home/dev/project/src/a_module/very-long-path-name/ABCDEFGHIJKLMNOPQRSTUVWXYZ012345",
    "token=" + "QUtJQUlPU0ZPRE5ON0VYQU1QTEU=",
    "plain words only, é and 😀 too",
]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(BLOBS + [" ", "\n", "x" * 30]), max_size=6).map("".join))
def test_blob_marks_handed_down_equal_recomputed(text: str) -> None:
    assert blob_spans(text, scrubber._spans, blob_marks(text)) == blob_spans(text, scrubber._spans)
