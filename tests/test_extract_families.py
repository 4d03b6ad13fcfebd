"""The failure families of issue 11, each from a small transcript the test writes and reads back through
the walker (the indexer's own path): what the user's prompts yield, in the context the index gives them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fixtures.make import Session, slug, uid

from extractors.confidence import bundle_threshold, models
from extractors.model import STANDING_KINDS, Extraction, ToolEvent, Utterance
from extractors.pipeline import extract
from index.briefing.bundle import operator_context, operator_wide
from index.briefing.continuation import continuation
from index.store.db import open_reader
from index.store.ingest import run_index
from lib.context import iter_contexts
from lib.discovery import discover
from lib.model import Carry
from lib.walker import parse_file

CLAIM = "Done. I updated the cache layer and all tests pass."


def _session(tmp_path: Path, turns: list[tuple[str, str]], name: str) -> Path:
    """A session of (assistant text, user prompt) turns, after an opening request."""
    s = Session(uid(name), cwd="/home/dev/projects/alpha")
    s.prompt("Please add a cache for the parsed config files in the loader.")
    for reply, prompt in turns:
        s.response(text=reply)
        s.prompt(prompt)
    path = tmp_path / "projects" / "-home-dev-projects-alpha" / f"{uid(name)}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    return s.write(path)


def _prompts(tmp_path: Path) -> dict[str, list[Extraction]]:
    """Extractions per human prompt text, built as the indexer builds them."""
    out: dict[str, list[Extraction]] = {}
    for found in discover([tmp_path / "projects"]):
        chunk = parse_file(found.path, 0, Carry(), found.info)
        for m, ctx in iter_contexts(chunk.messages, chunk.carry):
            if m.kind != "prompt":
                continue
            u = Utterance(
                uuid=m.uuid,
                session_id=m.session_id,
                role="user",
                text=m.text,
                ts=m.ts,
                cwd=m.cwd,
                prev_assistant_text=ctx.prev_assistant_text,
                recent_tools=[ToolEvent(n, s, e, h) for n, s, e, h in ctx.tools],
            )
            out[m.text] = extract(u)
    return out


def _kinds(found: list[Extraction]) -> set[str]:
    return {e.kind for e in found}


def test_requests_about_review_comments_are_not_corrections(tmp_path: Path) -> None:
    asks = [
        "respond to each PR review comment and push the fixes",
        "commit, and reply to the PR comments with the fix shas",
        "please address the copilot review comments on the PR",
    ]
    _session(tmp_path, [(CLAIM, a) for a in asks], "review")
    got = _prompts(tmp_path)
    for ask in asks:
        assert "correction" not in _kinds(got[ask]), ask


def test_a_never_that_orders_nothing_by_itself_keeps_its_sentence(tmp_path: Path) -> None:
    """A ban is shown alone in the bundle: the words after a "never" said of a thing, before a past
    participle or a preposition would read as a rule they are not ("repeats again")."""
    said = {
        "please log it in the notes and ensure this never repeats again": "ensure this never repeats",
        "decide it case by case, never assumed, never inferred from your end": "case by case",
        "only add it to the website build, and never in the artifacts we ship": "website build",
        "Never commit the generated protobuf files.": None,
    }
    _session(tmp_path, [(CLAIM, p) for p in said], "never")
    got = _prompts(tmp_path)
    for prompt, whole in said.items():
        bans = [e.content for e in got[prompt] if e.kind == "ban"]
        assert bans, prompt
        if whole:
            assert whole in bans[0], bans
        else:
            assert bans[0] == "commit the generated protobuf files", bans


def test_a_relayed_review_is_kept_as_what_the_user_says_of_it(tmp_path: Path) -> None:
    """A "valid points raised by X on the PR" only says that feedback exists; the correction a later
    session needs is what the user goes on to say."""
    said = {
        "some fair points raised by the-bot on the pr. Please keep the docs consistent: "
        "the archived schema must never be edited, it is a snapshot.": "Please keep the docs consistent",
        "the reviewer flagged that the cache key ignores the locale, fix that": "the reviewer flagged",
    }
    _session(tmp_path, [(CLAIM, p) for p in said], "relay")
    got = _prompts(tmp_path)
    for prompt, start in said.items():
        found = [e.content for e in got[prompt] if e.kind == "correction"]
        assert found and found[0].startswith(start), found


def test_a_command_line_over_its_pasted_failure_is_not_the_users_words(tmp_path: Path) -> None:
    """The user's only words are the command, then its log: the correction is the failure, marked pasted."""
    paste = (
        "pnpm serve\n\n> site@1.0.0 serve\n> node scripts/serve.js --port 8080\n\n"
        "[ERROR] Error: plugin: missing generated/index.json. Run the generator first\n"
        "    at load (scripts/plugins.js:12:11)\n    at async Promise.all (index 3)\n"
    )
    _session(tmp_path, [(CLAIM + " Try it with pnpm serve.", paste)], "paste")
    found = [e.content for e in _prompts(tmp_path)[paste] if e.kind == "correction"]
    assert found and found[0].startswith("pasted output: [ERROR] Error: plugin: missing"), found


