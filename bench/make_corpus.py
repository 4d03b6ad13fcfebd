"""Build a large benchmark corpus by replicating ../shared/corpus N times with fresh ids.

Every UUID (session ids, record uuids) is remapped per copy so copies are distinct sessions and
deduplication does not collapse them. Usage: python bench/make_corpus.py --copies 15 --out /tmp/big
"""

from __future__ import annotations

import argparse
import re
import uuid
from pathlib import Path

UUID_RE = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "--source", default=str(Path(__file__).resolve().parents[2] / "shared" / "corpus" / "projects")
    )
    ap.add_argument("--copies", type=int, default=15)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    src = Path(args.source)
    out = Path(args.out) / "projects"
    total = 0
    for i in range(args.copies):
        ns = uuid.uuid5(uuid.NAMESPACE_OID, f"copy-{i}")

        def remap(m: re.Match[bytes], ns: uuid.UUID = ns) -> bytes:
            return str(uuid.uuid5(ns, m.group(0).decode())).encode()

        for f in src.rglob("*.jsonl"):
            rel = f.relative_to(src)
            parts = list(rel.parts)
            parts[0] = f"{parts[0]}-copy{i}"
            parts = [UUID_RE.sub(remap, p.encode()).decode() for p in parts]
            dest = out.joinpath(*parts)
            dest.parent.mkdir(parents=True, exist_ok=True)
            data = UUID_RE.sub(remap, f.read_bytes())
            dest.write_bytes(data)
            total += len(data)
    print(f"wrote {total / 1e6:.1f} MB in {args.copies} copies to {out}")


if __name__ == "__main__":
    main()
