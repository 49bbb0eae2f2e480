"""Writes one session whose rows carry every status and badge the session views show.

A non-interactive session with a synthetic user message, a failed user message, and one finished
`read_file` call in each end status (done, failed, rejected, cancelled); pending and running calls
are left to the engine, which owns them. Prints the session id. Usage: seed_statuses.py DB_PATH
"""

import json
import sqlite3
import sys
from datetime import datetime, timedelta, timezone

from seed_long import rfc3339

END_STATUSES = ("done", "failed", "rejected", "cancelled")


def main() -> None:
    conn = sqlite3.connect(sys.argv[1], timeout=10)
    start = datetime(2026, 2, 1, 9, 0, tzinfo=timezone.utc)
    stamps = (rfc3339(start + timedelta(seconds=n)) for n in range(100))
    with conn:
        # As in seed_long.py: Python's SQLite cannot run the tool search trigger; it is set aside.
        (trigger_sql,) = conn.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = 'tool_fts_insert'"
        ).fetchone()
        conn.execute("DROP TRIGGER tool_fts_insert")
        at = next(stamps)
        session_id = conn.execute(
            "INSERT INTO chat_sessions (source, agent_id, is_interactive, is_ephemeral, created_at)"
            " VALUES ('tic', 'main', 0, 1, ?)",
            (at,),
        ).lastrowid
        stack_id = conn.execute(
            "INSERT INTO chat_sessions_stack (session_id, agent_id, depth, created_at) VALUES (?, 'main', 0, ?)",
            (session_id, at),
        ).lastrowid
        conn.execute(
            "INSERT INTO chat_history (session_stack_id, role, content, is_synthetic, created_at)"
            " VALUES (?, 'user', 'A nudge from the system', 1, ?)",
            (stack_id, next(stamps)),
        )
        conn.execute(
            "INSERT INTO chat_history (session_stack_id, role, content, status, created_at)"
            " VALUES (?, 'user', 'A message that failed', 'failed', ?)",
            (stack_id, next(stamps)),
        )
        for status in END_STATUSES:
            when = next(stamps)
            message_id = conn.execute(
                "INSERT INTO chat_history (session_stack_id, role, content, created_at) VALUES (?, 'assistant', '', ?)",
                (stack_id, when),
            ).lastrowid
            conn.execute(
                "INSERT INTO chat_llm_tools (message_id, name, arguments, result, status, provider_call_id,"
                " created_at, updated_at) VALUES (?, 'read_file', ?, ?, ?, ?, ?, ?)",
                (message_id, json.dumps({"path": f"{status}.txt"}), f"a {status} call", status, f"call_{status}", when, when),
            )
        conn.execute(trigger_sql)
    conn.close()
    print(session_id)


if __name__ == "__main__":
    main()
