"""Faults and hostile input (issue 10): the index run never stops, never stalls, never tracebacks,
and whatever happens to it (kill -9, a full disk, concurrent runs) the next run ends with exactly
the index a clean full run gives, on every table."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from fixtures import make, rows
from test_properties import ANSWERS, PROMPTS

from index.store.db import open_writer
from index.store.first_build import building_path
from index.store.ingest import run_index
from lib import sqlite
from lib.discovery import key_path

REPO = Path(__file__).resolve().parent.parent


def cli(
    *args: str | Path, timeout: float = 120, prefix: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*prefix, sys.executable, "-m", "total_recall", *map(str, args)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def good_session(project_dir: Path, name: str, n: int = 6) -> str:
    """A small well-formed transcript whose prompts make the extractors fire (goals, bans, failures)."""
    sid = make.uid("faults", name)
    s = make.Session(sid, cwd=f"/home/dev/projects/{name}")
    for i in range(n):
        s.prompt(PROMPTS[(i * 3 + len(name)) % len(PROMPTS)] + f" ({name} {i})")
        call = s.response(
            text=ANSWERS[i % len(ANSWERS)], tools=[("Bash", {"command": f"pytest -q -k t{i}"})]
        )[-1]
        s.tool_result(call, f"{i} failed" if i % 3 == 0 else "ok", is_error=i % 3 == 0)
    make.write(project_dir / f"{sid}.jsonl", s.records)
    return sid


def corpus(root: Path, sessions: int = 12) -> Path:
    """The quirk corpus plus `sessions` small projects: a tree worth killing a run in."""
    make.build_corpus(root)
    for i in range(sessions):
        good_session(root / f"-home-dev-projects-p{i % 4}", f"p{i}", n=4 + i % 5)
    return root


def clean_snapshot(root: Path, tmp: Path) -> dict[str, list[tuple]]:
    """What one full index of `root` from scratch holds."""
    db = tmp / "clean.db"
    assert run_index(db, [root], jobs=1).errors == []
    return rows.snapshot(db, root=root)


def assert_equal_to_clean(db: Path, root: Path, tmp: Path) -> None:
    got, want = rows.snapshot(db, root=root), clean_snapshot(root, tmp)
    assert set(want) >= rows.every_table(db) - rows.NOT_COMPARED
    for table in want:
        assert got[table] == want[table], table


# ---------------------------------------------------------------------------------------------------
# malformed inputs: counted and skipped, never fatal, never a stall
# ---------------------------------------------------------------------------------------------------


def hostile_tree(root: Path) -> dict[str, str]:
    """Every kind of bad input next to good transcripts; returns the good sessions' ids by name."""
    good = {name: good_session(root / "-home-dev-projects-good", name) for name in ("alpha", "beta")}
    bad = root / "-home-dev-projects-bad"
    bad.mkdir(parents=True)
    s = make.Session(make.uid("hostile"), cwd="/home/dev/projects/bad")
    p = s.prompt("before the hostile lines")
    lone = make.dumps(s.prompt("LONE")).replace(b"LONE", b"lone \\ud800 surrogate")  # orjson refuses it
    lines: list[dict | bytes] = [
        p,
        b'{"a":' * 3000 + b"1" + b"}" * 3000,  # deeper than any decoder allows
        b"[" * 200_000,  # and deeper still, never closed
        lone,
        b"\x00\x01\x02 binary \xff\xfe",
        b'{"type":"user"}\r',
        b'{"type":"user","message":{"content":"' + b"x" * 3_000_000 + b'"}}' + b"junk",
    ]
    s.last = p["uuid"]
    lines.append(s.prompt("after the hostile lines"))
    make.write(bad / f"{s.session_id}.jsonl", lines)
    good["hostile"] = s.session_id
    (bad / "random.jsonl").write_bytes(random.Random(10).randbytes(200_000))
    (bad / "empty.jsonl").write_bytes(b"")
    (bad / "dir.jsonl").mkdir()
    os.mkfifo(bad / "fifo.jsonl")  # opening it would block the run forever
    (bad / "loop").symlink_to(bad, target_is_directory=True)
    (root / "-slug-loop").symlink_to(root, target_is_directory=True)
    (bad / "zero.jsonl").symlink_to("/dev/zero")
    (bad / "dangling.jsonl").symlink_to(bad / "nowhere.jsonl")
    odd = Path(os.fsdecode(os.fsencode(root) + b"/-home-dev-caf\xe9"))
    good["odd"] = good_session(odd, "odd")
    os.rename(odd / f"{good['odd']}.jsonl", Path(os.fsdecode(os.fsencode(odd) + b"/\xff\xfe" + b"odd.jsonl")))
    return good


