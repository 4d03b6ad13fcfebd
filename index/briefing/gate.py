"""What keeps a memory out of an injection (issue 19), for the SessionStart bundle and the per-prompt
recall alike: the user marked it `wrong` (index.store.verdicts), or the code it names is gone
(index.briefing.staleness). Each item let in carries its short id (lib.memid) and why it was chosen;
each item kept out is listed with the reason, for the hook's log and the MCP answer."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from extractors.confidence import bundle_threshold
from index.briefing.staleness import Checker
from index.store.verdicts import Wrong
from lib import sqlite
from lib.memid import memory_id


@dataclass
class Gate:
    wrong: Wrong = field(default_factory=Wrong)
    checker: Checker | None = None
    left_out: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def open(cls, conn: sqlite.Connection, wrong: Wrong | None, stale_budget_s: float) -> Gate:
        """A gate over `conn`: stored stale marks always apply; git checks for up to `stale_budget_s`."""
        return cls(wrong or Wrong(), Checker(conn, stale_budget_s))

    def admit(
        self, kind: str, where: str | None, text: str, project: str | None = None, source: str | None = None
    ) -> str | None:
        """The item's id when it may be injected, None when it is kept out (and recorded why).
        `where` keys the id (project key, or session for messages); `project` is the repository;
        `source` the message uuid (a past message is kept out when a wrong memory came from it)."""
        item_id = memory_id(kind, where, text)
        if self.wrong.blocks(item_id, text, source):
            self.left_out.append({"id": item_id, "kind": kind, "content": text[:160], "why": "wrong"})
            return None
        mark = self.checker.mark(item_id, kind, text, project) if self.checker else None
        if mark is not None and mark.stale:
            self.left_out.append(
                {"id": item_id, "kind": kind, "content": text[:160], "why": "stale", **mark.to_json()}
            )
            return None
        return item_id

    def cut(self, kind: str) -> float:
        """The confidence an item of `kind` needs to be injected: the confidence model's threshold,
        raised where the user's verdicts found it too low (index.store.verdicts.calibrate)."""
        return self.wrong.cut(kind, bundle_threshold(kind))

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for x in self.left_out:
            out[x["why"]] = out.get(x["why"], 0) + 1
        return out
