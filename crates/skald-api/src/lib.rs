//! The operation table: every `Engine` operation a user can do, declared once in `table.rs` with
//! its doc, params, result, the error codes it can return and the events it causes.
//!
//! From the table come the params types, one typed function per operation ([`ops`]), the JSON
//! dispatcher every shell forwards to ([`call`]: the desktop's `api` command, `POST /api/<op>`),
//! the spec list ([`OPERATIONS`]) and the TypeScript client (`ui/src/backend/api.ts`, see
//! [`typescript`]). Adding an operation is one table entry plus its engine method; the shells
//! and the UI's client pick it up without another line.

mod caller;
mod declare;
pub mod spec;
mod table;
pub mod typescript;

pub use caller::Caller;
pub use spec::OpSpec;
pub use table::*;