def test_a_code_line_pasted_after_the_users_words_is_not_theirs(tmp_path: Path) -> None:
    """A lone code fragment ("ffect=mock_query_one):", cut from pasted test output) after the user's own
    line is part of the paste, not of what the user said."""
    paste = (
        "A couple of tests are failing again now\n\n____________ test_row_expansion ____________\n\n"
        "    @pytest.mark.tui\n    def test_row_expansion():\nffect=mock_query_one):\nE   assert 2 == 3\n"
    )
    _session(tmp_path, [(CLAIM, paste)], "codeline")
    found = [e.content for e in _prompts(tmp_path)[paste] if e.kind == "correction"]
    assert found and all("mock_query_one" not in c for c in found), found


def test_corrections_without_cue_words_are_found(tmp_path: Path) -> None:
    pushback = [
        "umm, we have changes in our working copy",
        "`tool stop` is not correct, that runs at the end of the assistant's turn",
        "rather than modifying the loader and the parser, could we call the cache inside the reader?",
        "but this is a CLI, there is no service running, so what cache could be stale?",
    ]
    _session(tmp_path, [(CLAIM, p) for p in pushback], "pushback")
    got = _prompts(tmp_path)
    for p in pushback:
        assert "correction" in _kinds(got[p]), p


def test_tool_status_text_is_not_the_operators_words(tmp_path: Path) -> None:
    pasted = "\u276f ./run.sh\n\U0001f433 Building container image...\n[+] Building 1.3s (1/2)\nERROR: failed to solve"
    status = "\U0001f433 Building container image\u2026"
    _session(tmp_path, [(CLAIM, pasted), ("Let me rebuild it.", status)], "status")
    got = _prompts(tmp_path)
    for text in (pasted, status):
        for e in got[text]:
            assert "Building container" not in e.content, e
            assert e.kind not in ("correction", "ban", "standing_decision", "decision"), e


def test_quoted_and_pasted_text_never_becomes_a_rule_or_decision(tmp_path: Path) -> None:
    quoted = (
        "here is what the other agent printed:\n```\nNever commit to main. Continue until all are done.\n"
        "Let's go with option 2 instead of the rewrite.\n```"
    )
    review = "> Never use mocks in these tests.\n> Always run the linter first."
    _session(tmp_path, [(CLAIM, quoted), (CLAIM, review)], "quoted")
    got = _prompts(tmp_path)
    for text in (quoted, review):
        assert not _kinds(got[text]) & {"ban", "standing_decision", "decision"}, _kinds(got[text])


def test_subagent_prompts_are_not_user_voice() -> None:
    u = Utterance(
        uuid="x",
        session_id="s",
        role="user",
        is_sidechain=True,
        text="Never commit to main. No, that's wrong: always use pnpm instead of npm.",
        prev_assistant_text=CLAIM,
    )
    assert extract(u) == []


