"""Turning stored transcript text into HTML safely, and the template environment that uses it.

Transcripts are untrusted: every template autoescapes, and the one place that emits markup from their
text is `markdown()`, which never passes raw HTML through (`html: False`), renders no images (no remote
fetch from a local page) and keeps a link only when its URL is http(s). Code blocks are highlighted
by Pygments, which escapes its input."""

from __future__ import annotations

import re
from datetime import datetime
from functools import lru_cache
from typing import Any

from jinja2 import Environment, PackageLoader, pass_context, select_autoescape
from jinja2.runtime import Context
from markdown_it import MarkdownIt
from markupsafe import Markup, escape
from pygments import highlight as pyg_highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

from total_recall.render import compact as tokens  # the CLI's token counts: 45.6 k, 1.23 M

HIGHLIGHT_MAX = 40_000  # chars of one code block worth highlighting; longer ones stay plain (and fast)
CLIP_TOOL = 20_000  # chars of one tool input or output shown inline
_FORMATTER = HtmlFormatter(nowrap=True)


def safe_url(url: str) -> bool:
    """Only web links survive: no javascript:, data:, file: or relative URLs into the viewer itself."""
    return bool(re.match(r"(?i)^https?://[^\s]+$", url.strip()))


@lru_cache(maxsize=64)
def _lexer(name: str) -> Lexer | None:
    """A lexer per language, made once (building one costs more than highlighting a short block)."""
    try:
        return get_lexer_by_name(name)
    except ClassNotFound:
        return None


def _code(code: str, lang: str, _attrs: str) -> str:
    name = (lang or "").split()[0].lower() if lang else ""
    lexer = _lexer(name) if name and len(code) <= HIGHLIGHT_MAX else None
    if lexer is None:
        return ""  # markdown-it escapes it as plain code
    return f'<pre class="hl"><code>{pyg_highlight(code, lexer, _FORMATTER)}</code></pre>'


def _link_open(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
    tokens[idx].attrSet("rel", "noopener noreferrer nofollow")
    return str(self.renderToken(tokens, idx, options, env))


@lru_cache(maxsize=1)
def _md() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "highlight": _code})
    md.enable("table").enable("strikethrough")
    md.disable("image")
    md.validateLink = safe_url  # type: ignore[method-assign]
    md.add_render_rule("link_open", _link_open)
    return md


@lru_cache(maxsize=8192)
def markdown(text: str | None) -> Markup:
    """Markdown of untrusted text as HTML that carries no script, raw tag or unsafe link. Cached by
    text: stored messages never change, and a re-opened long session renders from the cache."""
    return Markup(_md().render(text or ""))  # noqa: S704 — markdown-it escapes all text (html off)


def code_css() -> str:
    """Pygments' colours for highlighted code (served as /assets/code.css, inlined in exports)."""
    return str(HtmlFormatter().get_style_defs(".hl"))


def mark(text: str | None, query: str | None) -> Markup:
    """A search snippet escaped, its matched terms (which the index's snippet wraps in [brackets])
    turned into <mark>; a bracketed run that is no query term's match stays as written."""
    heads = {w.lower()[:4] for w in re.findall(r"\w{2,}", query or "")}
    out: list[str] = []
    pos = 0
    for m in re.finditer(r"\[([^\[\]\s]{1,80})\]", text or ""):
        if not any(m.group(1).lower().startswith(h) for h in heads):
            continue
        out.append(str(escape((text or "")[pos : m.start()])))
        out.append(f"<mark>{escape(m.group(1))}</mark>")
        pos = m.end()
    out.append(str(escape((text or "")[pos:])))
    return Markup("".join(out))  # noqa: S704 — every piece escaped above


def _dt(ts: str | None) -> datetime | None:
    try:
        return datetime.fromisoformat((ts or "").replace("Z", "+00:00")) if ts else None
    except ValueError:
        return None


def when(ts: str | None) -> str:
    """An ISO timestamp as 'YYYY-MM-DD HH:MM' (UTC, as stored)."""
    return (ts or "")[:16].replace("T", " ")


def duration(a: str | None, b: str | None) -> str:
    da, db = _dt(a), _dt(b)
    if da is None or db is None:
        return ""
    s = max(0, int((db - da).total_seconds()))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m"
    return f"{s // 3600}h {s % 3600 // 60:02d}m"


def usd(x: float | None) -> str:
    return "?" if x is None else f"${x:,.2f}"


def clipped(text: str | None, limit: int = CLIP_TOOL) -> str:
    t = text or ""
    return t if len(t) <= limit else t[:limit] + f"\n… ({len(t) - limit:,} more characters)"


@pass_context
def project(ctx: Context, key: str | None) -> str:
    """A project key as the page's `label` (index.store.project_labeller, built once per page from
    its connection) names it: `work/api` and `home/api`, as the CLI and the MCP tools do."""
    return str(ctx["label"](key)) if key else ""


@lru_cache(maxsize=1)
def environment() -> Environment:
    """The Jinja environment of every page and export: autoescape on for all templates."""
    env = Environment(
        loader=PackageLoader("total_recall.ui", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        markdown=markdown,
        mark=mark,
        when=when,
        usd=usd,
        tokens=tokens,
        clipped=clipped,
        project=project,
    )
    env.globals["duration"] = duration
    return env
