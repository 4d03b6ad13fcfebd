"""Per-model token prices (T2): a dated catalog shipped with the package, overrides, tiers.

Prices are USD per million tokens and come from `index/stats/rates.json` (never fetched at run time).
A model the catalog does not know is *unknown*: its cost is None and callers report it as such;
nothing is priced by guesswork. `<synthetic>` records (Claude Code's own placeholders) cost 0.

Long-context tiers follow the provider rule: when one request's prompt (input + cache reads +
cache writes) is above the threshold, the whole request, output included, is billed at the tier
rates. Rates can also be dated (`before`/`until`): a request is priced with the rates in force on
its UTC day.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

RATES_FILE = Path(__file__).with_name("rates.json")
# Anthropic prompt-caching multipliers of the input price, used to fill in a `--rate` override.
DEFAULT_MULTIPLIERS = {"cache_read": 0.1, "cache_write_5m": 1.25, "cache_write_1h": 2.0}
_FIELDS = ("input", "output", "cache_read", "cache_write_5m", "cache_write_1h")


class BadRate(ValueError):
    """An invalid `--rate` value; the message says what is accepted."""


@dataclass(frozen=True, slots=True)
class Rate:
    """USD per million tokens."""

    input: float
    output: float
    cache_read: float
    cache_write_5m: float
    cache_write_1h: float

    def cost(
        self, input_tokens: int, output_tokens: int, cache_read: int, cache_5m: int, cache_1h: int
    ) -> float:
        return (
            input_tokens * self.input
            + output_tokens * self.output
            + cache_read * self.cache_read
            + cache_5m * self.cache_write_5m
            + cache_1h * self.cache_write_1h
        ) / 1e6

    def to_json(self) -> dict[str, float]:
        return {f: getattr(self, f) for f in _FIELDS}


@dataclass(frozen=True, slots=True)
class Tier:
    above: int  # prompt tokens strictly above this -> the whole request at `rate`
    rate: Rate


@dataclass(frozen=True, slots=True)
class Period:
    until: str | None  # UTC date (YYYY-MM-DD) before which these rates applied; None = current
    base: Rate
    tiers: tuple[Tier, ...] = ()

    def rate_for(self, prompt_tokens: int) -> Rate:
        best = self.base
        above = -1
        for t in self.tiers:
            if prompt_tokens > t.above > above:
                best, above = t.rate, t.above
        return best


@dataclass(frozen=True, slots=True)
class ModelPrice:
    key: str
    provider: str
    periods: tuple[Period, ...]  # sorted by `until`, the current period (until=None) last
    web_search_per_1k: float = 0.0
    source: str = "catalog"  # catalog | override

    def period(self, day: str | None) -> Period:
        if day:
            for p in self.periods:
                if p.until is not None and day < p.until:
                    return p
        return self.periods[-1]

    @property
    def current(self) -> Rate:
        return self.periods[-1].base

    def thresholds(self) -> set[int]:
        return {t.above for p in self.periods for t in p.tiers}

    def to_json(self) -> dict[str, Any]:
        cur = self.periods[-1]
        return {
            "model": self.key,
            "provider": self.provider,
            "source": self.source,
            **cur.base.to_json(),
            "tiers": [{"above": t.above, **t.rate.to_json()} for t in cur.tiers],
            "history": [
                {
                    "until": p.until,
                    **p.base.to_json(),
                    "tiers": [{"above": t.above, **t.rate.to_json()} for t in p.tiers],
                }
                for p in self.periods[:-1]
            ],
            "web_search_per_1k": self.web_search_per_1k,
        }


_DATE_SUFFIX = re.compile(r"(?:-\d{8}|@\d{8}|-\d{4}-\d{2}-\d{2})$")
_BEDROCK = re.compile(r"^(?:[a-z]{2,4}\.)?anthropic\.")
_BEDROCK_VERSION = re.compile(r"-v\d+(?::\d+)?$")
_CONTEXT_SUFFIX = re.compile(r"\[[^\[\]]*\]$")  # no [ inside: a run of [ would be rescanned from each
_CLAUDE_DOT = re.compile(r"^(claude-[a-z]+-\d+)\.(\d+)")  # Copilot CLI: claude-sonnet-4.5


def normalize_model(name: str) -> str:
    """`anthropic/claude-sonnet-4-5-20250929[1m]` -> `claude-sonnet-4-5` (no lookup, just spelling).

    Drops a context-window suffix (`[1m]`), provider prefixes (`anthropic/`, `openai/`, `models/`,
    Bedrock `us.anthropic.` and `-v1:0`), and date suffixes (`-20250514`, `@20250514`, `-2025-08-07`).
    Copilot CLI's dotted Claude versions (`claude-sonnet-4.5`) are Anthropic's `claude-sonnet-4-5`.
    """
    n = _CONTEXT_SUFFIX.sub("", name.strip().lower()).strip()
    n = n.rsplit("/", 1)[-1]
    n = _BEDROCK.sub("", n)
    n = _BEDROCK_VERSION.sub("", n)
    n = _DATE_SUFFIX.sub("", n)
    return _CLAUDE_DOT.sub(r"\1-\2", n)


def _rate(d: Mapping[str, Any], inherit: Rate | None, provider: str, where: str) -> Rate:
    vals: dict[str, float] = {}
    for f in _FIELDS:
        v = d.get(f)
        if v is None:
            if inherit is not None:
                v = getattr(inherit, f)
            elif f.startswith("cache_write") and provider != "anthropic":
                v = vals["input"]  # no write surcharge outside Anthropic
            elif f == "cache_read" and provider != "anthropic":
                v = vals["input"]
            else:
                raise ValueError(f"rates.json: {where} lacks {f}")
        vals[f] = float(v)
    return Rate(**vals)


def _tiers(items: Iterable[Mapping[str, Any]], base: Rate, provider: str, where: str) -> tuple[Tier, ...]:
    out: list[Tier] = []
    for t in items:
        # a tier's missing cache fields scale with its input price like the base does
        scale = float(t["input"]) / base.input if base.input else 1.0
        scaled = Rate(*(getattr(base, f) * (scale if f != "output" else 1.0) for f in _FIELDS))
        out.append(Tier(int(t["above"]), _rate(t, scaled, provider, where)))
    return tuple(sorted(out, key=lambda x: x.above))


def _model(key: str, d: Mapping[str, Any], web: Mapping[str, float]) -> ModelPrice:
    provider = str(d.get("provider") or "unknown")
    base = _rate(d, None, provider, key)
    tiers = _tiers(d.get("tiers") or (), base, provider, key)
    periods: list[Period] = []
    for b in sorted(d.get("before") or (), key=lambda x: str(x["until"])):
        pb = _rate(b, base, provider, f"{key} before {b['until']}")
        pt = _tiers(b["tiers"], pb, provider, key) if "tiers" in b else tiers
        periods.append(Period(str(b["until"]), pb, pt))
    periods.append(Period(None, base, tiers))
    return ModelPrice(key, provider, tuple(periods), float(web.get(provider, 0.0)))


@dataclass(frozen=True)
class Catalog:
    as_of: str
    models: dict[str, ModelPrice]
    aliases: dict[str, str] = field(default_factory=dict)
    free: frozenset[str] = frozenset({"<synthetic>"})
    sources: dict[str, str] = field(default_factory=dict)
    _resolved: dict[str, str | None] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Catalog:
        web = data.get("web_search_per_1k") or {}
        models = {k: _model(k, v, web) for k, v in (data.get("models") or {}).items()}
        return cls(
            str(data.get("as_of") or "?"),
            models,
            dict(data.get("aliases") or {}),
            frozenset(data.get("free") or ("<synthetic>",)),
            dict(data.get("sources") or {}),
        )

    def resolve(self, model: str | None) -> str | None:
        """Catalog key for a model name as written in a transcript, or None when unknown."""
        if not model:
            return None
        if model in self._resolved:
            return self._resolved[model]
        key = self._resolve(model)
        self._resolved[model] = key
        return key

    def _resolve(self, model: str) -> str | None:
        n = normalize_model(model)
        for cand in (n, n[: -len("-latest")] if n.endswith("-latest") else None):
            if cand is None:
                continue
            if cand in self.models:
                return cand
            alias = self.aliases.get(cand)
            if alias in self.models:
                return alias
        return None

    def is_free(self, model: str | None) -> bool:
        return bool(model) and model in self.free

    def price(self, model: str | None) -> ModelPrice | None:
        key = self.resolve(model)
        return self.models.get(key) if key else None

    def boundaries(self) -> list[str]:
        """Every date on which some price changed, ascending (requests between two of them share rates)."""
        return sorted({p.until for m in self.models.values() for p in m.periods if p.until})

    def thresholds(self) -> list[int]:
        """Every tier threshold, highest first (for banding requests in SQL)."""
        return sorted({t for m in self.models.values() for t in m.thresholds()}, reverse=True)

    def cost(
        self,
        model: str | None,
        day: str | None,
        prompt_tokens: int,
        input_tokens: int,
        output_tokens: int,
        cache_read: int,
        cache_5m: int,
        cache_1h: int,
        web_search: int = 0,
    ) -> float | None:
        """Cost of one request (or of a group of requests sharing model, day and tier band)."""
        if self.is_free(model):
            return 0.0
        mp = self.price(model)
        if mp is None:
            return None
        rate = mp.period(day).rate_for(prompt_tokens)
        return (
            rate.cost(input_tokens, output_tokens, cache_read, cache_5m, cache_1h)
            + web_search * mp.web_search_per_1k / 1000.0
        )

    def with_overrides(self, specs: Iterable[str]) -> Catalog:
        """Apply `--rate MODEL=IN/OUT[/CACHE_READ[/WRITE_5M[/WRITE_1H]]]` overrides (flat, no tiers)."""
        models = dict(self.models)
        for spec in specs:
            name, rate = parse_rate_spec(spec, self)
            key = self.resolve(name) or normalize_model(name)
            old = models.get(key)
            models[key] = ModelPrice(
                key,
                old.provider if old else "override",
                (Period(None, rate),),
                old.web_search_per_1k if old else 0.0,
                "override",
            )
        return replace(self, models=models, _resolved={})


def parse_rate_spec(spec: str, catalog: Catalog | None = None) -> tuple[str, Rate]:
    """`claude-opus-4-7=5/25` -> ("claude-opus-4-7", Rate). Missing cache prices follow the model's
    catalog ratios when it is known, else Anthropic's multipliers (0.1 read, 1.25 5m write, 2 1h write)."""
    bad = BadRate(
        f"--rate {spec!r}: use MODEL=IN/OUT[/CACHE_READ[/WRITE_5M[/WRITE_1H]]] "
        "in USD per million tokens, e.g. --rate claude-opus-4-7=5/25"
    )
    name, sep, prices = spec.partition("=")
    if not sep or not name.strip():
        raise bad
    try:
        nums = [float(x) for x in prices.split("/")]
    except ValueError:
        raise bad from None
    if not 2 <= len(nums) <= 5 or any(not math.isfinite(x) or x < 0 for x in nums):
        raise bad
    known = catalog.price(name) if catalog else None
    ratios = dict(DEFAULT_MULTIPLIERS)
    if known is not None and known.current.input > 0:
        cur = known.current
        ratios = {f: getattr(cur, f) / cur.input for f in DEFAULT_MULTIPLIERS}
    vals = dict(zip(_FIELDS, nums))
    for f in _FIELDS[2:]:
        vals.setdefault(f, vals["input"] * ratios[f])
    return name.strip(), Rate(**vals)


@lru_cache(maxsize=4)
def _load(path: str) -> Catalog:
    return Catalog.from_json(json.loads(Path(path).read_text(encoding="utf-8")))


def load_catalog(overrides: Iterable[str] = (), path: Path | None = None) -> Catalog:
    """The shipped catalog (cached per process), with `--rate` overrides applied."""
    cat = _load(str(path or RATES_FILE))
    specs = list(overrides)
    return cat.with_overrides(specs) if specs else cat
