"""The `total-recall ui` ASGI app (Starlette): read-only pages over the index, plus the memory actions a
person takes on purpose (promote, demote/forget an item, mark it wrong or helpful, forget a session), each a POST that carries the
page's CSRF token and goes through the same index functions as the CLI, under the index lock.

Served on loopback only; the Host header must name loopback too (a DNS-rebinding page cannot drive
it). Another interface is allowed only with an access token, which every request then carries."""

from __future__ import annotations

import hmac
import re
import secrets
import threading
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from index.retrieval import SessionFilter, change_stamp
from index.store import IndexBusy, open_reader, parse_since
from lib import sqlite
from total_recall.ui import actions, pages
from total_recall.ui.render import code_css, environment

Scope = MutableMapping[str, Any]
ASGI = Callable[[Scope, Callable[[], Awaitable[Any]], Callable[[Scope], Awaitable[None]]], Awaitable[None]]
LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
TOKEN_COOKIE = "tr_token"


@dataclass
class Config:
    """Where the index is and who may talk to the app. `token` is required off loopback."""

    db: Path
    host: str = "127.0.0.1"
    port: int = 8765
    token: str | None = None
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(24))

    def host_allowed(self, host_header: str) -> bool:
        if self.token:
            return True  # the token, not the name, is the check off loopback
        name = host_header.rsplit(":", 1)[0] if not host_header.endswith("]") else host_header
        return name in LOOPBACK


class Guard:
    """Host / token checks before any route, and security headers on every response."""

    def __init__(self, app: ASGI, cfg: Config) -> None:
        self.app, self.cfg = app, cfg

    async def __call__(self, scope: Scope, receive: Callable[[], Awaitable[Any]], send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        req = Request(scope)
        if not self.cfg.host_allowed(req.headers.get("host", "")):
            await _text(403, "this viewer answers on 127.0.0.1 only")(scope, receive, send)
            return
        if self.cfg.token and not _token_ok(req, self.cfg.token):
            await _text(401, "pass ?token=… (given to `total-recall ui --token`)")(scope, receive, send)
            return

        async def with_headers(message: Scope) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers += [
                    (b"content-security-policy", CSP.encode()),
                    (b"x-content-type-options", b"nosniff"),
                    (b"referrer-policy", b"same-origin"),
                    (b"x-frame-options", b"DENY"),
                ]
                if self.cfg.token and req.query_params.get("token"):
                    cookie = f"{TOKEN_COOKIE}={self.cfg.token}; HttpOnly; SameSite=Strict; Path=/"
                    headers.append((b"set-cookie", cookie.encode()))
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, with_headers)


def _token_ok(req: Request, token: str) -> bool:
    got = req.query_params.get("token") or req.cookies.get(TOKEN_COOKIE) or ""
    return hmac.compare_digest(got.encode(), token.encode())


def _text(status: int, text: str) -> Response:
    return Response(text + "\n", status_code=status, media_type="text/plain")


class Stamp:
    """The index's change stamp, read on one connection kept open (PRAGMA data_version only moves
    when *another* connection commits)."""

    def __init__(self, db: Path) -> None:
        self.db = db
        self.lock = threading.Lock()
        self.conn: sqlite.Connection | None = None

    def read(self) -> int:
        with self.lock:
            try:
                if self.conn is None:
                    self.conn = open_reader(self.db)
                return change_stamp(self.conn)
            except sqlite.Error:
                self.conn = None
                return -1


