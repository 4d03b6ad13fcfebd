"""The client's HTTP calls (standard library only: the hooks import this). Every failure — no server,
a timeout, a non-2xx answer, a body that is not JSON — is one TeamError saying what happened."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any


class TeamError(Exception):
    def __init__(self, message: str, status: int = 0) -> None:
        super().__init__(message)
        self.status = status


def call(
    base: str,
    token: str | None,
    method: str,
    path: str,
    *,
    body: Any = None,
    params: dict[str, Any] | None = None,
    timeout: float = 10.0,
) -> Any:
    url = base.rstrip("/") + path
    if params:
        url += "?" + urllib.parse.urlencode({k: v for k, v in params.items() if v is not None})
    data = json.dumps(body).encode("utf-8") if body is not None else None
    req = urllib.request.Request(url, data=data, method=method)
    req.add_header("Accept", "application/json")
    if data is not None:
        req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 - the configured server
            raw = resp.read()
    except urllib.error.HTTPError as exc:
        raise TeamError(f"the server answered {exc.code}: {_message(exc)}", exc.code) from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise TeamError(f"cannot reach the team server at {base}: {reason}") from None
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        raise TeamError("the team server answered something that is not JSON") from None


def _message(exc: urllib.error.HTTPError) -> str:
    try:
        err = json.loads(exc.read() or b"{}").get("error") or {}
        return str(err.get("message") or exc.reason)[:200]
    except (ValueError, AttributeError, OSError):
        return str(exc.reason)[:200]
