"""Seeds N TIC sessions straight into a Skald database whose schema the server already created.

Each session is what a background tick leaves behind: a non-interactive, ephemeral `tic` session,
its root call frame (depth 0) and one user message. Usage: seed_tic.py DB_PATH COUNT
"""

import sqlite3
import sys
from datetime import datetime, timedelta, timezone


def rfc3339(t: datetime) -> str:
    # The engine's one timestamp format: UTC, milliseconds, `Z`.
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def main() -> None:
    db_path, count = sys.argv[1], int(sys.argv[2])
    start = datetime(2026, 1, 1, 8, 0, tzinfo=timezone.utc)
    conn = sqlite3.connect(db_path, timeout=10)
    with conn:
        for n in range(1, count + 1):
            at = rfc3339(start + timedelta(minutes=15 * n))
            cur = conn.execute(
                "INSERT INTO chat_sessions (source, agent_id, is_interactive, is_ephemeral, created_at)"
                " VALUES ('tic', 'main', 0, 1, ?)",
                (at,),
            )
            session_id = cur.lastrowid
            cur = conn.execute(
                "INSERT INTO chat_sessions_stack (session_id, agent_id, depth, created_at)"
                " VALUES (?, 'main', 0, ?)",
                (session_id, at),
            )
            conn.execute(
                "INSERT INTO chat_history (session_stack_id, role, content, created_at)"
                " VALUES (?, 'user', ?, ?)",
                (cur.lastrowid, f"TIC tick {n}: review the inbox", at),
            )
            print(session_id)
    conn.close()


if __name__ == "__main__":
    main()
