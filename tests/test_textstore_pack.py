"""Message bodies at rest (index/store/textstore.py): what `pack` stores reads back as the text, and
bodies written by earlier versions (other thresholds, compressor objects, zlib headers, raw) still
read."""

from __future__ import annotations

import zlib

from hypothesis import given, settings
from hypothesis import strategies as st

from index.store.textstore import _MIN_COMPRESS, pack, unpack

# Texts around the raw/deflate threshold, with repeats (so deflate finds matches) and non-ASCII.
_TEXT = st.builds(
    lambda head, n, tail: head * n + tail,
    st.text(alphabet="abc XY_é\n{}", max_size=40),
    st.integers(min_value=0, max_value=30),
    st.text(max_size=600),
)


def _old_pack(text: str, threshold: int = 200) -> bytes:
    """Bodies as the tree before 2026-11-29 stored them: a compressor object, raw below 200 bytes."""
    data = text.encode("utf-8", "replace")
    if len(data) < threshold:
        return b"\x00" + data
    z = zlib.compressobj(1, zlib.DEFLATED, -15)
    return b"\x02" + z.compress(data) + z.flush()


@settings(max_examples=300, deadline=None)
@given(_TEXT)
def test_pack_reads_back(text: str) -> None:
    assert unpack(pack(text)) == text.encode("utf-8", "replace").decode("utf-8", "replace")


@settings(max_examples=300, deadline=None)
@given(_TEXT)
def test_above_the_threshold_the_bytes_are_as_before(text: str) -> None:
    if len(text.encode("utf-8", "replace")) >= _MIN_COMPRESS:
        assert pack(text) == _old_pack(text)


@settings(max_examples=200, deadline=None)
@given(_TEXT)
def test_old_bodies_still_read(text: str) -> None:
    want = text.encode("utf-8", "replace").decode("utf-8", "replace")
    data = text.encode("utf-8", "replace")
    assert unpack(_old_pack(text)) == want  # raw below 200 bytes, raw deflate from 200
    assert unpack(_old_pack(text, threshold=0)) == want  # every length deflated
    assert unpack(b"\x01" + zlib.compress(data)) == want  # zlib-headed (0.1.0 pre-releases)
    assert unpack(b"\x00" + data) == want


def test_short_texts_stay_raw_and_long_ones_shrink() -> None:
    short = "x" * (_MIN_COMPRESS - 1)
    assert pack(short) == b"\x00" + short.encode()
    long = "parseConfig " * 100
    assert pack(long)[:1] == b"\x02" and len(pack(long)) < len(long) // 4
    assert unpack(None) == "" and unpack("as stored") == "as stored"
