"""Patterns the scrubber uses: one fast scan regex, precise per-format regexes, and the heuristics that
decide whether a key name or a value looks secret.

Why the split: Python's `re` is slow when a pattern has many alternatives that start with common
letters, so the scan regex only ever starts a match at a handful of rare anchor characters
(`_ - . : = A B K`) and checks the few characters around them with cheap lookarounds. Text without
secrets is rejected in C at a few hundred MB/s; the rare candidates are then confirmed in Python by the
precise regexes below (matched at a known offset, so they never scan).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

MARKER_FMT = "[REDACTED:{}]"


Span = tuple[int, int, str]  # a replacement: (start, end, marker) in the original text


def marker(label: str) -> str:
    return MARKER_FMT.format(label)


MARKER_RE = re.compile(r"\[REDACTED:[a-z0-9_]+\]")

ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
KEY_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-$")


def mixed_alnum(v: str) -> bool:
    """True when a token body mixes letters and digits (cheap stand-in for 'random-looking')."""
    return any(c.isdigit() for c in v) and any(c.isalpha() for c in v)


@dataclass(frozen=True, slots=True)
class TokenRule:
    """A prefixed token: the scan anchors at `anchor`, the token starts `back` chars before it."""

    name: str
    anchor: str
    guard: str  # lookarounds evaluated right after the anchor char
    back: int
    precise: tuple[tuple[re.Pattern[str], str, bool], ...]  # (regex, label, body must be mixed_alnum)
    fixed_end: bool = False  # the token has a fixed length: require a non-alphanumeric char after it


def _p(rx: str, label: str, mixed: bool = False) -> tuple[re.Pattern[str], str, bool]:
    return re.compile(rx), label, mixed


TOKEN_RULES: tuple[TokenRule, ...] = (
    # underscore-delimited prefixes
    # classic `ghp_<36>` and the stateless App installation format `ghs_<app id>_<JWT>` (2026)
    TokenRule(
        "gh",
        "_",
        r"(?<=gh[pousr]_)(?=[A-Za-z0-9]{30}|[0-9]{1,12}_[A-Za-z0-9_-]{10})",
        3,
        (
            _p(r"gh[pousr]_[0-9]{1,12}_[A-Za-z0-9_-]{10,}(?:\.[A-Za-z0-9_-]{10,}){1,2}", "github_token"),
            _p(r"gh[pousr]_[A-Za-z0-9]{30,}", "github_token"),
        ),
    ),
    TokenRule(
        "ghpat",
        "_",
        r"(?<=github_pat_)(?=[A-Za-z0-9_]{30})",
        10,
        (_p(r"github_pat_[A-Za-z0-9_]{30,}", "github_token"),),
    ),
    TokenRule("npm", "_", r"(?<=npm_)(?=[A-Za-z0-9]{30})", 3, (_p(r"npm_[A-Za-z0-9]{30,}", "npm_token"),)),
    TokenRule(
        "hf", "_", r"(?<=hf_)(?=[A-Za-z0-9]{30})", 2, (_p(r"hf_[A-Za-z0-9]{30,}", "huggingface_token", True),)
    ),
    TokenRule(
        "stripe",
        "_",
        r"(?<=[sr]k_live_|[sr]k_test_)(?=[A-Za-z0-9]{10})",
        7,
        (_p(r"[sr]k_(?:live|test)_[A-Za-z0-9]{10,}", "stripe_key"),),
    ),
    TokenRule(
        "whsec",
        "_",
        r"(?<=whsec_)(?=[A-Za-z0-9+/]{20})",
        5,
        (_p(r"whsec_[A-Za-z0-9+/=]{20,}", "stripe_webhook_secret"),),
    ),
    TokenRule(
        "dopat",
        "_",
        r"(?<=do[opr]_v1_)(?=[A-Za-z0-9]{32})",
        6,
        (_p(r"do[opr]_v1_[A-Za-z0-9]{32,}", "digitalocean_token"),),
    ),
    TokenRule(
        "shopify",
        "_",
        r"(?<=shp(?:at|ss|ca|pa)_)(?=[a-fA-F0-9]{32})",
        5,
        (_p(r"shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}", "shopify_token"),),
        fixed_end=True,
    ),
    TokenRule(
        "linear",
        "_",
        r"(?<=lin_api_)(?=[A-Za-z0-9]{32})",
        7,
        (_p(r"lin_api_[A-Za-z0-9]{32,}", "linear_key"),),
    ),
    # dash-delimited prefixes
    TokenRule(
        "glpat",
        "-",
        r"(?<=glpat-)(?=[A-Za-z0-9_-]{20})",
        5,
        (_p(r"glpat-[A-Za-z0-9_-]{20,}", "gitlab_token"),),
    ),
    TokenRule(
        "glother",
        "-",
        r"(?<=gl[dr]t-)(?=[A-Za-z0-9_-]{20})",
        4,
        (_p(r"gl[dr]t-[A-Za-z0-9_-]{20,}", "gitlab_token"),),
    ),
    TokenRule(
        "xox",
        "-",
        r"(?<=xox[abeoprs]-)(?=[A-Za-z0-9-]{8})",
        4,
        (_p(r"xox[abeoprs]-[A-Za-z0-9-]{10,}", "slack_token"),),
    ),
    TokenRule("xapp", "-", r"(?<=xapp-)(?=[A-Za-z0-9])", 4, (_p(r"xapp-[A-Za-z0-9-]{10,}", "slack_token"),)),
    TokenRule(
        "sk",
        "-",
        r"(?<=sk-)(?=[A-Za-z0-9_-]{20})",
        2,
        (
            _p(r"sk-ant-[A-Za-z0-9_-]{20,}", "anthropic_key"),
            _p(r"sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,}", "openai_key"),
            _p(r"sk-[A-Za-z0-9]{20,}", "openai_key", True),
        ),
    ),
    TokenRule(
        "gocspx",
        "-",
        r"(?<=GOCSPX-)(?=[A-Za-z0-9_-]{20})",
        6,
        (_p(r"GOCSPX-[A-Za-z0-9_-]{20,}", "google_oauth_secret"),),
    ),
    TokenRule("pypi", "-", r"(?<=pypi-)(?=Ag)", 4, (_p(r"pypi-Ag[A-Za-z0-9_-]{50,}", "pypi_token"),)),
    TokenRule(
        "mailgun",
        "-",
        r"(?<=key-)(?=[0-9a-f]{32})",
        3,
        (_p(r"key-[0-9a-f]{32}", "mailgun_key"),),
        fixed_end=True,
    ),
    # dot-delimited prefixes
    TokenRule(
        "sendgrid",
        ".",
        r"(?<=SG\.)(?=[A-Za-z0-9_-]{16})",
        2,
        (_p(r"SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}", "sendgrid_key"),),
    ),
    TokenRule(
        "vault",
        ".",
        r"(?<=hv[sbr]\.)(?=[A-Za-z0-9_-]{20})",
        3,
        (_p(r"hv[sbr]\.[A-Za-z0-9_-]{20,}", "vault_token"),),
    ),
    TokenRule(
        "ya29",
        ".",
        r"(?<=ya29\.)(?=[A-Za-z0-9_-]{20})",
        4,
        (_p(r"ya29\.[A-Za-z0-9_-]{20,}", "google_oauth_token"),),
    ),
    # uppercase anchors
    TokenRule(
        "aws",
        "A",
        r"(?=KIA[A-Z0-9]{16}|SIA[A-Z0-9]{16})",
        0,
        (_p(r"A(?:KIA|SIA)[A-Z0-9]{16}", "aws_access_key"),),
        fixed_end=True,
    ),
    TokenRule(
        "aiza",
        "A",
        r"(?=Iza[0-9A-Za-z_-]{35})",
        0,
        (_p(r"AIza[0-9A-Za-z_-]{35}", "google_api_key"),),
        fixed_end=True,
    ),
    TokenRule(
        "twilio", "K", r"(?<=SK)(?=[0-9a-f]{32})", 1, (_p(r"SK[0-9a-f]{32}", "twilio_key"),), fixed_end=True
    ),
)
TOKEN_RULES_BY_NAME = {r.name: r for r in TOKEN_RULES}

# --- generic `name <sep> value` forms -------------------------------------------------------------
# Secret key names end with one of these words. The scan first checks the last two letters (a
# lookbehind whose alternatives start with a char class, which sre skips cheaply), then the words.
_KV_WORDS = (
    "password",
    "passwd",
    "pwd",
    "passphrase",
    "pass",
    "credentials",
    "credential",
    "secret",
    "token",
    "authorization",
    "key",
    "auth",
)
# What may sit between the key name and the separator: `KEY=`, `"key":`, `\"key\":`, `key = `,
# `'key' =>`, `key :=`.
_KV_TAILS = {":": ("", "[\"']", r'\\"'), "=": ("", "[ \"':]", "(?:[\"'] | :)")}
# The two characters before the separator in each form of `_KV_TAILS` (a superset; `{l}`: a word's
# last letter, `{c}`: any letter of its last two): one lookbehind of three characters, which rejects most
# `:` and `=` in text before the forms' own lookbehinds run.
_KV_NEAR = {":": ("[{c}][{l}]", "[{l}\\\\][\"']"), "=": ("[{c}][{l}]", "[{l}][ \"':]", "[\"' ][ :]")}


def _variants(w: str) -> list[str]:
    return [w, w.upper(), w.capitalize()]


def _kv_guard(sep: str) -> str:
    """Lookbehinds proving that a secret-looking key word ends right before `sep`.

    Ordered cheapest first: a two-char class, then the exact last two letters, then the words (in
    lower/UPPER/Capitalized spelling, grouped by length because lookbehinds must be fixed-width).
    """
    ends = sorted({w[-2:] for w in _KV_WORDS})
    letters = "".join(sorted({c for e in ends for c in e + e.upper()}))
    last_letters = "".join(sorted({e[1] for e in ends} | {e[1].upper() for e in ends}))
    cls, lasts = f"[{letters}]", f"[{last_letters}]"
    pairs = "|".join(e for x in ends for e in (x, x.upper()))
    by_len: dict[int, list[str]] = {}
    for w in _KV_WORDS:
        by_len.setdefault(len(w), []).extend(_variants(w))
    forms = []
    for tail in _KV_TAILS[sep]:
        t = tail + re.escape(sep)
        words = "|".join(f"(?<=(?:{'|'.join(vs)}){t})" for vs in by_len.values())
        forms.append(f"(?<={cls}{lasts}{t})(?<=(?:{pairs}){t})(?:{words})")
    near = "|".join(n.format(c=letters, l=last_letters) + re.escape(sep) for n in _KV_NEAR[sep])
    return f"(?<={near})(?:" + "|".join(forms) + ")" + _KV_VALUE_AHEAD


# After the separator: something that can start a literal value, and not a call or subscript
# (`password = getpass()`, `token = os.environ["X"]`), so code rarely reaches the Python handler.
_KV_VALUE_AHEAD = (
    r"""(?=[=>]?[ \t]*(?:["'][^\s"'),;\]}]|\\"[^\s"\\),;\]}]|(?![A-Za-z_][\w.]*[(\[])[^\s"'\\,;)}\]]))"""
)


_FLAG_WORDS_LB = (
    "(?:"
    + "|".join(
        f"(?<={w})"
        for w in (
            "password",
            "passwd",
            "passphrase",
            "pass",
            "pwd",
            "secret",
            "token",
            "key",
            "auth",
            "credential",
            "credentials",
        )
    )
    + ")"
)  # lower-case only, as CLI flags are

# (name, anchor, guard) for the formats handled by custom code in the scrubber.
SPECIAL_RULES: tuple[tuple[str, str, str], ...] = (
    ("pem", "-", r"(?=----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY)"),
    # `--api-key VALUE`: the name is taken atomically (lookahead + backreference) so a failing keyword
    # check cannot backtrack through it; all inside a lookahead so every scan match is one char wide.
    ("flag", "-", rf"(?<=--)(?=(?=(?P<fname>[A-Za-z0-9_-]{{1,40}}))(?P=fname){_FLAG_WORDS_LB}[ \t]+[^\s-])"),
    ("jwt", ".", r"(?=eyJ)(?<=[A-Za-z0-9_-]{8}\.)"),
    ("slackhook", ".", r"(?<=hooks\.)(?=slack\.com/)"),
    ("kvcolon", ":", _kv_guard(":")),
    # Bot tokens are `<bot id>:AA<33 chars>`; anchoring on that 'A' keeps the hot ':' pass lean.
    ("telegram", "A", r"(?<=[0-9]:A)(?=A[A-Za-z0-9_-]{33})"),
    ("sas", "=", r"(?<=[?&]sig=)"),
    ("kveq", "=", _kv_guard("=")),
    # scheme://user:PASSWORD@host -- the lookahead proves there is a userinfo before the C code gives up.
    ("url", ":", r"""//(?=[^\s/?#"'<>`@:\[\]\\]{0,128}:[^\s/?#"'<>`\[\]\\]{1,256}@)"""),
    # `Bearer <token>` anywhere (prose, a header value without its name); the word starts the match
    ("bearer", "B", r"(?<![A-Za-z0-9_]B)(?=(?:earer|EARER)[ \t]+[A-Za-z0-9._~+/-]{8})"),
)

