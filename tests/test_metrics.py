"""Metrics and cost (T1-T3) on small hand-made transcripts: exact sums, dedupe, pricing, CLI shapes."""

from __future__ import annotations

import json
import time
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from index.stats.metrics import active_seconds, cost_report, period_of
from index.stats.metrics_health import health, percentile
from index.stats.pricing import BadRate, load_catalog, normalize_model, parse_rate_spec
from index.stats.reports import summary, top_sessions
from index.stats.topic_words import topics
from index.store.db import open_reader
from index.store.ingest import run_index
from total_recall.cli import cli

S1 = "11111111-1111-4111-8111-111111111111"
S2 = "22222222-2222-4222-8222-222222222222"
CWD = "/work/proj"


def _rec(kind: str, uuid: str, parent: str | None, ts: str, sid: str = S1, **kw: Any) -> dict[str, Any]:
    return {
        "type": kind,
        "uuid": uuid,
        "parentUuid": parent,
        "timestamp": ts,
        "sessionId": sid,
        "cwd": CWD,
        "version": "2.1.9",
        "isSidechain": False,
        "userType": "external",
        **kw,
    }


def _asst(
    uuid: str,
    parent: str,
    ts: str,
    mid: str,
    rid: str,
    model: str,
    usage: dict[str, Any],
    sid: str = S1,
    text: str = "ok",
    **kw: Any,
) -> dict[str, Any]:
    return _rec(
        "assistant",
        uuid,
        parent,
        ts,
        sid,
        requestId=rid,
        message={
            "id": mid,
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [{"type": "text", "text": text}],
            "usage": usage,
        },
        **kw,
    )


def _usage(
    i: int, o: int, cc: int = 0, cr: int = 0, c5: int | None = None, c1: int | None = None
) -> dict[str, Any]:
    u: dict[str, Any] = {
        "input_tokens": i,
        "output_tokens": o,
        "cache_creation_input_tokens": cc,
        "cache_read_input_tokens": cr,
        "service_tier": "standard",
    }
    if c5 is not None or c1 is not None:
        u["cache_creation"] = {"ephemeral_5m_input_tokens": c5 or 0, "ephemeral_1h_input_tokens": c1 or 0}
    return u


def _write(path: Path, recs: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))


@pytest.fixture()
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "projects"
    proj = root / "-work-proj"
    a_usage = dict(i=100, cc=1000, cr=2000, c5=600, c1=400)
    _write(
        proj / f"{S1}.jsonl",
        [
            _rec(
                "user",
                "u1",
                None,
                "2026-10-01T10:00:00.000Z",
                message={"role": "user", "content": "fix the parser bug"},
            ),
            # one response (msg_A/req_A) split over two records; the first holds partial output tokens
            _asst(
                "a1",
                "u1",
                "2026-10-01T10:00:05.000Z",
                "msg_A",
                "req_A",
                "claude-sonnet-4-5-20250929",
                _usage(o=5, **a_usage),
                text="thinking about it",
            ),
            _asst(
                "a2",
                "a1",
                "2026-10-01T10:00:09.000Z",
                "msg_A",
                "req_A",
                "claude-sonnet-4-5-20250929",
                _usage(o=50, **a_usage),
                text="done",
            ),
            _rec("system", "d1", "a2", "2026-10-01T10:00:10.000Z", subtype="turn_duration", durationMs=60000),
            _rec(
                "user",
                "u2",
                "d1",
                "2026-10-02T23:59:50.000Z",
                message={"role": "user", "content": "no, that is wrong"},
            ),
            # just before midnight UTC: belongs to 2026-10-02 whatever the local timezone
            _asst(
                "b1", "u2", "2026-10-02T23:59:59.000Z", "msg_B", "req_B", "claude-opus-4-7", _usage(10, 20)
            ),
            _asst(
                "c1",
                "b1",
                "2026-10-03T00:10:00.000Z",
                "msg_C",
                "req_C",
                "mystery-model-9",
                _usage(1000, 1000),
            ),
            _asst(
                "e1",
                "c1",
                "2026-10-03T00:11:00.000Z",
                "msg_E",
                "",
                "<synthetic>",
                _usage(0, 0),
                isApiErrorMessage=True,
                text="API Error",
            ),
        ],
    )
    # a subagent of S1 (nested layout) and a resumed session S2 whose file starts with a copy of msg_A
    _write(
        proj / S1 / "subagents" / "agent-abc1234.jsonl",
        [
            _rec(
                "user",
                "s1",
                None,
                "2026-10-01T10:01:00.000Z",
                isSidechain=True,
                agentId="abc1234",
                message={"role": "user", "content": "search the code"},
            ),
            _asst(
                "s2",
                "s1",
                "2026-10-01T10:01:30.000Z",
                "msg_D",
                "req_D",
                "claude-haiku-4-5-20251001",
                _usage(7, 3, cr=100),
                isSidechain=True,
                agentId="abc1234",
            ),
        ],
    )
    _write(
        proj / f"{S2}.jsonl",
        [
            _asst(
                "a2",
                "a1",
                "2026-10-01T10:00:09.000Z",
                "msg_A",
                "req_A",
                "claude-sonnet-4-5-20250929",
                _usage(o=50, **a_usage),
                sid=S1,
                text="done",
            ),
            _rec(
                "user",
                "v1",
                "a2",
                "2026-10-05T08:00:00.000Z",
                sid=S2,
                message={"role": "user", "content": "continue"},
            ),
            _asst(
                "v2",
                "v1",
                "2026-10-05T08:00:30.000Z",
                "msg_F",
                "req_F",
                "claude-sonnet-4-5-20250929",
                _usage(1, 2),
                sid=S2,
            ),
            _asst(
                "v3",
                "v2",
                "2026-10-05T08:10:30.000Z",
                "msg_G",
                "req_G",
                "claude-sonnet-4-5-20250929",
                _usage(3, 4),
                sid=S2,
            ),
            _asst(
                "v4",
                "v3",
                "2026-10-05T09:10:30.000Z",
                "msg_H",
                "req_H",
                "claude-sonnet-4-5-20250929",
                _usage(5, 6),
                sid=S2,
            ),
        ],
    )
    return root


