"""The one budget/truncation helper: clip text, cap fields, and fit prioritised sections into a
character budget, saying what was cut. Used by hook bundles, recall injection and MCP responses."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lib.injected import FENCE_CHARS, fence
from lib.text import ELLIPSIS, clip

ERROR_CHARS = 600  # an error's message, and its fix, on every surface: arguments are echoed clipped


def estimate_tokens(text: str) -> int:
    """Rough token count (≈ 4 chars per token) for progressive-disclosure hints."""
    return max(1, (len(text) + 3) // 4)


@dataclass(slots=True)
class Section:
    """A titled list of lines; lower priority number = more important (evicted last)."""

    title: str
    lines: list[str]
    priority: int


@dataclass(slots=True)
class Fitted:
    text: str
    dropped: dict[str, int] = field(default_factory=dict)  # section title -> lines dropped


def fit_sections(
    sections: list[Section], budget: int, header: str = "", footer: str = "", title_fmt: str = "{}:"
) -> Fitted:
    """Render sections in the given order, evicting the least important lines first until the whole
    text (header + sections + footer) fits in `budget` characters. `title_fmt` renders a section's
    title line (`"\n## {}\n"` for Markdown headings)."""
    keep = {id(s): list(s.lines) for s in sections}
    dropped: dict[str, int] = {}

    def render() -> str:
        parts = [header] if header else []
        for s in sections:
            lines = keep[id(s)]
            if lines:
                parts.append(title_fmt.format(s.title) + "\n" + "\n".join(f"- {ln}" for ln in lines))
        if footer:
            parts.append(footer)
        return "\n".join(parts)

    text = render()
    by_priority = sorted(sections, key=lambda s: -s.priority)
    while len(text) > budget:
        victim = next((s for s in by_priority if keep[id(s)]), None)
        if victim is None:
            break
        keep[id(victim)].pop()
        dropped[victim.title] = dropped.get(victim.title, 0) + 1
        text = render()
    if len(text) > budget:
        text = clip(text, budget)
    return Fitted(text, dropped)


def fit_fenced(sections: list[Section], budget: int, header: str = "", footer: str = "") -> Fitted:
    """`fit_sections` inside the total-recall fence (lib/injected.py), which counts against the budget:
    how every block a hook injects is rendered."""
    fitted = fit_sections(sections, budget - FENCE_CHARS, header=header, footer=footer)
    return Fitted(fence(fitted.text) if fitted.text else "", fitted.dropped)


NOTE_CHARS = 160  # at most, the room kept for the size note of `fit_fenced_noted` (budget // 8 when less)


def fit_fenced_noted(
    sections: list[Section], budget: int, header: str = "", also: str = ""
) -> tuple[Fitted, int]:
    """`fit_fenced` whose last line states the block's size in tokens and what was dropped for budget
    (per section when there is room, else how many lines), plus `also` (e.g. what was left out for
    another reason): (fitted, tokens)."""
    room = budget - FENCE_CHARS
    reserve = min(NOTE_CHARS, budget // 8)
    first = fit_sections(sections, room, header=header, footer="x" * reserve)
    kept = [
        Section(s.title, s.lines[: len(s.lines) - first.dropped.get(s.title, 0)], s.priority)
        for s in sections
    ]
    body = fit_sections(kept, room, header=header).text
    tokens = estimate_tokens(body) + estimate_tokens(fence("")) + reserve // 4
    cut = sum(first.dropped.values())
    parts = [f"~{tokens} tokens"]
    if cut:
        detail = ", ".join(f"{n} {title.lower()}" for title, n in first.dropped.items())
        parts.append(f"dropped for budget: {detail}")
    if also:
        parts.append(also)
    note = "(" + "; ".join(parts) + ")"
    if len(note) > reserve:
        note = f"(~{tokens} tokens" + (f"; {cut} lines dropped for budget" if cut else "") + ")"
    fitted = fit_sections(kept, room, header=header, footer=note)
    dropped = dict(first.dropped)
    for title, n in fitted.dropped.items():
        dropped[title] = dropped.get(title, 0) + n
    return Fitted(fence(fitted.text) if fitted.text else "", dropped), tokens


def cap_fields(obj: Any, field_cap: int, cut: dict[str, int] | None = None, path: str = "") -> Any:
    """Recursively clip every string longer than `field_cap`; counts cuts by field path in `cut`."""
    if isinstance(obj, str):
        if len(obj) > field_cap:
            if cut is not None:
                cut[path or "value"] = cut.get(path or "value", 0) + 1
            return obj[: field_cap - 1] + ELLIPSIS
        return obj
    if isinstance(obj, dict):
        return {k: cap_fields(v, field_cap, cut, f"{path}.{k}" if path else str(k)) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [cap_fields(v, field_cap, cut, path) for v in obj]
    return obj