# Cheap first checks per anchor (the two chars before it, or what follows) so that the common
# anchors (`-` in prose, `_` in code) fail after one lookaround instead of one per format.
_PRE_GUARDS = {
    "_": r"(?<=(?:h[pousr]|at|pm|hf|ve|st|ec|v1|ss|ca|pa|pi)_)",
    "-": r"""(?:(?<=[tXkiyp\-abeoprs]-)(?<=(?:at|[dr]t|x[abeoprs]|pp|sk|PX|pi|ey|[\s"'=]-)-)|(?=----BEGIN))""",
    ".": r"(?:(?=eyJ)|(?<=(?:SG|v[sbr]|29|ks)\.))",
}


def _anchor_patterns() -> dict[str, str]:
    """Per anchor char: one pattern starting with that literal, then its guarded alternatives."""
    by_anchor: dict[str, list[str]] = {}
    for rule in TOKEN_RULES:
        by_anchor.setdefault(rule.anchor, []).append(f"{rule.guard}(?P<{rule.name}>)")
    for name, anchor, guard in SPECIAL_RULES:
        by_anchor.setdefault(anchor, []).append(f"{guard}(?P<{name}>)")
    return {a: f"{re.escape(a)}{_PRE_GUARDS.get(a, '')}(?:{'|'.join(alts)})" for a, alts in by_anchor.items()}


