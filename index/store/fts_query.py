"""The one FTS5 query sanitiser (I7): user text in, a safe MATCH expression out.

Rules: quoted phrases stay phrases; identifiers (snake_case, dotted, paths, ERR_CODES) become
phrases of their parts, matching how unicode61 tokenised them; camelCase also matches its parts
in the `idents` column; `term*` is a prefix query; FTS syntax characters never reach SQLite.
Stopwords are dropped so natural-language questions match on their content words.
Queries are cut to `MAX_QUERY_CHARS` first, and every pattern here is linear in its input: a query is
user text (a CLI argument, an MCP topic, a hook prompt) and must never pin the CPU.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from index.store.schema import session_token
from lib.text import STOPWORDS

MAX_QUERY_CHARS = 1_000  # longer queries are cut: FTS5 gains nothing from more terms, only cost
# messages_fts columns a query's terms match; its third column, `session`, holds one token naming the
# message's session (`schema.session_token`), so FTS5 can skip to the messages of a few sessions (v10).
MESSAGE_TEXT_COLUMNS = "{text idents}"
_DIGITS_TERM = re.compile(r'"[0-9]+"\*?')

_PHRASE = re.compile(r'"([^"]*)"')
_WORD = re.compile(r"[\w][\w./\\:@#+-]*\*?", re.UNICODE)
_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
# `[A-Z]{2,}[a-z]` would retry a run of capitals from each of its letters (quadratic); two capitals
# then a lower-case letter occur exactly when it does.
_CAMEL = re.compile(r"[a-z0-9][A-Z]|[A-Z][A-Z][a-z]")
_CAMEL_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


@dataclass(slots=True)
class Query:
    terms: list[str]  # FTS expressions, one per user term
    exact: list[str]  # identifier-like terms (for exact-match promotion)
    words: list[str]  # plain content words (for snippets and highlighting)

    def all_of(self) -> str:
        return " AND ".join(self.terms)

    def any_of(self) -> str:
        return " OR ".join(self.terms)

    @property
    def empty(self) -> bool:
        return not self.terms


def _quote(token: str) -> str:
    return '"' + token.replace('"', "") + '"'


_SNAKE = re.compile(r"^[A-Za-z][A-Za-z0-9]*(?:[_-][A-Za-z0-9]+)+$")


def _name_parts(word: str) -> list[str]:
    """Lower-case parts of an identifier in any naming style: snake_case, kebab-case, camelCase."""
    out: list[str] = []
    for chunk in re.split(r"[_-]+", word):
        out += [s.lower() for s in _CAMEL_PARTS.findall(chunk)]
    return [s for s in out if s]


def _cross_style(parts: list[str], idents: bool) -> str:
    """Match the same name written in another style: `parse config` as a phrase (snake/kebab in
    text), `parseconfig` as one token (camelCase in text), or all parts in the idents column."""
    expr = f"{_quote(' '.join(parts))} OR {_quote(''.join(parts))}"
    if idents:
        expr += f" OR ({' AND '.join('idents:' + _quote(s) for s in parts)})"
    return expr


def _term(word: str, idents: bool = True) -> tuple[str | None, bool]:
    """One user word -> (FTS expression, is_identifier)."""
    prefix = word.endswith("*")
    word = word.rstrip("*")
    parts = [p for p in _TOKEN.findall(word) if p]
    if not parts:
        return None, False
    camel = bool(_CAMEL.search(word))
    ident = len(parts) > 1 or camel
    if not prefix and (camel or _SNAKE.match(word)):
        names = _name_parts(word)
        if len(names) > 1:
            return f"({_cross_style(names, idents)})", True
    if len(parts) == 1:
        p = parts[0]
        if not ident and p.lower() in STOPWORDS:
            return None, False
        return _quote(p) + ("*" if prefix else ""), ident
    phrase = _quote(" ".join(parts))
    return (phrase + ("*" if prefix else "")), True


def bounded(text: str) -> str:
    """`text` cut to `MAX_QUERY_CHARS` (at a space when there is one near the end): what every search
    path uses, the vector side included."""
    if len(text) <= MAX_QUERY_CHARS:
        return text
    cut = text[:MAX_QUERY_CHARS]
    space = cut.rfind(" ")
    return cut[:space] if space > MAX_QUERY_CHARS // 2 else cut


def parse(text: str, idents: bool = True) -> Query:
    """`idents=False` for FTS tables without the identifier-parts column (extractions)."""
    text = bounded(text)
    terms: list[str] = []
    exact: list[str] = []
    seen: set[str] = set()

    def add(expr: str | None, raw: str, ident: bool) -> None:
        if expr and expr not in seen:
            seen.add(expr)
            terms.append(expr)
            if ident:
                exact.append(raw)

    for m in _PHRASE.finditer(text):
        toks = _TOKEN.findall(m.group(1))
        if toks:
            add(_quote(" ".join(toks)), m.group(1), True)
    rest = _PHRASE.sub(" ", text)
    for m in _WORD.finditer(rest):
        raw = m.group(0).rstrip(".:,;-/\\")
        if raw.endswith("*") is False and m.group(0).endswith("*"):
            raw += "*"
        expr, ident = _term(raw, idents)
        add(expr, raw.rstrip("*"), ident)
    if not terms:
        # A query of only stopwords: search them anyway rather than nothing.
        for tok in _TOKEN.findall(text)[:8]:
            add(_quote(tok), tok, False)
    words = [w for w in _TOKEN.findall(text) if w.lower() not in STOPWORDS]
    return Query(terms, exact, words)


def snippet_terms(text: str) -> list[str]:
    """The terms a search for `text` marks in its snippets (to find those marks again: `split_marks`)."""
    q = parse(text)
    return q.exact + q.words


def in_message_text(term: str) -> str:
    """One FTS term of `Query.terms`, confined to messages_fts's text columns when it could match a
    session token (digits alone, or a prefix of digits); any other term cannot, and a column filter
    on every term costs FTS5 a sixth more time."""
    return f"{MESSAGE_TEXT_COLUMNS}: {term}" if _DIGITS_TERM.fullmatch(term) else term


def in_sessions(match: str, session_ids: list[str]) -> str:
    """`match` (terms passed through `in_message_text`) AND the message belongs to one of
    `session_ids`: FTS5 walks the few rows of those sessions, not every match of `match` in the index."""
    tokens = " OR ".join(session_token(s) for s in dict.fromkeys(session_ids))
    return f"({match}) AND session: ({tokens})"
