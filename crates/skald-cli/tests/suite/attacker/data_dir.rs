//! Rows of "A model that tries" measured through the `skald` binary: data_dir.
