"""Re-injection policy for UserPromptSubmit (D2). Pure: the prompt hook supplies the state it keeps
per session (a small JSON file, never the index DB) and the number of index hits for identifiers.

Decide before retrieval (`decide`), then filter what retrieval found (`filter_items`):

- **hard triggers** fire even during the cool-down: the prompt refers to the past ("last time",
  "we decided", "remember", "again", "like before" …), reads as a correction, or names an
  identifier (snake_case, camelCase, a path, a file, an error code, `code`) that the index knows;
- **soft triggers** fire when no injection happened in the last `COOLDOWN` prompts: the first
  substantial prompt of the session, a topic shift (little word overlap with the recent prompts),
  or a long gap since the previous prompt;
- **suppressors** always win: trivial prompts ("ok", "yes", "continue" …), slash commands, the
  per-session cap; after retrieval, items injected earlier in the session and items whose text the
  prompt already contains are dropped, and nothing is injected when nothing is left.

Outcome (for `total-recall adaptive`): when the next prompt of the session arrives, the previous
decision is judged. An injection was *useful* unless that next prompt is a correction or repeats
the prompt it answered (≥ 0.6 word overlap, or "again" / "I already said"). A skipped prompt
followed by a correction or a repeat counts as a *miss*.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

from detector.escalation import REPEAT, looks_like_correction, similarity
from lib.text import STOPWORDS

MAX_INJECTIONS = 8  # per session
COOLDOWN = 2  # prompts after an injection before a soft trigger may fire again
GAP_SECONDS = 30 * 60
SHIFT_OVERLAP = 0.12
MEMORY = 60  # item keys remembered per session (suppresses re-injecting the same items)

PAST = re.compile(
    r"\b(?:last time|(?:the )?(?:other|previous|last) (?:day|session|week|time)|we (?:decided|agreed|discussed|"
    r"said|chose|tried|did|had|fixed|talked)|(?:you|i) (?:said|told|suggested|mentioned)|remember|recall|"
    r"again|like before|as before|same as (?:before|last)|previously|earlier|yesterday|before we|"
    r"what did we|did we (?:ever|already)|used to|the session where|back when|history of)\b",
    re.I,
)
TRIVIAL = re.compile(
    r"^\s*(?:ok(?:ay)?|k|y|yes|yep|yeah|yup|sure|no|nope|continue|go(?: on| ahead)?|proceed|next|do it|"
    r"thanks?(?: you)?|thx|ty|lgtm|great|good|nice|perfect|cool|done|stop|wait|retry|try again|again|"
    r"sounds good|looks good|go for it|please do|please continue|keep going|carry on)\s*(?:[.!?]+\s*)?$",
    re.I,
)
IDENT = re.compile(
    r"`([^`\n]{3,60})`"
    r"|(?<![\w/.-])((?:[\w.-]+/)+[\w.-]+)"  # paths
    r"|(?<![\w-])-*(\w[\w-]*\.(?:py|pyi|ts|tsx|js|jsx|mjs|json|md|rs|go|rb|ex|exs|java|kt|c|h|cpp|hpp|cs|sh|toml|ya?ml|sql|"
    r"css|html|vue|svelte|lock|cfg|ini|txt))\b"  # files, from a word's start (\b would retry a-b-c-… per part)
    r"|\b([A-Za-z][a-z0-9]*_[A-Za-z0-9_]+)\b"  # snake_case
    r"|\b([a-z]+[A-Z][A-Za-z0-9]+)\b"  # camelCase
    r"|\b([A-Z][a-z0-9]+[A-Z][A-Za-z0-9]+)\b"  # PascalCase with two humps
    r"|\b([A-Z]{1,5}[-_]?\d{2,6})\b"
)  # error codes: E1234, TS2345, ERR-42
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9']{2,}")
_STOP = STOPWORDS | frozenset(("it's", "like", "need", "now", "one", "two", "want"))


@dataclass(slots=True)
class PolicyState:
    """Per-session policy state, persisted as JSON by the hook."""

    session_id: str = ""
    prompts: int = 0
    injections: int = 0
    last_injection_prompt: int = -1000
    last_prompt_at: float | None = None
    last_prompt: str = ""
    recent_terms: list[list[str]] = field(default_factory=list)
    injected: list[str] = field(default_factory=list)  # keys of items injected in this session
    pending: dict[str, Any] | None = None  # the previous decision, judged when the next prompt arrives

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Any, session_id: str = "") -> PolicyState:
        st = cls(session_id=session_id)
        if not isinstance(data, dict):
            return st
        for name in ("prompts", "injections", "last_injection_prompt"):
            if isinstance(data.get(name), int):
                setattr(st, name, data[name])
        if isinstance(data.get("last_prompt_at"), (int, float)):
            st.last_prompt_at = float(data["last_prompt_at"])
        if isinstance(data.get("last_prompt"), str):
            st.last_prompt = data["last_prompt"]
        if isinstance(data.get("recent_terms"), list):
            st.recent_terms = [[str(w) for w in t] for t in data["recent_terms"] if isinstance(t, list)][-3:]
        if isinstance(data.get("injected"), list):
            st.injected = [str(k) for k in data["injected"]][-MEMORY:]
        if isinstance(data.get("pending"), dict):
            st.pending = data["pending"]
        return st


@dataclass(slots=True)
class Decision:
    fire: bool
    reason: str
    triggers: list[str] = field(default_factory=list)
    suppressors: list[str] = field(default_factory=list)
    identifiers: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def terms(text: str) -> list[str]:
    return sorted({w.lower() for w in _WORD.findall(text[:2000])} - _STOP)


def identifiers(prompt: str, limit: int = 5) -> list[str]:
    """Code-like tokens in the prompt, in order of appearance."""
    out: list[str] = []
    for m in IDENT.finditer(prompt[:4000]):
        tok = next((g for g in m.groups() if g), "").strip()
        if len(tok) >= 3 and tok not in out and not tok.startswith(("http:", "https:")):
            out.append(tok)
        if len(out) >= limit:
            break
    return out


def is_trivial(prompt: str) -> bool:
    return bool(TRIVIAL.match(prompt)) or not prompt.strip()


def decide(
    prompt: str,
    state: PolicyState,
    *,
    now: float,
    ident_hits: int = 0,
    idents: list[str] | None = None,
    cap: int = MAX_INJECTIONS,
) -> Decision:
    """Should this prompt get recalled context? (`ident_hits`: index hits for `idents`.)"""
    text = prompt.strip()
    idents = identifiers(text) if idents is None else idents
    if is_trivial(text):
        return Decision(False, "trivial", suppressors=["trivial"])
    if text.startswith("/"):
        return Decision(False, "slash_command", suppressors=["slash_command"])
    if state.injections >= cap:
        return Decision(False, "cap", suppressors=["cap"], identifiers=idents)
    hard = []
    if PAST.search(text):
        hard.append("past_reference")
    if looks_like_correction(text):
        hard.append("correction")
    if idents and ident_hits > 0:
        hard.append("identifier")
    soft = []
    words = terms(text)
    if state.prompts == 0 and len(words) >= 3:
        soft.append("first_prompt")
    elif state.recent_terms and len(words) >= 4:
        recent = {w for t in state.recent_terms for w in t}
        overlap = len(recent & set(words)) / max(len(set(words)), 1)
        if overlap < SHIFT_OVERLAP:
            soft.append("topic_shift")
    if state.last_prompt_at is not None and now - state.last_prompt_at > GAP_SECONDS and len(words) >= 3:
        soft.append("long_gap")
    if hard:
        return Decision(True, "hard:" + hard[0], hard + soft, identifiers=idents)
    if soft:
        if state.prompts - state.last_injection_prompt <= COOLDOWN:
            return Decision(False, "cooldown", soft, ["cooldown"], idents)
        return Decision(True, "soft:" + soft[0], soft, identifiers=idents)
    return Decision(False, "no_trigger", identifiers=idents)


def contained(item_text: str, prompt: str) -> bool:
    """The prompt already carries this item (it was pasted or restated)."""
    iw = set(terms(item_text))
    if len(iw) < 3:
        return False
    return len(iw & set(terms(prompt))) / len(iw) >= 0.8


def filter_items(
    items: list[tuple[str, str]], prompt: str, state: PolicyState
) -> tuple[list[tuple[str, str]], list[str]]:
    """Drop (key, text) items injected earlier in the session or already in the prompt.
    Returns the kept items and the suppressors that applied."""
    seen = set(state.injected)
    kept, why = [], []
    for key, text in items:
        if key in seen:
            why.append("already_injected")
            continue
        if contained(text, prompt):
            why.append("prompt_contains_answer")
            continue
        kept.append((key, text))
    return kept, sorted(set(why))


def judge(pending: dict[str, Any] | None, prompt: str) -> dict[str, Any] | None:
    """Outcome of the previous decision, given the prompt that followed it (see module docstring)."""
    if not pending:
        return None
    prev = str(pending.get("prompt") or "")
    corrected = looks_like_correction(prompt)
    repeated = bool(REPEAT.search(prompt)) or similarity(prompt, prev) >= 0.6
    bad = corrected or repeated
    fired = bool(pending.get("fired"))
    return {
        "fired": fired,
        "reason": pending.get("reason"),
        "useful": (not bad) if fired else None,
        "missed": bad if not fired else None,
        "next_is_correction": corrected,
        "next_is_repeat": repeated,
    }


def advance(
    state: PolicyState, prompt: str, decision: Decision, injected_keys: list[str], now: float
) -> None:
    """Record this prompt and decision in the session state."""
    fired = bool(injected_keys)
    if fired:
        state.injections += 1
        state.last_injection_prompt = state.prompts
        state.injected = (state.injected + injected_keys)[-MEMORY:]
    state.prompts += 1
    state.last_prompt_at = now
    state.last_prompt = prompt[:400]
    words = terms(prompt)
    if words and not is_trivial(prompt):
        state.recent_terms = (state.recent_terms + [words[:60]])[-3:]
    state.pending = {"fired": fired, "reason": decision.reason, "prompt": prompt[:400], "at": now}
