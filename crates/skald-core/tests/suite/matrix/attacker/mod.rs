//! "A model that tries" (issue 21): the scripted model chooses its arguments to get past the
//! person approving; each row fails unless the approval boundary holds.

mod files;
mod gate;
mod tasks;
