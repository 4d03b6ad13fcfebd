"""X20: optional local-LLM refinement, against a fake Ollama on 127.0.0.1 (no real model, no network)."""

from __future__ import annotations

import json
import random
import string
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from index.llm.llm_client import LLMError, OllamaClient, check_url, is_loopback
from index.llm.refine import BAND, CAP, FLOOR, candidates, new_score, refine
from index.store.textstore import pack
from lib import sqlite
from total_recall.ui.server import free_port

REPO = Path(__file__).resolve().parent.parent
TOKEN = "ghp_" + "".join(
    random.SystemRandom().choice(string.ascii_letters + string.digits) for _ in range(36)
)


class FakeOllama:
    """Answers POST /api/generate: `doubt` for truth_rhetoric, `confirm` otherwise (or a fixed answer)."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.raw: list[bytes] = []
        self.answer: str | None = None
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                fake.raw.append(body)
                if self.path != "/api/generate":
                    self.send_response(404)
                    self.end_headers()
                    return
                req = json.loads(body)
                fake.requests.append(req)
                verdict = "doubt" if "Kind: truth_rhetoric" in req["prompt"] else "confirm"
                text = (
                    fake.answer
                    if fake.answer is not None
                    else json.dumps({"verdict": verdict, "note": f"fake says {verdict} {TOKEN}"})
                )
                out = json.dumps({"model": req["model"], "response": text, "done": True}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture()
def fake() -> Iterator[FakeOllama]:
    f = FakeOllama()
    yield f
    f.close()


@pytest.fixture()
def db(tmp_path: Path) -> Path:
    from index.store.ingest import run_index
    from total_recall.democorpus import write_demo_corpus

    projects = write_demo_corpus(tmp_path / "demo")
    for f in projects.rglob("*.jsonl"):  # a secret in a transcript, as a user might paste one
        text = f.read_text()
        f.write_text(
            text.replace("Never call time.sleep in tests;", f"Never call time.sleep in tests ({TOKEN});")
        )
    path = tmp_path / "index.db"
    assert run_index(path, [projects]).errors == []
    # An index written before scrubbing existed: the raw token in a candidate's source message body.
    conn = sqlite.connect(path)
    src = conn.execute(
        "SELECT source_uuid FROM extractions WHERE kind='truth_rhetoric' ORDER BY id"
    ).fetchone()[0]
    conn.execute("UPDATE messages SET body=? WHERE uuid=?", (pack(f"You're right, token {TOKEN} works"), src))
    # One goal in the uncertain band whatever the shipped confidence model gives it, so that the fake's
    # `confirm` is exercised too (its `doubt` goes to the truth_rhetoric items).
    conn.execute(
        "UPDATE extractions SET score=0.6 WHERE id=(SELECT min(id) FROM extractions WHERE kind='goal')"
    )
    conn.commit()
    conn.close()
    return path


def _rows(path: Path) -> dict[int, tuple[str, str, float]]:
    conn = sqlite.connect(path)
    try:
        return {
            r[0]: (r[1], r[2], r[3]) for r in conn.execute("SELECT id, kind, content, score FROM extractions")
        }
    finally:
        conn.close()


def _writer(path: Path) -> sqlite.Connection:
    from index.store.db import open_existing_writer

    return open_existing_writer(path)


def test_score_rules() -> None:
    assert new_score(0.6, "doubt") == pytest.approx(0.42)
    assert new_score(0.12, "doubt") == FLOOR
    assert new_score(0.6, "confirm") == pytest.approx(0.65)
    assert new_score(0.93, "confirm") == CAP
    assert new_score(0.5, "unclear") == 0.5


def test_refine_confirms_and_doubts_within_bounds(db: Path, fake: FakeOllama) -> None:
    before = _rows(db)
    in_band = {i for i, (_, _, s) in before.items() if BAND[0] <= s <= BAND[1]}
    assert len(in_band) >= 3
    report = refine(_writer(db), OllamaClient("fake-model", fake.url), limit=100)
    after = _rows(db)
    assert report.stopped is None
    assert report.considered == len(in_band) == len(fake.requests)
    assert report.doubted >= 1 and report.confirmed >= 1
    assert set(after) == set(before)  # nothing created or deleted
    for i, (kind, content, score) in before.items():
        assert after[i][:2] == (kind, content)  # kind and content untouched
        if i not in in_band:
            assert after[i][2] == score
        elif kind == "truth_rhetoric":
            assert after[i][2] == pytest.approx(max(FLOOR, score * 0.7))
        else:
            assert score < after[i][2] <= CAP
    req = fake.requests[0]
    assert req["model"] == "fake-model" and req["stream"] is False and req["format"] == "json"
    assert req["options"] == {"temperature": 0}


def test_refine_is_idempotent_and_bounded(db: Path, fake: FakeOllama) -> None:
    first = refine(_writer(db), OllamaClient("m", fake.url), limit=2)
    assert first.considered == 2 and len(fake.requests) == 2
    rest = refine(_writer(db), OllamaClient("m", fake.url), limit=100)
    scores = _rows(db)
    again = refine(_writer(db), OllamaClient("m", fake.url), limit=100)
    assert again.considered == 0
    assert _rows(db) == scores
    assert len(fake.requests) == first.considered + rest.considered
    ids = [r["id"] for r in first.changes + rest.changes]
    assert len(ids) == len(set(ids))  # no row reviewed twice


def test_secrets_never_reach_the_model_or_the_index(db: Path, fake: FakeOllama) -> None:
    conn = _writer(db)
    assert any(TOKEN in c.source_text for c in candidates(conn, 100))  # the raw token is there to leak
    refine(conn, OllamaClient("m", fake.url), limit=100)
    assert fake.raw and all(TOKEN.encode() not in b for b in fake.raw)
    assert any(b"REDACTED" in b for b in fake.raw)
    notes = [r[0] for r in conn.execute("SELECT note FROM refinements")]
    assert notes and all(TOKEN not in n for n in notes)


def test_unclear_answer_is_recorded_without_changing_scores(db: Path, fake: FakeOllama) -> None:
    fake.answer = "sure, looks fine"
    before = _rows(db)
    report = refine(_writer(db), OllamaClient("m", fake.url), limit=3)
    assert report.unclear == 3 and report.confirmed == report.doubted == 0
    assert _rows(db) == before


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:11434", "http://localhost:1", "http://[::1]:11434", "http://127.0.0.2:80/"]
)
def test_loopback_urls_are_accepted(url: str) -> None:
    assert is_loopback(url)
    assert check_url(url) == url.rstrip("/")


@pytest.mark.parametrize(
    "url",
    [
        "http://10.0.0.5:11434",
        "http://example.com:11434",
        "https://8.8.8.8",
        "http://localhost.evil.com",
        "ftp://127.0.0.1",
        "http://user@127.0.0.1:1",
        "127.0.0.1:11434",
        "http://0.0.0.0:11434",
    ],
)
def test_non_loopback_urls_are_refused(url: str) -> None:
    assert not is_loopback(url)
    with pytest.raises(LLMError, match="loopback"):
        OllamaClient("m", url)


def test_nothing_listening_stops_with_a_clear_error(db: Path) -> None:
    before = _rows(db)
    report = refine(_writer(db), OllamaClient("m", f"http://127.0.0.1:{free_port()}", timeout=5), limit=10)
    assert report.considered == 0
    assert report.stopped and "cannot reach a local LLM" in report.stopped
    assert _rows(db) == before
    conn = sqlite.connect(db)
    assert conn.execute("SELECT count(*) FROM refinements").fetchone()[0] == 0


# --- CLI -----------------------------------------------------------------------------------------


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "total_recall", *map(str, args)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def one_line_error(p: subprocess.CompletedProcess[str], *needles: str) -> str:
    assert p.returncode != 0 and p.stdout == "" and "Traceback" not in p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and " — " in lines[0], p.stderr
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


def test_cli_is_off_without_a_model(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TOTAL_RECALL_LLM_MODEL", raising=False)
    before = _rows(db)
    one_line_error(run("--db", db, "refine"), "off", "--model", "TOTAL_RECALL_LLM_MODEL")
    assert _rows(db) == before


def test_cli_refuses_a_remote_url(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TOTAL_RECALL_LLM_URL", raising=False)
    one_line_error(run("--db", db, "refine", "--model", "m", "--url", "http://203.0.113.9:11434"), "loopback")
    monkeypatch.setenv("TOTAL_RECALL_LLM_URL", "http://example.com")
    one_line_error(run("--db", db, "refine", "--model", "m"), "loopback")


def test_cli_reports_nothing_listening(db: Path) -> None:
    one_line_error(
        run("--db", db, "refine", "--model", "m", "--url", f"http://127.0.0.1:{free_port()}"),
        "cannot reach",
        "ollama serve",
    )


def test_cli_refines_and_dry_run_calls_nothing(
    db: Path, fake: FakeOllama, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TOTAL_RECALL_LLM_MODEL", raising=False)
    p = run("--db", db, "refine", "--dry-run", "--json", "--limit", "3")
    assert p.returncode == 0, p.stderr
    items = json.loads(p.stdout)["items"]
    assert len(items) == 3 and fake.requests == []
    assert all(TOKEN not in it["prompt"] for it in items)
    monkeypatch.setenv("TOTAL_RECALL_LLM_MODEL", "fake-model")
    p = run("--db", db, "refine", "--url", fake.url, "--kind", "truth_rhetoric", "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["model"] == "fake-model" and out["considered"] == len(fake.requests) >= 1
    assert out["doubted"] == out["considered"]
    assert {c["kind"] for c in out["changes"]} == {"truth_rhetoric"}
