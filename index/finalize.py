"""Cross-file resolution after a run: titles from summaries, subagent links, folded profiles."""

from __future__ import annotations

import sqlite3

from index.profiles import materialise
from index.userstate import reapply_memories


def finalize(conn: sqlite3.Connection, touched: bool) -> None:
    if not touched:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        _titles(conn)
        _link_agents(conn)
        materialise(conn)
        reapply_memories(conn)  # promoted memories missing from a new file, demoted ones that came back
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def _titles(conn: sqlite3.Connection) -> None:
    """`summary.leafUuid` names the last message of a conversation, often in another file."""
    conn.execute(
        """UPDATE sessions SET title=(
               SELECT s.summary FROM summaries s JOIN messages m ON m.uuid = s.leaf_uuid
               WHERE m.session_id = sessions.session_id ORDER BY m.id DESC, s.rowid DESC LIMIT 1),
             title_source='summary'
           WHERE coalesce(title_source, '') NOT IN ('custom') AND EXISTS(
               SELECT 1 FROM summaries s JOIN messages m ON m.uuid = s.leaf_uuid
               WHERE m.session_id = sessions.session_id)""")
    conn.execute(
        """UPDATE sessions SET title=substr(first_prompt, 1, 120), title_source='first_prompt'
           WHERE title IS NULL AND first_prompt IS NOT NULL""")


def _link_agents(conn: sqlite3.Connection) -> None:
    """Subagent -> spawning Task call: by toolUseResult.agentId, else by the prompt it was sent."""
    conn.execute(
        """UPDATE agents SET
             spawn_tool_use_id=(SELECT t.tool_use_id FROM task_spawns t WHERE t.agent_id = agents.agent_id LIMIT 1),
             spawn_uuid=(SELECT t.uuid FROM task_spawns t WHERE t.agent_id = agents.agent_id LIMIT 1),
             subagent_type=coalesce(subagent_type,
                 (SELECT t.subagent_type FROM task_spawns t WHERE t.agent_id = agents.agent_id LIMIT 1)),
             description=coalesce(description,
                 (SELECT t.description FROM task_spawns t WHERE t.agent_id = agents.agent_id LIMIT 1))
           WHERE spawn_tool_use_id IS NULL AND EXISTS(SELECT 1 FROM task_spawns t WHERE t.agent_id = agents.agent_id)""")
    conn.execute(
        """UPDATE agents SET
             spawn_tool_use_id=(SELECT t.tool_use_id FROM task_spawns t
                                WHERE t.prompt_key = agents.prompt_key AND t.session_id = agents.session_id LIMIT 1),
             spawn_uuid=(SELECT t.uuid FROM task_spawns t
                         WHERE t.prompt_key = agents.prompt_key AND t.session_id = agents.session_id LIMIT 1),
             subagent_type=coalesce(subagent_type, (SELECT t.subagent_type FROM task_spawns t
                         WHERE t.prompt_key = agents.prompt_key AND t.session_id = agents.session_id LIMIT 1))
           WHERE spawn_tool_use_id IS NULL AND prompt_key IS NOT NULL""")