def test_hostile_inputs_are_counted_and_skipped(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    good = hostile_tree(root)
    db = tmp_path / "index.db"
    for jobs in ("1", "2"):
        p = cli("--db", db, "index", "--projects-root", root, "--json", "--jobs", jobs, "--full", timeout=120)
        assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
        report = json.loads(p.stdout)
        assert report["errors"] == []
        assert report["bad_lines"]["too_deep"] == 2
        conn = sqlite.connect(db)
        per_file = {
            Path(key_path(p)).name: (lines, bad, records)
            for p, lines, bad, records in conn.execute(
                "SELECT path, lines, bad_lines, records FROM ingest_state"
            )
        }
        # two too deep, NUL bytes, a record with no ids, one glued to junk; the rest are records
        assert per_file[f"{good['hostile']}.jsonl"] == (8, 5, 3)
        lines, bad, records = per_file["random.jsonl"]
        assert lines > 500 and bad == lines and records == 0
        sessions = {r[0] for r in conn.execute("SELECT session_id FROM sessions")}
        assert set(good.values()) <= sessions
        texts = [
            r[0]
            for r in conn.execute("SELECT first_prompt FROM sessions WHERE session_id=?", (good["hostile"],))
        ]
        assert texts == ["before the hostile lines"]
        n = conn.execute("SELECT count(*) FROM messages WHERE session_id=?", (good["hostile"],)).fetchone()[0]
        assert n == 3  # before, the lone-surrogate record repaired (U+FFFD), after
        odd = [r[0] for r in conn.execute("SELECT path FROM ingest_state") if "odd.jsonl" in r[0]]
        assert len(odd) == 1 and os.path.isfile(key_path(odd[0]))
    again = cli("--db", db, "index", "--projects-root", root, "--json")
    assert json.loads(again.stdout)["files"] == json.loads(again.stdout)["files_unchanged"]  # stable keys


def test_deep_line_with_two_workers_does_not_stall(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    for i in range(4):
        good_session(root / "-p", f"w{i}")
    make.write(root / "-p" / "deep.jsonl", [b"[" * 100_000, b'{"a":' * 1500 + b"1" + b"}" * 1500])
    p = cli("--db", tmp_path / "i.db", "index", "--projects-root", root, "--json", "--jobs", "2", timeout=60)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["bad_lines"] == {"too_deep": 2}


def test_a_parser_process_that_dies_is_reported_not_waited_for(tmp_path: Path) -> None:
    """A worker killed (OOM killer, a crash in C) must not hang the pool: the run reports that file."""
    root = tmp_path / "projects"
    for i in range(5):
        good_session(root / "-p", f"k{i}")
    victim = next((root / "-p").glob("*.jsonl"))
    code = textwrap.dedent(f"""
        import os, sys
        from pathlib import Path
        import index.store.parsers as parsers
        real = parsers._safe_prepare
        def dying(t):
            if t.path.endswith({victim.name!r}):
                os._exit(9)
            return real(t)
        parsers._safe_prepare = dying
        from index.store.ingest import run_index
        r = run_index(Path(sys.argv[1]), [Path(sys.argv[2])], jobs=2)
        print(len(r.errors), r.files - r.files_unchanged, flush=True)
    """)
    p = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "i.db"), str(root)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["1", "5"]
    conn = sqlite.connect(tmp_path / "i.db")
    assert conn.execute("SELECT count(*) FROM ingest_state WHERE offset > 0").fetchone()[0] == 4
    again = run_index(tmp_path / "i.db", [root])  # it died twice: left alone while it is unchanged
    assert again.errors == [] and again.files_skipped == 1
    os.utime(victim, ns=(time.time_ns(), time.time_ns()))  # changed: the next run reads it
    again = run_index(tmp_path / "i.db", [root])
    assert again.errors == [] and again.files_skipped == 0
    assert_equal_to_clean(tmp_path / "i.db", root, tmp_path)


def _unprivileged() -> tuple[str, ...] | None:
    """A command prefix under which file permissions apply (root bypasses them)."""
    if os.geteuid() != 0:
        return ()
    setpriv = shutil.which("setpriv")
    if (
        setpriv
        and subprocess.run(
            [setpriv, "--bounding-set=-dac_override,-dac_read_search", "true"], capture_output=True
        ).returncode
        == 0
    ):
        return (setpriv, "--bounding-set=-dac_override,-dac_read_search")
    return None


def test_unreadable_file_and_folder_are_reported_and_the_rest_indexed(tmp_path: Path) -> None:
    prefix = _unprivileged()
    if prefix is None:
        pytest.skip("running as root without setpriv: permissions cannot be enforced")
    root = tmp_path / "projects"
    sid = good_session(root / "-ok", "readable")
    good_session(root / "-locked-dir", "hidden")
    secret = root / "-ok" / f"{good_session(root / '-ok', 'secret')}.jsonl"
    secret.chmod(0)
    (root / "-locked-dir").chmod(0)
    try:
        p = cli("--db", tmp_path / "i.db", "index", "--projects-root", root, "--json", prefix=prefix)
    finally:
        secret.chmod(0o600)
        (root / "-locked-dir").chmod(0o700)
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    report = json.loads(p.stdout)
    assert len(report["errors"]) == 1 and "Permission denied" in report["errors"][0]
    conn = sqlite.connect(tmp_path / "i.db")
    assert conn.execute("SELECT count(*) FROM sessions WHERE session_id=?", (sid,)).fetchone()[0] == 1


def test_an_index_that_cannot_be_written_is_one_line_with_a_fix(tmp_path: Path) -> None:
    prefix = _unprivileged()
    if prefix is None:
        pytest.skip("running as root without setpriv: permissions cannot be enforced")
    root = tmp_path / "projects"
    good_session(root / "-p", "ro")
    ro_dir, ro_db = tmp_path / "ro-dir", tmp_path / "ro-db" / "index.db"
    ro_dir.mkdir()
    assert run_index(ro_db, [root]).errors == []
    good_session(root / "-p", "ro2")
    ro_dir.chmod(0o500)
    for f in ro_db.parent.iterdir():
        f.chmod(0o400)
    try:
        for db in (ro_dir / "index.db", ro_db):
            p = cli("--db", db, "index", "--projects-root", root, prefix=prefix)
            assert p.returncode != 0 and p.stdout == "" and "Traceback" not in p.stderr, p.stderr
            (line,) = p.stderr.strip().splitlines()
            # one classifier for rights (index.store.db.access_problem): it names the place and the chmod
            assert line.startswith("error: ") and str(db.parent) in line and "chmod u+" in line, line
    finally:
        ro_dir.chmod(0o700)
        for f in ro_db.parent.iterdir():
            f.chmod(0o600)
    assert run_index(ro_db, [root]).errors == []  # writable again: it catches up
    assert_equal_to_clean(ro_db, root, tmp_path)


# ---------------------------------------------------------------------------------------------------
# kill -9 mid-run, then a re-run: a clean full index, every table
# ---------------------------------------------------------------------------------------------------

_DRIVER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    import index.store.finalize as fin
    import index.store.ingest as ingest
    ingest._Batch.MAX_BYTES = 1  # commit after every file, so a kill lands between commits
    close = ingest._Batch.close
    def announce(self):
        was_open = self.open
        close(self)
        if was_open:
            print("committed", flush=True)
            time.sleep(0.02)
    ingest._Batch.close = announce
    materialise = fin.materialise
    def slow_materialise(conn):
        materialise(conn)
        print("finalizing", flush=True)
        time.sleep(60)  # killed here: inside the finalising transaction
    fin.materialise = slow_materialise
    ingest.run_index(Path(sys.argv[1]), [Path(sys.argv[2])], jobs=int(sys.argv[3]))
""")


@pytest.mark.parametrize(
    ("jobs", "kill_after", "first"),
    [
        (1, "committed:1", False),
        (1, "committed:12", False),
        (2, "committed:5", False),
        (1, "finalizing:1", False),
        (1, "committed:12", True),
        (2, "finalizing:1", True),
    ],
)
def test_kill_9_mid_run_then_rerun_equals_a_clean_index(
    tmp_path: Path, jobs: int, kill_after: str, first: bool
) -> None:
    """What was committed survives the kill: in the index itself when it exists (WAL), in the file a
    first index is built in otherwise (index/store/first_build.py), while nothing half-built shows at
    the index path; the next run goes on from there."""
    root = corpus(tmp_path / "projects")
    db = tmp_path / "index.db"
    if not first:
        open_writer(db).close()
    what, n = kill_after.split(":")
    child = subprocess.Popen(
        [sys.executable, "-c", _DRIVER, str(db), str(root), str(jobs)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert child.stdout is not None
    seen = 0
    for line in child.stdout:
        seen += line.strip() == what
        if seen == int(n):
            break
    os.killpg(child.pid, signal.SIGKILL)
    child.wait(timeout=30)
    assert seen == int(n), "the run ended before the kill point"
    if first:
        assert not db.exists()
    conn = sqlite.connect(building_path(db) if first else db)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert conn.execute("SELECT count(*) FROM messages").fetchone()[0] > 0  # the batches committed
    conn.close()
    assert run_index(db, [root]).errors == []
    assert_equal_to_clean(db, root, tmp_path)


# ---------------------------------------------------------------------------------------------------
# concurrent writers
# ---------------------------------------------------------------------------------------------------


def test_concurrent_index_runs_while_transcripts_grow(tmp_path: Path) -> None:
    root = corpus(tmp_path / "projects", sessions=6)
    db = tmp_path / "index.db"
    runs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "total_recall",
                "--db",
                str(db),
                "index",
                "--projects-root",
                str(root),
                "--json",
                "--jobs",
                str(1 + i % 2),
            ],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(3)
    ]
    for i in range(6):  # new sessions and appended turns while the runs go on
        good_session(root / "-home-dev-projects-late", f"late{i}")
        time.sleep(0.05)
    for r in runs:
        out, err = r.communicate(timeout=180)
        assert r.returncode == 0 and "Traceback" not in err, err
        assert json.loads(out)["errors"] == []
    assert run_index(db, [root]).errors == []
    assert_equal_to_clean(db, root, tmp_path)


# ---------------------------------------------------------------------------------------------------
# disk full
# ---------------------------------------------------------------------------------------------------

_DISK_FULL = textwrap.dedent("""
    set -u
    mount -t tmpfs -o size=$SIZE tmpfs "$MNT" || exit 77
    if [ "$FIRST" = 0 ]; then  # an index that exists, written in place
        "$PY" -c "import sys; from pathlib import Path; from index.store.db import open_writer; open_writer(Path(sys.argv[1])).close()" \\
            "$MNT/index.db"
    fi
    "$PY" -m total_recall --db "$MNT/index.db" index --projects-root "$ROOT" --jobs 1 >"$OUT/full.out" 2>"$OUT/full.err"
    echo $? >"$OUT/full.rc"
    DB="$MNT/index.db"; [ "$FIRST" = 1 ] && DB="$MNT/index.db.building"  # a first index is built beside
    [ -e "$MNT/index.db" ]; echo $? >"$OUT/index_path_missing"
    "$PY" -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('PRAGMA integrity_check').fetchone()[0])" \\
        "$DB" >"$OUT/integrity"
    mount -o remount,size=256m "$MNT"
    "$PY" -m total_recall --db "$MNT/index.db" index --projects-root "$ROOT" --json >"$OUT/after.out" 2>"$OUT/after.err"
    echo $? >"$OUT/after.rc"
    cp "$MNT"/index.db* "$OUT/"
