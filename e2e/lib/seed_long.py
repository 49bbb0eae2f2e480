"""Writes a long conversation straight into an existing session of a Skald database.

The shape the engine leaves for TURNS turns of ROUNDS tool rounds: per turn a user message,
ROUNDS assistant rows with one finished `read_file` call each, and a final answer, all in the
session's root frame after what it holds. One transaction; prints the ids of the user messages,
one per line, oldest first. Usage: seed_long.py DB_PATH SESSION_ID TURNS ROUNDS
"""

import json
import sqlite3
import sys
from datetime import datetime, timedelta, timezone


def rfc3339(t: datetime) -> str:
    # The engine's one timestamp format: UTC, milliseconds, `Z`.
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


NOTES = "Notes for the long session: a paragraph the agent reads again and again.\n"


def main() -> None:
    db_path, session_id, turns, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    conn = sqlite3.connect(db_path, timeout=10)
    start = datetime(2026, 1, 1, 8, 0, tzinfo=timezone.utc)
    args = json.dumps({"path": "notes.txt"})
    users = []
    with conn:
        # The tool-call search index uses FTS5's trigram tokenizer with options that Python's
        # SQLite (3.40 on Debian 12) cannot construct, so its insert trigger cannot run here: it is
        # set aside while the seeded calls are written and put back unchanged. The seeded calls
        # are then missing from tool search only; nothing in the long-session test searches them.
        (trigger_sql,) = conn.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = 'tool_fts_insert'"
        ).fetchone()
        conn.execute("DROP TRIGGER tool_fts_insert")
        (stack_id,) = conn.execute(
            "SELECT id FROM chat_sessions_stack WHERE session_id = ? AND depth = 0 ORDER BY id LIMIT 1",
            (session_id,),
        ).fetchone()
        n = 0
        for t in range(1, turns + 1):
            def at() -> str:
                nonlocal n
                n += 1
                return rfc3339(start + timedelta(seconds=n))

            cur = conn.execute(
                "INSERT INTO chat_history (session_stack_id, role, content, created_at) VALUES (?, 'user', ?, ?)",
                (stack_id, f"Question {t}", at()),
            )
            users.append(cur.lastrowid)
            for r in range(rounds):
                when = at()
                cur = conn.execute(
                    "INSERT INTO chat_history (session_stack_id, role, content, created_at) VALUES (?, 'assistant', '', ?)",
                    (stack_id, when),
                )
                conn.execute(
                    "INSERT INTO chat_llm_tools (message_id, name, arguments, result, status, provider_call_id,"
                    " created_at, updated_at) VALUES (?, 'read_file', ?, ?, 'done', ?, ?, ?)",
                    (cur.lastrowid, args, NOTES, f"call_{t}_{r}", when, when),
                )
            conn.execute(
                "INSERT INTO chat_history (session_stack_id, role, content, created_at) VALUES (?, 'assistant', ?, ?)",
                (stack_id, f"Answer {t}: read the notes {rounds} times.", at()),
            )
        conn.execute(trigger_sql)
    conn.close()
    print("\n".join(str(u) for u in users))


if __name__ == "__main__":
    main()
