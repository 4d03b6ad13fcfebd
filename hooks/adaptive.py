"""`total-recall adaptive`: how well the re-injection policy did, from the events the hooks recorded.

The user's verdicts (`feedback` events: `total-recall feedback ID wrong|helpful`) are counted per
section of the injection, and PreToolUse decisions per outcome.

Each UserPromptSubmit event carries the policy decision and, from the second prompt of a session
on, the outcome of the previous decision (see detector/policy.py for the rule): an injection is
useful unless the next prompt is a correction or a repeat; a skipped prompt followed by one is a miss.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Any

MIN_SAMPLES = 10


def _pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    s = sorted(values)
    return round(s[min(len(s) - 1, int(q * (len(s) - 1) + 0.5))], 1)


def _ratio(a: int, b: int) -> float | None:
    return round(a / b, 3) if b else None


def report(events: Iterable[dict[str, Any]]) -> dict[str, Any]:
    latency: dict[str, list[float]] = defaultdict(list)
    errors: Counter[str] = Counter()
    runs: Counter[str] = Counter()
    decisions: Counter[str] = Counter()
    suppressors: Counter[str] = Counter()
    by_reason: dict[str, Counter[str]] = defaultdict(Counter)
    prompts = fired = injected_chars = 0
    judged_fired = useful = judged_skipped = missed = 0
    index_runs = index_errors = 0
    verdicts: dict[str, Counter[str]] = defaultdict(Counter)  # section (or hook) -> wrong/helpful
    tool_calls: Counter[str] = Counter()
    for e in events:
        if e.get("event") == "feedback":
            verdicts[str(e.get("section") or e.get("kind") or "?")][str(e.get("verdict"))] += 1
            continue
        if e.get("event") == "index":
            index_runs += 1
            index_errors += not e.get("ok", False)
            continue
        if e.get("event") != "hook":
            continue
        hook = str(e.get("hook"))
        runs[hook] += 1
        if isinstance(e.get("latency_ms"), (int, float)):
            latency[hook].append(float(e["latency_ms"]))
        if not e.get("ok", False):
            errors[hook] += 1
        if hook == "pre-tool-use":
            tool_calls[str(e.get("decision") or "error")] += 1
        if hook != "user-prompt-submit":
            continue
        pol = e.get("policy")
        if isinstance(pol, dict):
            prompts += 1
            decisions[str(pol.get("reason"))] += 1
            suppressors.update(str(s) for s in pol.get("suppressors") or [])
            if pol.get("fire"):
                fired += 1
                injected_chars += int(e.get("injected_chars") or 0)
        out = e.get("outcome")
        if isinstance(out, dict):
            reason = str(out.get("reason"))
            if out.get("fired"):
                judged_fired += 1
                ok = bool(out.get("useful"))
                useful += ok
                by_reason[reason]["judged"] += 1
                by_reason[reason]["useful"] += ok
            else:
                judged_skipped += 1
                missed += bool(out.get("missed"))
    per_trigger = {
        r: {"judged": c["judged"], "useful": c["useful"], "precision": _ratio(c["useful"], c["judged"])}
        for r, c in sorted(by_reason.items())
    }
    rep: dict[str, Any] = {
        "prompts": prompts,
        "fired": fired,
        "fire_rate": _ratio(fired, prompts),
        "avg_injected_chars": round(injected_chars / fired) if fired else 0,
        "precision": _ratio(useful, judged_fired),
        "judged_injections": judged_fired,
        "useful_injections": useful,
        "miss_rate": _ratio(missed, judged_skipped),
        "judged_skips": judged_skipped,
        "missed": missed,
        "per_trigger": per_trigger,
        "decisions": dict(decisions.most_common()),
        "suppressors": dict(suppressors.most_common()),
        "hooks": {
            h: {
                "runs": runs[h],
                "errors": errors[h],
                "p50_ms": _pct(latency[h], 0.5),
                "p95_ms": _pct(latency[h], 0.95),
            }
            for h in sorted(runs)
        },
        "index_runs": index_runs,
        "index_errors": index_errors,
        "feedback": _feedback(verdicts),
        "tool_calls": dict(tool_calls.most_common()),  # PreToolUse: allow / warn / deny / skip
    }
    rep["advice"] = advice(rep)
    return rep


def _feedback(verdicts: dict[str, Counter[str]]) -> dict[str, Any]:
    """The user's verdicts on injected items (`total-recall feedback`), overall and per section."""
    wrong = sum(c["wrong"] for c in verdicts.values())
    helpful = sum(c["helpful"] for c in verdicts.values())
    return {
        "wrong": wrong,
        "helpful": helpful,
        "precision": _ratio(helpful, wrong + helpful),
        "by_section": {k: dict(c) for k, c in sorted(verdicts.items())},
    }


def advice(rep: dict[str, Any]) -> list[str]:
    out = []
    fb = rep["feedback"]
    for section, c in fb["by_section"].items():
        n = c.get("wrong", 0) + c.get("helpful", 0)
        if n >= MIN_SAMPLES // 2 and c.get("wrong", 0) / n >= 0.3:
            out.append(
                f"{section}: {c.get('wrong', 0)} of {n} rated items marked wrong — "
                "raise the injection threshold of this kind (extractors/confidence.py)"
            )
    for reason, r in rep["per_trigger"].items():
        if r["judged"] >= MIN_SAMPLES and r["precision"] is not None and r["precision"] < 0.5:
            out.append(
                f"{reason}: precision {r['precision']:.0%} over {r['judged']} injections — "
                f"this trigger mostly injects what did not help"
            )
    if (
        rep["judged_injections"] >= MIN_SAMPLES
        and (rep["precision"] or 0) >= 0.8
        and (rep["miss_rate"] or 0) > 0.2
    ):
        out.append(
            f"precision is high but {rep['miss_rate']:.0%} of skipped prompts were followed by a correction "
            "or repeat — the policy could fire more often"
        )
    if rep["judged_injections"] < MIN_SAMPLES:
        out.append(
            f"only {rep['judged_injections']} judged injections so far; figures firm up after {MIN_SAMPLES}+"
        )
    for hook, h in rep["hooks"].items():
        if h["runs"] and h["errors"] / h["runs"] > 0.1:
            out.append(f"{hook}: {h['errors']} of {h['runs']} runs failed — see events.jsonl")
    return out
