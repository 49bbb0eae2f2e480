-- Events every process sees. Each event that describes a stored change (everything but streamed
-- token deltas and a few notices about the live stream) is appended here by the engine that
-- emitted it, right after the change committed; `seq` orders them for every reader (AUTOINCREMENT:
-- never reused, so a pruned number is never seen again). Each engine tails the table and publishes
-- the rows other instances wrote to its own subscribers; a client that reconnects asks for the rows
-- after the last `seq` it saw. Rows are pruned after 24 h, keeping the newest ones
-- (`repo/outbox.rs`).
CREATE TABLE event_outbox (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    -- The engine instance that wrote the row (`engine_instances.id`): it published it itself.
    instance_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    -- NULL for global events.
    session_id INTEGER NULL,
    source TEXT NULL,
    -- The frame origin as JSON; NULL for events about the session as a whole or global ones.
    frame TEXT NULL,
    -- The event (tagged by `type`) as JSON, exactly as it goes on the wire.
    event TEXT NOT NULL
);
CREATE INDEX idx_event_outbox_created ON event_outbox(created_at);
