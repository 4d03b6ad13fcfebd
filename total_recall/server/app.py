"""The FastAPI application: the connection pool, the one JSON error shape, the body-size limit and the
per-token rate limit. Routes are in `routes.py`.

Every error is `{"error": {"status": N, "code": "…", "message": "…"}}`, whatever raised it (our
checks, FastAPI's validation, an unexpected failure, which is logged and answered 500)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from psycopg_pool import ConnectionPool
from starlette.exceptions import HTTPException as StarletteHTTPException

from total_recall.server.config import ServerConfig
from total_recall.server.errors import ApiError, error_response

log = logging.getLogger("total_recall.server")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class BodyLimit:
    """413 for a body over `max_body` bytes: by its Content-Length, or while it streams in."""

    def __init__(self, app: ASGIApp, max_body: int) -> None:
        self.app = app
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = dict(scope.get("headers") or []).get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > self.max_body):
            await self._reject(scope, receive, send)
            return
        if length is not None:
            await self.app(scope, receive, send)  # the server refuses bodies longer than their length
            return
        # No (trusted) length: read the body here, at most max_body bytes, then replay it to the app.
        body, more = b"", True
        while more:
            msg = await receive()
            if msg["type"] != "http.request":
                await self.app(scope, _replay([msg]), send)
                return
            body += msg.get("body", b"")
            more = bool(msg.get("more_body"))
            if len(body) > self.max_body:
                await self._reject(scope, receive, send)
                return
        await self.app(
            scope, _replay([{"type": "http.request", "body": body, "more_body": False}], receive), send
        )

    def _message(self) -> str:
        return f"the request body is larger than {self.max_body} bytes"

    async def _reject(self, scope: Scope, receive: Receive, send: Send) -> None:
        await error_response(413, self._message())(scope, receive, send)


def _replay(messages: list[Message], then: Receive | None = None) -> Receive:
    """A receive that hands out `messages`, then defers to `then` (e.g. for the disconnect)."""
    queue = list(messages)

    async def receive() -> Message:
        if queue:
            return queue.pop(0)
        if then is None:
            return {"type": "http.disconnect"}
        return await then()

    return receive


class RateLimiter:
    """A token bucket per caller (API token or login): `rate` requests a second, bursts of `burst`.
    Buckets that have refilled are forgotten once there are more than `max_keys` (login names are
    chosen by the caller, so the table must not grow without bound)."""

    max_keys = 10_000

    def __init__(self, rate: float, burst: float) -> None:
        self.rate, self.burst = rate, burst
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def take(self, key: str, now: float | None = None) -> float:
        """0 when the request may go on, else the seconds to wait."""
        t = time.monotonic() if now is None else now
        with self._lock:
            if len(self._buckets) > self.max_keys:
                full = [k for k, (n, at) in self._buckets.items() if n + (t - at) * self.rate >= self.burst]
                for k in full:
                    del self._buckets[k]
            tokens, last = self._buckets.get(key, (self.burst, t))
            tokens = min(self.burst, tokens + (t - last) * self.rate)
            if tokens >= 1:
                self._buckets[key] = (tokens - 1, t)
                return 0.0
            self._buckets[key] = (tokens, t)
            return (1 - tokens) / self.rate


def create_app(config: ServerConfig) -> FastAPI:
    from total_recall.server.routes import router

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        pool = ConnectionPool(
            config.dsn,
            min_size=config.pool_min,
            max_size=config.pool_max,
            open=False,
            timeout=config.pool_timeout,
            # One statement per push or recall (hotpath.py): autocommit makes it one round trip; the
            # routes that write twice open a transaction. Statements are prepared on first use.
            kwargs={"autocommit": True, "prepare_threshold": 0},
        )
        pool.open(wait=False)
        app.state.pool = pool
        try:
            yield
        finally:
            pool.close()

    app = FastAPI(
        title="total-recall team memory",
        version="1",
        summary="Shared project memory for AI coding agents (issue 16).",
        lifespan=lifespan,
    )
    app.state.config = config
    app.state.limiter = RateLimiter(config.limits.rate_per_s, config.limits.burst)
    app.state.vectors = None  # decided on first use: a model is configured and the schema has vectors
    app.include_router(router)
    _errors(app)
    app.add_middleware(BodyLimit, max_body=config.limits.max_body)
    return app


def _errors(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def api_error(request: Request, exc: ApiError) -> JSONResponse:
        return error_response(exc.status, exc.message, exc.headers)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return error_response(exc.status_code, str(exc.detail))

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = []
        for e in exc.errors()[:5]:
            where = ".".join(str(p) for p in e.get("loc", ()) if p != "body")
            problems.append(f"{where}: {e.get('msg', 'invalid')}")
        return error_response(422, "; ".join(problems) or "invalid request")

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        return error_response(500, "internal error (logged on the server)")