def test_every_extraction_carries_a_confidence_and_injection_needs_more() -> None:
    u = Utterance(
        uuid="y",
        session_id="s",
        role="user",
        prev_assistant_text=CLAIM,
        text="No, that's wrong. The parser still fails on empty input, you broke it.",
    )
    found = extract(u)
    assert any(e.kind == "correction" for e in found)
    for e in found:
        assert 0.0 <= e.score <= 1.0
    assert models()["user"]["correction"].emit <= bundle_threshold("correction") <= 1.01
    assert bundle_threshold("truth_rhetoric") > 1.0  # unscored kinds are never injected


# ---- what reaches a session: scope and the compaction goal ------------------------------------------


def _project_session(root: Path, name: str, cwd: str, prompts: list[str]) -> Path:
    s = Session(uid(name), cwd=cwd)
    for i, p in enumerate(prompts):
        if i:
            s.response(text=CLAIM)
        s.prompt(p)
    path = root / slug(cwd) / f"{uid(name)}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    return s.write(path)


def _two_projects(tmp_path: Path, other_prompts: list[str]) -> tuple[Any, str]:
    """An index of another project's session (these prompts) and one here; (reader, this cwd)."""
    root = tmp_path / "projects"
    here = str(tmp_path / "work" / "here")
    _project_session(root, "other", str(tmp_path / "work" / "other"), other_prompts)
    _project_session(root, "here", here, ["Please add retries to the HTTP client with exponential backoff."])
    db = tmp_path / "data" / "index.db"
    run_index(db, [root])
    return open_reader(db), here


