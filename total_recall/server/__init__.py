"""The team memory server (issue 16, S6): shared project memory over an authenticated HTTP API on
PostgreSQL. `total-recall server …` (total_recall/cmd_server.py) administers and runs it; the
`server` extra installs its dependencies (FastAPI, uvicorn, psycopg 3, PyJWT, argon2-cffi), which
only these modules import."""