_PATTERNS = _anchor_patterns()
# Short strings: one search over all anchors (one call). Longer ones: one pass per anchor char the text
# holds (`in` is a memchr), since sre's single-literal search loop costs ~7 instructions per character
# and its character-set loop ~45 (CPython 3.11), and a set match enters every alternative's literal test.
SCAN = re.compile("|".join(_PATTERNS.values()))


@lru_cache(maxsize=1)
def scans() -> tuple[tuple[str, re.Pattern[str]], ...]:
    """(anchor char, its pass), compiled on first use (hooks that scrub a path never need them)."""
    return tuple((a, re.compile(p)) for a, p in _PATTERNS.items())


# Short strings that are identifiers by shape and cannot hold a secret, checked first (they are unique,
# so the short-string cache does not help with them): made only of these characters (UUIDs, hex
# digests, ISO timestamps, numbers: no format above fits), or an Anthropic API message / request /
# tool-use id.
ID_CHARS = "0123456789abcdef-:.TZ+"
API_ID = re.compile(r"(?:msg|req|toolu|srvtoolu)_[A-Za-z0-9]{8,64}")

# --- key-name classification ---------------------------------------------------------------------
_KEY_QUALIFIERS = (
    "api",
    "access",
    "secret",
    "private",
    "auth",
    "encryption",
    "signing",
    "master",
    "account",
    "client",
    "app",
    "service",
    "subscription",
    "license",
    "consumer",
    "webhook",
    "admin",
    "hmac",
    "jwt",
    "decryption",
    "deploy",
    "ingest",
    "write",
    "read",
)
_TOKENIZER_NAMES = ("padtoken", "bostoken", "eostoken", "unktoken", "septoken", "clstoken", "masktoken")
_STRIP = str.maketrans("", "", "_-.$ ")