""")


@pytest.mark.parametrize("first", [False, True])
def test_disk_full_is_one_line_and_the_index_stays_consistent(tmp_path: Path, first: bool) -> None:
    unshare = shutil.which("unshare")
    if not unshare or subprocess.run([unshare, "-rm", "true"], capture_output=True).returncode != 0:
        pytest.skip("cannot mount a small tmpfs here (needs unshare with user and mount namespaces)")
    root = corpus(tmp_path / "projects", sessions=40)
    mnt, out = tmp_path / "mnt", tmp_path / "out"
    mnt.mkdir()
    out.mkdir()
    env = {
        **os.environ,
        "MNT": str(mnt),
        "OUT": str(out),
        "ROOT": str(root),
        "PY": sys.executable,
        "SIZE": "700k",
        "TOTAL_RECALL_VECTORS": "0",
        "FIRST": str(int(first)),
    }
    p = subprocess.run(
        [unshare, "-rm", "sh", "-c", _DISK_FULL],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if p.returncode == 77:
        pytest.skip(f"tmpfs mount refused: {p.stderr.strip()[:200]}")
    assert (out / "full.rc").read_text().strip() != "0"
    err = (out / "full.err").read_text()
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert err.startswith("error: no space left") and "free disk space" in err
    assert (out / "integrity").read_text().strip() == "ok"
    assert (out / "index_path_missing").read_text().strip() == str(int(first))  # nothing half-built shows
    assert (out / "after.rc").read_text().strip() == "0", (out / "after.err").read_text()
    assert json.loads((out / "after.out").read_text())["errors"] == []
    assert_equal_to_clean(out / "index.db", root, tmp_path)
