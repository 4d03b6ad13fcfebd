"""Short ids of recalled items (issue 19): what `total-recall why ID` and `feedback ID` take, printed
with every injected item. An id is a hash of what the item *is* (its kind, its project or session and
its normalised text), never of a row id, so it survives `rebuild` and the same memory reached by two
paths (a bundle rule, a prompt-recall hit) gets one id. Here at the bottom of the layers: the index
renders ids, the hooks and the CLI look them up."""

from __future__ import annotations

import re

ID_RE = re.compile(r"^#?([0-9a-f]{8})$")


def norm_text(text: str | None) -> str:
    """The text an id and a `wrong` verdict are keyed by: lower case, one space, 160 characters."""
    return " ".join((text or "").lower().split())[:160]


def memory_id(kind: str, where: str | None, text: str | None) -> str:
    """8 hex characters for (kind, project key or session, normalised text)."""
    import hashlib  # here: the PreToolUse hook needs it only when a ban matches

    raw = f"{kind}\x1f{where or ''}\x1f{norm_text(text)}".encode("utf-8", "replace")
    return hashlib.blake2b(raw, digest_size=4).hexdigest()


def parse_id(text: str) -> str | None:
    """`a1b2c3d4` or `#a1b2c3d4` → `a1b2c3d4`; anything else → None."""
    m = ID_RE.match(text.strip().lower())
    return m.group(1) if m else None