def _word_end(name: str, word: str) -> bool:
    """`name` ends with `word` as its own part (dbPass, DB_PASS, pass) rather than inside (bypass)."""
    n = len(word)
    if len(name) < n or name[-n:].lower() != word:
        return False
    if len(name) == n:
        return True
    before, first = name[-n - 1], name[-n]
    return before in "_-. $" or (first.isupper() and before.islower())


@lru_cache(maxsize=8192)
def secret_key_label(name: str) -> str | None:
    """Marker label for a key/field/flag name that holds a secret, or None for ordinary names."""
    compact = name.lower().translate(_STRIP)
    if not compact:
        return None
    if compact.endswith("authorization"):
        return "authorization"
    if (
        compact.endswith(("password", "passwd", "passphrase"))
        or _word_end(name, "pass")
        or _word_end(name, "pwd")
    ):
        return "password"
    if compact.endswith(("accountkey", "sharedaccesskey", "sharedaccesssignature")):
        return "azure_key"
    label = "secret"
    if "vault" in compact:
        label = "vault_token"
    elif "twilio" in compact:
        label = "twilio_token"
    if compact.endswith(
        ("secret", "credential", "credentials", "auth", "keydata")
    ):  # kubeconfig client-key-data
        return label
    if compact.endswith("token"):
        return None if compact.endswith(_TOKENIZER_NAMES) else label
    if compact.endswith("key") and compact[:-3].endswith(_KEY_QUALIFIERS):
        return label
    return None


