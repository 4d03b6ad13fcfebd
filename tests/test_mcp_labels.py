"""The MCP tools name projects as the CLI does: by their unique short label among the index's projects
(`index.store.project_labeller`, over `lib.project.project_labels`) — two projects both called `api`
are `work/api` and `home/api`, not two `api`s an agent cannot tell apart."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fixtures import make

from index.store import open_reader, project_labeller, run_index
from lib.settings import Settings
from mcp_server.envelope import Runtime
from mcp_server.tools_recall import get_session_digest, prior_sessions_for_cwd, search_messages

WORK, HOME = "/home/dev/work/api", "/home/dev/home/api"


def _session(root: Path, cwd: str) -> str:
    sid = make.uid("labels", cwd)
    s = make.Session(sid, cwd=cwd)
    s.prompt("The payment webhook retry loop hangs when the queue is empty.")
    s.response(text="The webhook retry now waits with a backoff and stops after five attempts.")
    path = root / make.slug(cwd) / f"{sid}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(make.dumps(r) + b"\n" for r in s.records if isinstance(r, dict)))
    return sid


def _json(result: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(result.content[0].text)
    return data


def _projects(value: Any) -> set[str]:
    """Every `project` field anywhere in an answer."""
    if isinstance(value, dict):
        own = {value["project"]} if isinstance(value.get("project"), str) else set()
        return own.union(*(_projects(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(_projects(v) for v in value))
    return set()


def test_mcp_answers_use_the_clis_unique_project_labels(tmp_path: Path) -> None:
    root, db = tmp_path / "projects", tmp_path / "index.db"
    ids = {_session(root, WORK): "work/api", _session(root, HOME): "home/api"}
    run_index(db, [root])
    rt = Runtime(db, WORK, Settings.from_env())
    label = project_labeller(open_reader(db))
    assert {label(WORK), label(HOME)} == {"work/api", "home/api"}  # what the CLI's tables print

    hits = _json(search_messages(rt, query="webhook retry", mode="snippets", scope="global"))["hits"]
    assert {h["session_id"]: h["project"] for h in hits} == ids
    rows = _json(search_messages(rt, query="webhook retry", mode="index", scope="global"))["hits"]
    assert {r["session_id"]: r["project"] for r in rows} == ids
    uuid = next(r["uuid"] for r in rows if ids[r["session_id"]] == "home/api")
    assert _json(search_messages(rt, mode="timeline", uuid=uuid))["project"] == "home/api"
    assert _projects(_json(search_messages(rt, mode="full", uuids=[uuid]))) == {"home/api"}
    for topic in ("webhook retry", None):
        items = _json(prior_sessions_for_cwd(rt, topic=topic, scope="global"))["items"]
        assert {i["session_id"]: i["project"] for i in items} == ids
    for sid, want in ids.items():
        assert _json(get_session_digest(rt, sid))["project"] == want
