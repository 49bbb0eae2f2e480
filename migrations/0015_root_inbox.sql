-- The root inbox: every input that reaches a session's root frame between rounds is a row of
-- pending_inputs with a kind. A steer is what the user sent during a turn (a /stop discards it);
-- a task report is an async task's end, written in the same transaction as the task's report
-- and never discarded; hub messages and briefings come next. Folding any kind appends one history
-- row and sets consumed_message_id in the same transaction, so an input is read exactly once.
ALTER TABLE pending_inputs ADD COLUMN kind TEXT NOT NULL DEFAULT 'steer'
    CHECK (kind IN ('steer', 'task_report', 'hub_message', 'briefing'));
-- The task whose report this input carries (kind task_report).
ALTER TABLE pending_inputs ADD COLUMN task_id INTEGER NULL REFERENCES async_tasks(id);

-- Reports recorded before this migration and not delivered yet become inputs, worded as the
-- report block the fold used to write.
INSERT INTO pending_inputs (session_id, content, is_synthetic, created_at, kind, task_id)
SELECT parent_session_id,
       rtrim(CASE status
                 WHEN 'done' THEN '[task ' || label || ' reported] '
                 WHEN 'failed' THEN '[task ' || label || ' failed] '
                 WHEN 'cancelled' THEN '[task ' || label || ' was stopped] '
                 ELSE '[task ' || label || ' ended: ' || status || '] '
             END || trim(coalesce(report, ''), ' ' || char(9, 10, 13)), ' ' || char(9, 10, 13)),
       1, coalesce(reported_at, created_at), 'task_report', id
FROM async_tasks
WHERE status IN ('done', 'failed', 'cancelled') AND delivered_message_id IS NULL
ORDER BY reported_at, id;
