"""Credentials: argon2 password hashes, signed 24-hour JWTs for logins, and API tokens for machines.

An API token is `trt_` plus 32 random bytes (URL-safe base64). Only its SHA-256 is stored: the token
has 256 bits of entropy, so a fast hash is enough and a lookup costs one index probe per request.
A revoked token, a token of a deleted user, an expired or tampered JWT are all the same 401."""

from __future__ import annotations

import hashlib
import secrets
import time
from dataclasses import dataclass

import jwt
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

TOKEN_PREFIX = "trt_"
ALGORITHM = "HS256"
ISSUER = "total-recall"

_hasher = PasswordHasher()


class Unauthorized(Exception):
    """No usable credential; the message says what was wrong (never which part of a secret)."""


@dataclass(frozen=True, slots=True)
class Credential:
    """A credential as far as it can be checked without the database: the SHA-256 of an API token,
    or the user id of a JWT whose signature and expiry are valid. The database decides the rest
    (hotpath.ACCESS), on every request."""

    token_hash: str | None = None
    user_id: int | None = None


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling, as the database found it: the user, the API token's id (None for a login),
    and the credential, which each project check runs again (hotpath.ACCESS)."""

    user_id: int
    name: str
    token_id: int | None
    credential: Credential


def hash_password(password: str) -> str:
    return _hasher.hash(password)


def check_password(stored: str | None, password: str) -> bool:
    """Constant work whether or not the user exists (a dummy hash is verified for unknown users)."""
    try:
        return _hasher.verify(stored or _DUMMY, password) and stored is not None
    except (VerificationError, InvalidHashError, UnicodeEncodeError):
        return False


_DUMMY = _hasher.hash(secrets.token_hex(16))


def new_api_token() -> tuple[str, str]:
    """(token shown once to the user, hash stored)."""
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    return token, token_hash(token)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def is_api_token(credential: str) -> bool:
    return credential.startswith(TOKEN_PREFIX)


def issue_jwt(user_id: int, name: str, secret: str, ttl_s: int, now: float | None = None) -> str:
    t = int(now if now is not None else time.time())
    claims = {"sub": str(user_id), "name": name, "iat": t, "exp": t + ttl_s, "iss": ISSUER}
    return jwt.encode(claims, secret, algorithm=ALGORITHM)


def read_jwt(token: str, secret: str) -> tuple[int, str]:
    """(user id, name) of a valid token; Unauthorized when expired, tampered or malformed."""
    try:
        claims = jwt.decode(
            token, secret, algorithms=[ALGORITHM], issuer=ISSUER, options={"require": ["exp", "sub", "iss"]}
        )
        return int(claims["sub"]), str(claims.get("name", ""))
    except jwt.ExpiredSignatureError:
        raise Unauthorized("the access token has expired: log in again") from None
    except (jwt.InvalidTokenError, ValueError, TypeError):
        raise Unauthorized("the access token is not valid") from None


def bearer(header: str | None) -> str:
    """The credential of an `Authorization: Bearer …` header."""
    if not header:
        raise Unauthorized("missing Authorization: Bearer <token>")
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        raise Unauthorized("the Authorization header must be `Bearer <token>`")
    return value.strip()
