"""The one JSON error shape of the server: `{"error": {"status": N, "code": "…", "message": "…"}}`."""

from __future__ import annotations

from typing import Any

from fastapi.responses import JSONResponse

CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "payload_too_large",
    422: "invalid",
    429: "rate_limited",
    500: "internal",
    503: "unavailable",
}


class ApiError(Exception):
    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers


def error_body(status: int, message: str) -> dict[str, Any]:
    return {"error": {"status": status, "code": CODES.get(status, "error"), "message": message}}


def error_response(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(error_body(status, message), status_code=status, headers=headers)
