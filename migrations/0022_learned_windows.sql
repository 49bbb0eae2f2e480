-- Context windows learned from providers' overflow answers (HTTP 400 `context_length_exceeded`),
-- per client alias and model id: a window the server named replaces the last one, a guess (the
-- answer named no number) only ever lowers it.
CREATE TABLE learned_context_windows (
    client TEXT NOT NULL,
    model TEXT NOT NULL,
    window_tokens INTEGER NOT NULL CHECK (window_tokens > 0),
    -- 1 when the server named the window, 0 when it was guessed from the request's size.
    exact INTEGER NOT NULL,
    learned_at TEXT NOT NULL,
    PRIMARY KEY (client, model)
);