# --- value plausibility --------------------------------------------------------------------------
# $VAR ${VAR} $(cmd) %VAR% {{tpl}} <your-token> !vault [REDACTED:..] ****
PLACEHOLDER_START = tuple("$%{<![*")
PLACEHOLDER_RE = re.compile(
    r"""(?x)
      (.)\1*                # xxxx  ....  ----
    | (?i:your[_-].*|.*[_-]here|changeme|placeholder|redacted|secret|password|passwd|token|none|null
          |nil|true|false|undefined|empty|string|str|bytes|int|integer|number|bool|boolean|any|object
          |optional|required|hidden|masked|dummy|todo|tbd|n/?a|env|default)
    """
)
PATH_RE = re.compile(
    r"(?:~|\.{1,2})?/[\w.~/@+-]*|[A-Za-z]:\\[\w.\\ -]*|[\w.-]+(?:/[\w.@+-]+)+\.[A-Za-z][A-Za-z0-9]{0,7}"
)
IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
DOTTED_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
CAMEL_TYPE_RE = re.compile(r"(?:[A-Z][a-z]+)+")
CODE_WORDS = frozenset(
    (
        "return",
        "yield",
        "break",
        "continue",
        "raise",
        "await",
        "async",
        "lambda",
        "import",
        "print",
        "self",
        "this",
        "function",
        "const",
        "let",
        "var",
        "new",
        "not",
        "and",
        "or",
        "else",
        "elif",
        "then",
    )
)
KEYWORDISH_RE = re.compile(r"(?i)pass|secret|token|key|auth|cred")

# value shapes after a separator
DQ_VALUE = re.compile(r'"((?:[^"\\\n]|\\.)*)')
SQ_VALUE = re.compile(r"'((?:[^'\\\n]|\\.)*)")
ESC_DQ_VALUE = re.compile(r'\\"((?:[^"\\\n]|\\[^"nrt])*)')  # JSON-escaped: stop at \" and at \n
# A marker inside a bare value is read as part of it (the value is then left alone): otherwise a second
# pass would see a shorter value than the first did and could judge it differently.
UNQUOTED_VALUE = re.compile(r"(?:[^\s\"'`;&|<>(){}\[\],\\]|\[REDACTED:[a-z0-9_]+\])+")
LINE_REST = re.compile(r"[^\n\"'\\]*")
AUTH_SCHEME = re.compile(r"(?i)(bearer|basic|token|digest|bot|negotiate)[ \t]+(?=\S)")
AUTH_CRED = re.compile(r"[^\s\"'`\\]+")
FLAG_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,60}")

