"""A tiny stdlib client for a local Ollama server (X20). Loopback only: the product never talks to the network.

Config (lib/settings.py): TOTAL_RECALL_LLM_URL (default http://127.0.0.1:11434) and
TOTAL_RECALL_LLM_MODEL (no default: refinement stays off until a model is named).
"""

from __future__ import annotations

import ipaddress
import json
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urlsplit

from lib.settings import DEFAULT_LLM_URL

DEFAULT_TIMEOUT = 60.0


class LLMError(Exception):
    """A problem talking to the local model; the message says what to do."""


class LLMUnreachable(LLMError):
    """Nothing answered at the URL (refused, timed out, DNS): stop the run rather than retry every row."""


def is_loopback(url: str) -> bool:
    """True only for http(s) URLs whose host is localhost, 127.0.0.0/8 or ::1."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
        _ = parts.port  # raises ValueError on a malformed port
    except ValueError:
        return False
    if parts.scheme not in ("http", "https") or not host or parts.username or parts.password:
        return False
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_url(url: str) -> str:
    """The URL without a trailing slash, or LLMError if it is not on this machine's loopback."""
    if not is_loopback(url):
        raise LLMError(
            f"refusing LLM URL {url!r}: only loopback addresses (127.0.0.1, ::1, localhost) are allowed"
        )
    return url.rstrip("/")


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A redirect could lead off the machine; treat it as an error instead of following it."""

    def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str) -> None:
        raise LLMError(f"local LLM server redirected to {newurl!r}; redirects are not followed")


# No proxies (a proxy env var would send loopback traffic elsewhere) and no redirects.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}), _NoRedirect())


class OllamaClient:
    def __init__(self, model: str, url: str = DEFAULT_LLM_URL, timeout: float = DEFAULT_TIMEOUT) -> None:
        if not model:
            raise LLMError("no model named")
        self.model = model
        self.url = check_url(url)
        self.timeout = timeout

    def generate(self, prompt: str) -> str:
        """Send one prompt; return the model's text (Ollama's `response` field)."""
        body = json.dumps(
            {
                "model": self.model,
                "prompt": prompt,
                "stream": False,
                "format": "json",
                "options": {"temperature": 0},
            }
        ).encode()
        req = urllib.request.Request(
            f"{self.url}/api/generate", data=body, method="POST", headers={"Content-Type": "application/json"}
        )
        try:
            with _OPENER.open(req, timeout=self.timeout) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as exc:
            detail = exc.read()[:200].decode("utf-8", "replace")
            raise LLMError(f"local LLM at {self.url} answered HTTP {exc.code}: {detail}") from exc
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise LLMUnreachable(f"cannot reach a local LLM at {self.url} ({reason})") from exc
        try:
            data = json.loads(raw)
        except ValueError as exc:
            raise LLMError(f"local LLM at {self.url} did not answer JSON") from exc
        text = data.get("response") if isinstance(data, dict) else None
        if not isinstance(text, str):
            raise LLMError(f"local LLM at {self.url} answered without a `response` field")
        return text
