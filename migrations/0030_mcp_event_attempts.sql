-- Decision 20: a tick's events are marked processed when the tick ends well, not when it takes
-- them. A tick that fails gives its events back for the next tick; `attempts` counts the ticks
-- that took an event, so a batch that fails every time is given up after a few, not retried
-- (and paid for) forever.
ALTER TABLE mcp_events ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