def test_another_projects_rules_stay_there_unless_operator_wide(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import index.briefing.gate

    monkeypatch.setattr(index.briefing.gate, "bundle_threshold", lambda kind: 0.0)  # scope alone decides here
    conn, here = _two_projects(
        tmp_path,
        [
            "Please set up the release pipeline for this service with signed tags.",
            "Never commit the generated protobuf files in this repo.",
            "In every repo, never push directly to main; always open a pull request.",
        ],
    )
    try:
        rules = {e.content: e.score for e in _all_rules(conn)}
        ctx = operator_context(conn, here)
    finally:
        conn.close()
    assert any("protobuf" in r for r in rules) and any(
        "every repo" in r.lower() or "push" in r for r in rules
    )
    text = ctx.text
    assert "protobuf" not in text  # another project's own rule
    assert "push directly to main" in text  # stated for every repo
    assert operator_wide("always run the formatter before committing")
    assert not operator_wide("always bump the version in setup.py")  # names this project's material


def _all_rules(conn: object) -> list[Extraction]:
    rows = conn.execute(  # type: ignore[attr-defined]
        "SELECT kind, content, source_uuid, session_id, score FROM extractions WHERE kind IN (?,?,?)",
        ("ban", *STANDING_KINDS),
    ).fetchall()
    return [
        Extraction(kind=k, content=c, source_uuid=s, session_id=sid, score=sc) for k, c, s, sid, sc in rows
    ]


def test_compaction_goal_is_not_an_opening_question(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    cwd = str(tmp_path / "work" / "alpha")
    path = _project_session(
        root,
        "q",
        cwd,
        [
            "how does the config loader decide which file wins?",
            "make the loader merge the user and project files with the project one winning",
        ],
    )
    p = continuation(None, uid("q"), cwd=cwd, transcript_path=str(path))
    assert p.goal is not None and "how does" not in p.goal and "merge the user and project" in p.goal


def test_compaction_directive_is_not_a_background_agents_report(tmp_path: Path) -> None:
    """A background agent's completion notice arrives as a user turn; it is no directive of the user's."""
    root = tmp_path / "projects"
    cwd = str(tmp_path / "work" / "alpha")
    notice = (
        "<task-notification>\n<task-id>a1b2</task-id>\n<output-file>/tmp/tasks/a1b2.output</output-file>\n"
        '<status>completed</status>\n<summary>Agent "Verify the cache" finished</summary>\n'
        "<result>Confirmed: the cache misses on every call.</result>\n</task-notification>"
    )
    path = _project_session(
        root,
        "bg",
        cwd,
        ["make the loader merge the user and project files with the project one winning", notice],
    )
    p = continuation(None, uid("bg"), cwd=cwd, transcript_path=str(path))
    assert p.last_directive is not None and "merge the user and project" in p.last_directive


def test_compaction_goal_is_not_a_question_title(tmp_path: Path) -> None:
    """When every prompt is a question, the packet falls back to the session title, unless the title is
    a question too (then it names no objective, and the packet has no goal)."""
    root = tmp_path / "projects"
    cwd = str(tmp_path / "work" / "alpha")
    asked = ["how does the config loader decide which file wins?", "and where are the defaults read?"]
    for name, title in (
        ("asked", "How does the config loader pick a file?"),
        ("titled", "Config loader merge order"),
    ):
        path = _project_session(root, name, cwd, asked)
        with path.open("a", encoding="utf-8") as f:
            f.write(json.dumps({"type": "ai-title", "sessionId": uid(name), "aiTitle": title}) + "\n")
    db = tmp_path / "data" / "index.db"
    run_index(db, [root])
    conn = open_reader(db)
    try:
        asked_goal = continuation(conn, uid("asked"), cwd=cwd).goal
        titled_goal = continuation(conn, uid("titled"), cwd=cwd).goal
    finally:
        conn.close()
    assert asked_goal is None or "How does" not in asked_goal
    assert titled_goal == "(session title) Config loader merge order"


def test_mcp_items_carry_the_confidence(tmp_path: Path) -> None:
    from index.retrieval.operator_queries import latest_extractions, recall_kinds

    root = tmp_path / "projects"
    cwd = str(tmp_path / "work" / "alpha")
    _project_session(
        root,
        "conf",
        cwd,
        [
            "Please add a cache for the parsed config files in the loader.",
            "No, that's wrong. The loader still fails on empty files, you broke the parser.",
        ],
    )
    db = tmp_path / "data" / "index.db"
    run_index(db, [root])
    conn = open_reader(db)
    try:
        stored = conn.execute("SELECT score FROM extractions WHERE kind = 'correction'").fetchall()
        latest = latest_extractions(conn, ("correction",), scope="global", cwd=None, since=None, limit=5)
        recalled = recall_kinds(conn, "wrong", ("correction",), scope="global", cwd=None, since=None, limit=5)
    finally:
        conn.close()
    assert stored
    for name, res in (("latest", latest), ("recalled", recalled)):
        assert res.items, name
        assert all(0.0 < it["confidence"] <= 1.0 for it in res.items)


def test_background_agent_reports_are_not_user_voice(tmp_path: Path) -> None:
    report = (
        "<task-notification>\n<task-id>a1</task-id>\n<status>completed</status>\n<summary>Agent done</summary>\n"
        "<result>No, that's wrong: the migration still fails. Never run it twice; let's go with plan B instead."
        + " More detail follows." * 150
        + "</result>\n</task-notification>"
    )
    _session(tmp_path, [(CLAIM, report)], "notify")
    got = _prompts(tmp_path)
    assert not got.get(report)  # not read as a prompt at all, and nothing extracted from it


def test_eval_extractors_scores_several_label_sets_per_source(tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    root = tmp_path / "projects"
    rows = []
    for name, cwd in (("a", str(tmp_path / "work" / "alpha")), ("b", str(tmp_path / "work" / "beta"))):
        path = _project_session(
            root,
            name,
            cwd,
            [
                "Please add a cache for the parsed config files in the loader.",
                "No, that's wrong. The loader still fails on empty files, you broke the parser.",
            ],
        )
        recs = [json.loads(line) for line in path.read_text().splitlines()]
        prompts = [r for r in recs if r["type"] == "user"]
        rel = str(path.relative_to(tmp_path))
        rows.append(
            [
                {"id": f"{name}{i}", "uuid": r["uuid"], "file": rel, "labels": lab}
                for i, (r, lab) in enumerate(zip(prompts, (["goal"], ["correction"])))
            ]
        )
    labels = []
    for name, part in zip("ab", rows):
        p = tmp_path / f"labels-{name}.jsonl"
        p.write_text("".join(json.dumps(r) + "\n" for r in part))
        labels += ["--labels", str(p)]
    prov = tmp_path / "PROVENANCE.tsv"
    prov.write_text("path\trepo\n" + "".join(f"{r[0]['file']}\tteam/{n}\n" for n, r in zip("ab", rows)))
    db = tmp_path / "data" / "index.db"
    run_index(db, [root])
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "total_recall",
            "--db",
            str(db),
            "eval",
            "extractors",
            *labels,
            "--provenance",
            str(prov),
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).resolve().parent.parent,
        stdin=subprocess.DEVNULL,
    )
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert set(out["per_source"]) == {"team/a", "team/b"}
    assert out["pooled"]["correction"]["support"] == 2 and out["macro"]["correction"]["sources"] == 0
    assert out["per_source"]["team/a"]["correction"]["tp"] == 1


PROPOSE_ONE = "I can also add a retry wrapper around the fetch so transient errors do not fail the import. Want me to add it?"
OFFER_TWO = (
    "Two ways to store the parsed cache:\n\n1. Keep it in memory per process.\n2. Write it to disk next to "
    "the config.\n\nWhich would you prefer?"
)


def test_approving_a_single_proposal_is_not_a_decision(tmp_path: Path) -> None:
    approvals = ["yes, please add it.", "go ahead with it", "sure, do it"]
    _session(tmp_path, [(PROPOSE_ONE, a) for a in approvals], "approve")
    got = _prompts(tmp_path)
    for a in approvals:
        assert "decision" not in _kinds(got[a]), a


def test_picking_one_of_the_offered_alternatives_is_a_decision(tmp_path: Path) -> None:
    picks = ["2", "option 2, on disk please", "2 is better, write it to disk"]
    _session(tmp_path, [(OFFER_TWO, p) for p in picks], "pick")
    got = _prompts(tmp_path)
    for p in picks:
        assert "decision" in _kinds(got[p]), p


def test_short_imperative_steps_are_not_goals_on_the_models_word(tmp_path: Path) -> None:
    steps = ["Please fix these lint errors", "push it to the branch", "run the tests again"]
    _session(tmp_path, [(CLAIM, s) for s in steps], "steps")
    got = _prompts(tmp_path)
    for s in steps:
        assert "goal" not in _kinds(got[s]), s


def test_permissive_negated_or_hypothetical_always_is_not_a_standing_rule(tmp_path: Path) -> None:
    loose = [
        "For the parser rewrite, you can always use the sample config in my home folder as well.",
        "it doesnt always have to be the cache that is stale..check the loader too",
        "The simplest thing, theoretically, would be to keep one buffer and we always flush it at the end.",
    ]
    _session(
        tmp_path, [(CLAIM, t) for t in loose] + [(CLAIM, "always run the linter before you commit")], "always"
    )
    got = _prompts(tmp_path)
    for t in loose:
        assert not _kinds(got[t]) & {"ban", *STANDING_KINDS}, t
    assert "standing_order" in _kinds(got["always run the linter before you commit"])


def test_a_reaction_to_another_projects_work_stays_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An "I like the X, but ..." reacts to what is at hand in one project; "I like small commits" is a
    taste for every project. Only the taste reaches another project's bundle."""
    import index.briefing.gate

    monkeypatch.setattr(index.briefing.gate, "bundle_threshold", lambda kind: 0.0)
    conn, here = _two_projects(
        tmp_path,
        [
            "Please render the coastline with softer shading.",
            "No, i like the islands but the water got a lot darker than it used to be, undo that.",
        ],
    )
    try:
        kinds = {k for (k,) in conn.execute("SELECT kind FROM extractions WHERE content LIKE '%islands%'")}
        ctx = operator_context(conn, here)
    finally:
        conn.close()
    assert "correction" in kinds
    assert "islands" not in ctx.text
    assert not operator_wide("i like the islands but the water got darker")
    assert not operator_wide("I prefer this one, go with it")
    assert operator_wide("I like small commits with one change each")
    assert operator_wide("I prefer squash merges")
