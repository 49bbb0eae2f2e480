//! Rows of "A model that tries" measured through the `skald` binary: terminal.
