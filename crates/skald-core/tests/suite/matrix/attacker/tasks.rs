//! Rows of "A model that tries" measured by the engine: tasks.
