"""The scrubber's fast paths equal the slow ones they replaced (speed pass, branch wt-walk).

- Identifier-shaped short strings are recognised by a byte table (`ID_TABLE`) instead of
  `str.strip(ID_CHARS)`: the same verdict for any text of 8 characters or more.
- `blob_marks` are computed once per text and handed to `blob_spans`: the same spans as computing
  them there; so is the first scan match.
- `scrub_changes` (a chunk's distinct values in one batch) gives `scrub_text`'s verdict for each.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from extractors import scrubber
from extractors import secret_patterns as sp
from extractors.scrub_base64 import blob_marks, blob_spans
from extractors.scrub_batch import scrub_changes

ALPHABET = sp.ID_CHARS + "ABCFTZgxyz_ /=\t\né€😀\x00\x7f\xff"


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=ALPHABET, min_size=8, max_size=80))
def test_id_table_equals_strip(text: str) -> None:
    fast = text.isascii() and text.encode().translate(scrubber.ID_TABLE).isspace()
    assert fast == (not text.strip(sp.ID_CHARS))


def test_id_table_covers_every_byte() -> None:
    for i in range(128):
        c = chr(i)
        assert (c * 8).encode().translate(scrubber.ID_TABLE).isspace() == (c in sp.ID_CHARS)


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


PIECES = [
    "3f2a9c1e-7b4d-4e2a-9c1e-7b4d4e2a9c1e",
    "2026-11-29T10:31:24.123Z",
    "msg_01ABCdefGHIjklMNOpqr",
    "toolu_01XYZ",
    "password=hunter2hunter2",
    "ghp_" + "a1B2" * 9,
    "Authorization: Bearer abcdefghijklmnop1234",
    "https://user:s3cr3tpassw0rd@example.com/x",
    "Z2hwX2FiY2RlZmdoaWprbG1ub3BxcnN0dXZ3eHl6MDEyMzQ1Njc4OQ==",
    "plain words",
    " é 😀 ",
    "\x00",
    "\n",
    "-",
    "=",
]
TEXTS = st.lists(st.sampled_from(PIECES), max_size=8).map("".join)


@settings(max_examples=300, deadline=None)
@given(TEXTS)
def test_scrub_text_equals_the_full_path(text: str) -> None:
    """Every shortcut of `scrub_text` (identifier shapes, no scan match, marks and first match handed
    down) gives what the full path (`_scrub`: every candidate, every blob) gives."""
    scrubber.clear_caches()
    assert scrubber.scrub_text(text) == scrubber._scrub(text)


@settings(max_examples=300, deadline=None)
@given(st.lists(TEXTS, max_size=12))
def test_scrub_changes_equals_scrub_text_of_each(texts: list[str]) -> None:
    want = {t: c for t in texts if (c := scrubber.scrub_text(t)) != t}
    assert scrub_changes(texts) == want