# custom-rule regexes
PEM_HEAD = re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")
PEM_END = re.compile(r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")
PEM_BODY = re.compile(r"(?:[A-Za-z0-9+/=:,\s-]|\\[nrt/])*")
JWT = re.compile(r"eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*")
SLACK_HOOK = re.compile(r"hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9_/-]{8,})")
TELEGRAM_BODY = re.compile(r"[A-Za-z0-9_-]{35}")
SAS_VALUE = re.compile(r"[A-Za-z0-9%+/=]{16,}")
# userinfo never holds raw `[ ] \` (RFC 3986), so a redaction marker can never look like a password
URL_USERINFO = re.compile(r"""[^\s/?#"'<>`@:\[\]\\]{0,128}:([^\s/?#"'<>`\[\]\\]{1,256})@""")
URL_SCHEME_END = re.compile(r"[A-Za-z][A-Za-z0-9+.-]{1,30}$")


# --- value heuristics: is this literal worth redacting? ------------------------------------------


def looks_random(v: str) -> bool:
    """Token-like rather than a word: letters and digits, or long and mixed-case."""
    if len(v) < 8:
        return False
    if mixed_alnum(v):
        return True
    return len(v) >= 20 and any(c.isupper() for c in v) and any(c.islower() for c in v)


def plausible_value(v: str, label: str, min_len: int) -> bool:
    """A literal worth redacting: not empty, a placeholder, a variable reference, a path or a count."""
    v = v.strip()
    if len(v) < min_len or v.startswith(PLACEHOLDER_START) or PLACEHOLDER_RE.fullmatch(v):
        return False
    if "***" in v or "[REDACTED:" in v:  # already masked (`ghp_****`) or partly redacted by us
        return False
    if v.startswith("-----BEGIN") or ("{" in v and "}" in v) or PATH_RE.fullmatch(v):
        return False
    return not (v.isdigit() and label != "password")


def _random_segment(seg: str) -> bool:
    """A long mixed-case alphanumeric run with digits: token material, not an identifier."""
    return (
        len(seg) >= 16
        and any(c.isdigit() for c in seg)
        and any(c.isupper() for c in seg)
        and any(c.islower() for c in seg)
    )


def code_ref(v: str) -> bool:
    """`os.environ`, `self.token`, `env.AUTH0_CLIENT_SECRET` (but not a vault `s.<random>` token)."""
    return bool(DOTTED_RE.fullmatch(v)) and not any(_random_segment(seg) for seg in v.split("."))


def secret_path_head(v: str) -> int:
    """For an unquoted value that reads as a path (`<value>/app/app.py` after `TOKEN=` in a folder
    name): the length of what comes before the trailing ordinary path pieces, 0 when the value starts
    with an ordinary piece (`config/app.key`, `/etc/ssl/x.pem`, `LOGS/<uuid>.jsonl`: a real path)."""
    parts = v.split("/")
    first = next((i for i, p in enumerate(parts) if p), len(parts))
    if first == len(parts) or _ordinary_piece(parts[first]):
        return 0
    k = len(parts)
    while k > first + 1 and (
        not parts[k - 1] or _ordinary_piece(parts[k - 1]) or not parts[k - 1].split(".", 1)[0].strip(ID_CHARS)
    ):
        k -= 1
    return len("/".join(parts[:k]))


def _ordinary_piece(piece: str) -> bool:
    """A path piece a person names: lower-case, Capitalized or UPPER, with optional extensions; random
    token material mixes cases, or letters and digits, inside a piece."""
    return bool(ORDINARY_PIECE.fullmatch(piece)) and not looks_random(piece)


ORDINARY_PIECE = re.compile(
    r"(?:[a-z][a-z0-9_-]*|[0-9]+|[A-Z][a-z]+(?:[-_][A-Za-z0-9]+)*|[A-Z0-9_-]+)"
    r"(?:\.[A-Za-z0-9_-]{1,10})*"
)


def unquoted_value_ok(text: str, v: str, end: int, sep: str, spaced: bool, name: str = "") -> bool:
    """Unquoted values only count in env/shell/config style, never when they look like code.

    `name` is the key name: an upper-case (environment style) name marks a setting, not a keyword
    argument, so `API_KEY=value, next` counts where `f(token=tok, x)` does not.
    """
    if text[end : end + 1] in ("(", "["):
        return False
    if PATH_RE.fullmatch(v) or code_ref(v):
        return False
    if IDENT_RE.fullmatch(v):
        if KEYWORDISH_RE.search(v) or v in CODE_WORDS or (sep == ":" and CAMEL_TYPE_RE.fullmatch(v)):
            return False
        rest = text[end : end + 40].lstrip(" \t")
        if rest[:1] in (")", "}") or (rest[:1] == "," and not (name.isupper() or looks_random(v))):
            return False  # call keyword argument or object literal: `f(token=tok)`, `{token: tok}`
        if spaced and sep == "=" and not looks_random(v):
            return False  # `token = other_variable`
    if spaced and sep == "=":  # INI style `password = hunter2`: the value ends the line or a clause
        rest_of_line = text[end : end + 256].partition("\n")[0].lstrip(" \t")
        if rest_of_line and rest_of_line[0] not in ";,#" and not looks_random(v):
            return False
    return True
