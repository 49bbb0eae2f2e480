//! "A model that tries" (issue 21), measured through the real `skald` binary: what a terminal
//! shows of model-chosen text, the session commands, and the data dir's state.

mod data_dir;
mod session;
mod terminal;