@pytest.fixture()
def db(corpus: Path, tmp_path: Path) -> Path:
    path = tmp_path / "state" / "index.db"
    report = run_index(path, [corpus])
    assert report.errors == []
    return path


# Hand-computed costs (USD / MTok: sonnet-4.5 3/15/0.3/3.75/6, opus-4.7 5/25, haiku-4.5 1/5/0.1).
COST_A = (100 * 3 + 50 * 15 + 2000 * 0.3 + 600 * 3.75 + 400 * 6) / 1e6
COST_B = (10 * 5 + 20 * 25) / 1e6
COST_D = (7 * 1 + 3 * 5 + 100 * 0.1) / 1e6
COST_FGH = ((1 + 3 + 5) * 3 + (2 + 4 + 6) * 15) / 1e6


def _rows(db: Path, **kw: Any) -> dict[tuple[str, str], dict[str, Any]]:
    rep = cost_report(open_reader(db), load_catalog(kw.pop("rates", ())), **kw)
    return {(r["period"], r[rep["group"]]): r for r in rep["rows"]}


def test_token_sums_split_record_and_cross_file_dedupe(db: Path) -> None:
    rows = _rows(db)
    a = rows[("2026-10-01", "claude-sonnet-4-5-20250929")]
    assert (a["turns"], a["input_tokens"], a["output_tokens"]) == (1, 100, 50)  # largest split record, once
    assert (
        a["cache_creation_tokens"],
        a["cache_5m_tokens"],
        a["cache_1h_tokens"],
        a["cache_read_tokens"],
    ) == (1000, 600, 400, 2000)
    assert a["cost_usd"] == pytest.approx(COST_A, abs=1e-9)
    d = rows[("2026-10-01", "claude-haiku-4-5-20251001")]  # subagent usage counts
    assert (d["turns"], d["total_tokens"]) == (1, 110)
    assert d["cost_usd"] == pytest.approx(COST_D, abs=1e-9)
    assert rows[("2026-10-02", "claude-opus-4-7")]["cost_usd"] == pytest.approx(COST_B, abs=1e-9)
    assert rows[("2026-10-03", "<synthetic>")]["cost_usd"] == 0.0