def create_app(cfg: Config) -> Starlette:
    env = environment()
    stamp = Stamp(cfg.db)

    @contextmanager
    def reader() -> Iterator[sqlite.Connection]:
        conn = open_reader(cfg.db)
        try:
            yield conn
        finally:
            conn.close()

    def page(req: Request, template: str, ctx: dict[str, Any], status: int = 200) -> HTMLResponse:
        html = env.get_template(template).render(
            **ctx, csrf=cfg.csrf, nav=template.split(".")[0], standalone=False
        )
        return HTMLResponse(html, status_code=status)

    def not_found(req: Request, what: str) -> HTMLResponse:
        return page(req, "error.html", {"message": f"no {what} in the index"}, 404)

    def sessions(req: Request) -> Response:
        q = req.query_params
        f = SessionFilter(
            project=q.get("project") or None,
            since=q.get("since") or None,
            until=q.get("until") or None,
            text=q.get("text") or None,
            has_errors=q.get("errors") == "1",
            model=q.get("model") or None,
        )
        with reader() as conn:
            ctx = pages.sessions_page(conn, f, _int(q.get("page"), 1))
        keep = {k: v for k, v in q.items() if k != "page" and v}
        return page(req, "sessions.html", {**ctx, "query": urlencode(keep)})

    def session(req: Request) -> Response:
        sid = req.path_params["sid"]
        with reader() as conn:
            ctx = pages.session_page(conn, sid, cfg.db)
        return not_found(req, "such session") if ctx is None else page(req, "session.html", ctx)

    def agent(req: Request) -> Response:
        with reader() as conn:
            ctx = pages.agent_page(conn, req.path_params["sid"], req.path_params["aid"])
        return not_found(req, "such subagent") if ctx is None else page(req, "agent.html", ctx)

    def export(req: Request) -> Response:
        from total_recall.ui.export import session_html, session_markdown

        sid, fmt = req.path_params["sid"], req.path_params["fmt"]
        if fmt not in ("md", "html"):
            return not_found(req, f"export format {fmt!r} (md or html)")
        with reader() as conn:
            body = session_markdown(conn, sid) if fmt == "md" else session_html(conn, sid)
        if body is None:
            return not_found(req, "such session")
        kind = "text/markdown" if fmt == "md" else "text/html"
        disp = f'attachment; filename="session-{re.sub(r"[^0-9A-Za-z-]", "", sid)[:8]}.{fmt}"'
        return Response(body, media_type=kind, headers={"content-disposition": disp})

    def search(req: Request) -> Response:
        q = req.query_params
        with reader() as conn:
            ctx = pages.search_page(conn, q.get("q", ""), q.get("project"), q.get("by") == "session")
        return page(req, "search.html", ctx)

    def memory(req: Request) -> Response:
        with reader() as conn:
            ctx = pages.memory_page(conn, cfg.db, req.query_params.get("project"))
        return page(req, "memory.html", {**ctx, "done": req.query_params.get("done")})

    def why(req: Request) -> Response:
        from lib.memid import parse_id

        key = parse_id(req.path_params["item_id"])
        with reader() as conn:
            ctx = pages.why_page(conn, cfg.db, key) if key else None
        return not_found(req, "memory with that id") if ctx is None else page(req, "why.html", ctx)

    def usage(req: Request) -> Response:
        q = req.query_params
        try:
            since = parse_since(q.get("since") or None)
        except ValueError as exc:
            return page(req, "error.html", {"message": str(exc)}, 400)
        with reader() as conn:
            ctx = pages.usage_page(conn, cfg.db, q.get("by", "day"), since)
        return page(req, "usage.html", {**ctx, "since_arg": q.get("since", "")})

    async def act(req: Request) -> Response:
        form = await req.form()
        if not hmac.compare_digest(str(form.get("csrf", "")).encode(), cfg.csrf.encode()):
            return _text(403, "stale or missing form token: reload the page and try again")
        origin = req.headers.get("origin")
        if origin and origin.split("://", 1)[-1] != req.headers.get("host"):
            return _text(403, "cross-site request refused")
        try:
            note, back = actions.run(cfg.db, req.path_params["action"], {k: str(v) for k, v in form.items()})
        except (ValueError, LookupError, IndexBusy) as exc:
            return page(req, "error.html", {"message": str(exc)}, 400)
        sep = "&" if "?" in back else "?"
        return RedirectResponse(f"{back}{sep}{urlencode({'done': note})}", status_code=303)

    def confirm_forget(req: Request) -> Response:
        with reader() as conn:
            ctx = pages.session_page(conn, req.path_params["sid"])
        return not_found(req, "such session") if ctx is None else page(req, "forget.html", ctx)

    def api_stamp(_req: Request) -> Response:
        return JSONResponse({"stamp": stamp.read()})

    def css(_req: Request) -> Response:
        return Response(code_css(), media_type="text/css")

    routes = [
        Route("/", sessions),
        Route("/session/{sid}", session),
        Route("/session/{sid}/agent/{aid}", agent),
        Route("/session/{sid}/export.{fmt:str}", export),
        Route("/session/{sid}/forget", confirm_forget),
        Route("/search", search),
        Route("/memory", memory),
        Route("/why/{item_id}", why),
        Route("/usage", usage),
        Route("/act/{action}", act, methods=["POST"]),
        Route("/api/stamp", api_stamp),
        Route("/assets/code.css", css),
        Mount("/static", StaticFiles(packages=[("total_recall.ui", "static")]), name="static"),
    ]
    app = Starlette(routes=routes)
    app.add_middleware(Guard, cfg=cfg)
    return app


def _int(v: str | None, default: int) -> int:
    try:
        return max(1, int(v or default))
    except ValueError:
        return default
