-- A running engine (the app, `skald serve`, a `skald chat`) is an instance: host, pid and start
-- time, with a heartbeat it refreshes while it holds work. Runner rows name their instance;
-- another process judges a holder alive by its heartbeat (any host), or at once by its pid when
-- it runs on the same host. The pid column of session_runners stays for rows of older builds.
CREATE TABLE engine_instances (
    id TEXT PRIMARY KEY,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    started_at TEXT NOT NULL,
    heartbeat_at TEXT NOT NULL,
    stopped_at TEXT NULL
);