def test_days_are_utc_whatever_the_local_timezone(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    try:
        rows = _rows(db)
    finally:
        monkeypatch.undo()
        time.tzset()
    assert ("2026-10-02", "claude-opus-4-7") in rows and ("2026-10-03", "claude-opus-4-7") not in rows


def test_unknown_model_is_reported_not_priced(db: Path) -> None:
    s = summary(open_reader(db), load_catalog())
    assert s["unknown_models"] == ["mystery-model-9"]
    assert s["cost_usd"] is None and s["tokens"]["cost_complete"] is False
    assert s["cost_known_usd"] == pytest.approx(COST_A + COST_B + COST_D + COST_FGH, abs=1e-6)
    c = _rows(db)[("2026-10-03", "mystery-model-9")]
    assert c["cost_usd"] is None and c["unknown_models"] == ["mystery-model-9"]


def test_rate_override_prices_unknown_and_replaces_known(db: Path) -> None:
    rows = _rows(db, rates=("mystery-model-9=1/2", "claude-opus-4-7=10/50"))
    assert rows[("2026-10-03", "mystery-model-9")]["cost_usd"] == pytest.approx((1000 * 1 + 1000 * 2) / 1e6)
    assert rows[("2026-10-02", "claude-opus-4-7")]["cost_usd"] == pytest.approx((10 * 10 + 20 * 50) / 1e6)
    s = summary(open_reader(db), load_catalog(["mystery-model-9=1/2"]))
    assert s["unknown_models"] == [] and s["cost_usd"] is not None


def test_since_filters_by_response_time(db: Path) -> None:
    rows = _rows(db, since="2026-10-02T00:00:00.000Z")
    assert {k[0] for k in rows} == {"2026-10-02", "2026-10-03", "2026-10-05"}


def test_periods_and_groups(db: Path) -> None:
    weeks = _rows(db, by="week")
    monday = date(2026, 9, 28)
    assert date.fromisoformat(period_of("2026-10-01", "week")) == monday and monday.weekday() == 0
    assert weeks[("2026-09-28", "claude-sonnet-4-5-20250929")]["turns"] == 1
    assert weeks[("2026-10-05", "claude-sonnet-4-5-20250929")]["turns"] == 3
    months = _rows(db, by="month", group="project")
    (only,) = months.values()
    assert only["turns"] == 8 and only["project"] == CWD


def test_active_and_wall_hours(db: Path) -> None:
    act = active_seconds(open_reader(db))
    assert act[S1] == 60.0  # turn_duration records win
    assert act[S2] == 600.0  # gaps: 10 min counts, the 60 min gap does not
    s = summary(open_reader(db), load_catalog())
    assert s["active_hours"] == round(660 / 3600, 2)
    assert s["sessions"] == 2 and s["projects"] == 1
    assert s["cache_hit_rate"] == round(2100 / (100 + 7 + 1000 + 10 + 1000 + 9 + 2100), 4)


def test_top_sessions_and_topics(db: Path) -> None:
    conn = open_reader(db)
    by_cost = top_sessions(conn, load_catalog(), by="cost")
    assert [r["session_id"] for r in by_cost] == [S1, S2]
    assert by_cost[0]["models"] == sorted(
        [
            "claude-sonnet-4-5-20250929",
            "claude-opus-4-7",
            "mystery-model-9",
            "<synthetic>",
            "claude-haiku-4-5-20251001",
        ]
    )
    assert top_sessions(conn, load_catalog(), by="duration")[0]["session_id"] == S1
    with pytest.raises(ValueError):
        top_sessions(conn, load_catalog(), by="nonsense")
    t = topics(conn)
    assert t[0]["project"] == CWD and t[0]["sessions"] == 2
    assert "parser" in {x["term"] for x in t[0]["terms"]}


def test_pricing_normalisation_tiers_and_dates() -> None:
    cat = load_catalog()
    assert normalize_model("anthropic/claude-sonnet-4-5-20250929[1m]") == "claude-sonnet-4-5"
    assert cat.resolve("us.anthropic.claude-3-7-sonnet-20250219-v1:0") == "claude-3-7-sonnet"
    assert cat.resolve("claude-opus-4-6[1m]") == "claude-opus-4-6"
    assert (
        cat.resolve("gpt-5.2-codex") == "gpt-5.2-codex"
        and cat.resolve("models/gemini-2.5-pro") == "gemini-2.5-pro"
    )
    assert cat.resolve("claude-opus-4-9") is None  # never priced by a near name
    assert cat.cost("<synthetic>", None, 0, 5, 5, 0, 0, 0) == 0.0
    # Sonnet 4.5 above 200k prompt tokens: the whole request at 6/22.5 (cache read 0.6)
    prompt = 150_000 + 60_000
    assert cat.cost("claude-sonnet-4-5", "2025-10-01", prompt, 150_000, 1000, 60_000, 0, 0) == pytest.approx(
        (150_000 * 6 + 1000 * 22.5 + 60_000 * 0.6) / 1e6
    )
    assert cat.cost("claude-sonnet-4-5", "2025-10-01", 200_000, 200_000, 0, 0, 0, 0) == pytest.approx(0.6)
    # Opus 4.6 long-context premium ended on 2026-03-13
    assert cat.cost("claude-opus-4-6", "2026-03-12", 300_000, 300_000, 0, 0, 0, 0) == pytest.approx(3.0)
    assert cat.cost("claude-opus-4-6", "2026-03-13", 300_000, 300_000, 0, 0, 0, 0) == pytest.approx(1.5)
    assert cat.cost("claude-opus-4-7", None, 0, 0, 0, 0, 0, 0, web_search=1000) == pytest.approx(10.0)


def test_rate_spec_parsing() -> None:
    cat = load_catalog()
    name, r = parse_rate_spec("claude-opus-4-7=10/50", cat)
    assert name == "claude-opus-4-7" and (
        r.input,
        r.output,
        r.cache_read,
        r.cache_write_5m,
        r.cache_write_1h,
    ) == (10, 50, 1.0, 12.5, 20.0)
    _, g = parse_rate_spec("gpt-5=2/16", cat)  # OpenAI ratios: cached input 0.1x, no write surcharge
    assert (g.cache_read, g.cache_write_5m) == (pytest.approx(0.2), 2.0)
    _, x = parse_rate_spec("new-model=1/2/0.5/3/4")
    assert (x.cache_read, x.cache_write_5m, x.cache_write_1h) == (0.5, 3, 4)
    for bad in ("nomodel", "=1/2", "m=1", "m=a/b", "m=-1/2", "m=1/2/3/4/5/6", "m=nan/1"):
        with pytest.raises(BadRate):
            parse_rate_spec(bad)


def _cli(db: Path, *args: str) -> Any:
    res = CliRunner().invoke(cli, ["--db", str(db), *args])
    return res


@pytest.mark.parametrize(
    "args",
    [
        ("metrics", "summary"),
        ("metrics", "cost"),
        ("metrics", "cost", "--by", "month", "--group", "project"),
        ("metrics", "sessions", "--by", "corrections"),
        ("metrics", "topics"),
        ("metrics", "health"),
        ("metrics", "rates"),
        ("sources",),
    ],
)
def test_cli_json_is_one_document(db: Path, args: tuple[str, ...]) -> None:
    res = _cli(db, *args, "--json")
    assert res.exit_code == 0, res.output
    json.loads(res.stdout)  # exactly one document, nothing else


def test_cli_json_shapes(db: Path) -> None:
    s = json.loads(_cli(db, "metrics", "summary", "--json").stdout)
    assert {
        "sessions",
        "projects",
        "tokens",
        "cache_hit_rate",
        "cost_usd",
        "unknown_models",
        "active_hours",
        "wall_hours",
        "busiest_project",
        "top_corrections",
        "models",
        "rates_as_of",
    } <= set(s)
    c = json.loads(
        _cli(db, "metrics", "cost", "--by", "week", "--json", "--rate", "mystery-model-9=1/2").stdout
    )
    assert c["total"]["cost_complete"] is True and c["by"] == "week"
    assert {
        "period",
        "model",
        "input_tokens",
        "output_tokens",
        "cache_creation_tokens",
        "cache_read_tokens",
        "cost_usd",
    } <= set(c["rows"][0])
    sess = json.loads(_cli(db, "metrics", "sessions", "--by", "tokens", "-n", "1", "--json").stdout)
    assert len(sess) == 1 and sess[0]["session_id"] == S1


def test_cli_errors_are_one_line(db: Path, tmp_path: Path) -> None:
    res = _cli(db, "metrics", "cost", "--rate", "oops")
    assert res.exit_code != 0 and "--rate" in res.stderr and res.stdout == ""
    res = _cli(db, "metrics", "cost", "--rate", "oops", "--json")  # with --json: one JSON error on stdout
    assert res.exit_code != 0 and "--rate" in json.loads(res.stdout)["error"]["message"] and res.stderr == ""
    res = _cli(db, "metrics", "summary", "--since", "yesterday-ish")
    assert res.exit_code != 0 and "--since" in res.stderr
    res = _cli(tmp_path / "none.db", "metrics", "summary", "--json")
    assert res.exit_code != 0 and "total-recall index" in json.loads(res.stdout)["error"]["fix"]


def test_health_reads_hook_events(db: Path) -> None:
    events = [
        {
            "ts": f"2026-10-01T10:00:0{i}.000Z",
            "event": "hook",
            "hook": "session-start",
            "latency_ms": float(10 * (i + 1)),
            "ok": True,
        }
        for i in range(5)
    ]
    events.append(
        {
            "ts": "2026-10-01T10:01:00.000Z",
            "event": "hook",
            "hook": "user-prompt-submit",
            "latency_ms": 40.0,
            "ok": False,
            "error": "timeout",
        }
    )
    (db.parent / "events.jsonl.1").write_text(json.dumps(events[0]) + "\n")
    (db.parent / "events.jsonl").write_text(
        "".join(json.dumps(e) + "\n" for e in events[1:])
        + "not json\n"
        + json.dumps({"ts": "2026-10-01T10:02:00.000Z", "event": "index", "latency_ms": 120.0, "ok": True})
        + "\n"
    )
    h = health(open_reader(db), db)
    hooks = {x["hook"]: x for x in h["hooks"]["hooks"]}
    assert hooks["session-start"]["fired"] == 5 and hooks["session-start"]["latency_ms_p50"] == 30.0
    assert hooks["session-start"]["latency_ms_p95"] == pytest.approx(48.0)
    assert (
        hooks["user-prompt-submit"]["errors"] == 1 and hooks["user-prompt-submit"]["last_error"] == "timeout"
    )
    assert h["hooks"]["bad_lines"] == 1 and h["hooks"]["fired"] == 6
    assert (
        h["hooks"]["background_index"]["fired"] == 1
        and h["hooks"]["background_index"]["latency_ms_p50"] == 120.0
    )
    assert h["ingest"]["runs"] == 1 and h["freshness"]["up_to_date"] is True and h["db_bytes"] > 0
    assert percentile([], 50) is None and percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5


def test_health_without_events_file(db: Path) -> None:
    h = health(open_reader(db), db, scan_disk=False)
    assert h["hooks"]["fired"] == 0 and "pending_files" not in h["freshness"]


def test_tail_once_indexes_new_bytes(corpus: Path, tmp_path: Path) -> None:
    db = tmp_path / "t" / "index.db"
    res = CliRunner().invoke(
        cli, ["--db", str(db), "tail", "--once", "--projects-root", str(corpus), "--json"]
    )
    assert res.exit_code == 0, res.output
    first = json.loads(res.stdout)
    assert first["files"] == 3 and first["messages_added"] > 0
    with (corpus / "-work-proj" / f"{S2}.jsonl").open("a") as f:
        f.write(
            json.dumps(
                _asst(
                    "v5",
                    "v4",
                    "2026-10-05T09:11:00.000Z",
                    "msg_I",
                    "req_I",
                    "claude-sonnet-4-5-20250929",
                    _usage(1, 1),
                    sid=S2,
                )
            )
            + "\n"
        )
    again = json.loads(
        CliRunner()
        .invoke(cli, ["--db", str(db), "tail", "--once", "--projects-root", str(corpus), "--json"])
        .stdout
    )
    assert again["files_unchanged"] == 2 and again["messages_added"] == 1


def test_sources_lists_detected_agents(corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    (home / ".codex" / "sessions" / "2026" / "10" / "01").mkdir(parents=True)
    (home / ".codex" / "sessions" / "2026" / "10" / "01" / "rollout-x.jsonl").write_text("{}\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    res = CliRunner().invoke(
        cli, ["--db", str(tmp_path / "no.db"), "sources", "--projects-root", str(corpus), "--json"]
    )
    assert res.exit_code == 0, res.output
    src = {s["agent"]: s for s in json.loads(res.stdout)["sources"] if s["exists"] or s["agent"] == "gemini"}
    assert src["claude"]["files"] == 3 and src["claude"]["enabled"] is True
    assert src["codex"]["exists"] and src["codex"]["files"] == 1 and src["codex"]["enabled"] is True
    assert src["gemini"]["exists"] is False


def test_tail_stops_cleanly_on_ctrl_c(corpus: Path, tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    p = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "total_recall",
            "--db",
            str(tmp_path / "w" / "index.db"),
            "tail",
            "--projects-root",
            str(corpus),
            "--interval",
            "0.2",
        ],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # as from a terminal: a suite started in the background by a non-interactive
        # shell runs with SIGINT ignored, and children inherit that (Python then installs
        # no KeyboardInterrupt handler)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert p.stdout is not None
    assert p.stdout.readline().startswith("watching ")
    time.sleep(0.5)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=30)
    assert p.returncode == 0, err
    assert "stopped" in out and "Traceback" not in err
