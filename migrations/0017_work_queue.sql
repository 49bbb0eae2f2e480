-- The engine's work queue: a unit of work (continue a session whose decision, answer or input
-- arrived; run an async task's session) is a row that one engine instance claims with one
-- statement, runs under the session's lease, and finishes. A claimant that died (its instance's
-- heartbeat expired) loses the item to whoever reclaims it. At most one item per session and
-- kind waits at a time: enqueueing the same work again merges into it.
CREATE TABLE work_items (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id INTEGER NOT NULL REFERENCES chat_sessions(id),
    kind TEXT NOT NULL CHECK (kind IN ('continue', 'task')),
    state TEXT NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'claimed', 'done')),
    claimed_by TEXT NULL,
    claimed_at TEXT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    finished_at TEXT NULL,
    -- How the run ended (`final`, `parked`, `cancelled`, `failed`, ...), or why it was merged.
    outcome TEXT NULL
);
CREATE UNIQUE INDEX idx_work_items_queued ON work_items(session_id, kind) WHERE state = 'queued';
CREATE INDEX idx_work_items_claimed ON work_items(claimed_by) WHERE state = 'claimed';
CREATE INDEX idx_work_items_done ON work_items(finished_at) WHERE state = 'done';

-- An engine without the background (a `skald resume --wait`, a `skald chat` waiting for its
-- async tasks) continues the sessions it waits on itself: their work is its own while it lives.
CREATE TABLE work_waiters (
    session_id INTEGER PRIMARY KEY REFERENCES chat_sessions(id),
    instance_id TEXT NOT NULL,
    since TEXT NOT NULL
);
-- Whether the instance runs the background (claims every session's work): then a decision
-- recorded anywhere is continued without anyone's `skald resume`.
ALTER TABLE engine_instances ADD COLUMN background INTEGER NOT NULL DEFAULT 0;
