//! Wire types shared by the engine and every shell: DTOs, events, errors. No IO lives here.
//!
//! Conventions: tagged unions use `type` (events) or `kind` (debug rows) in snake_case, ids are
//! SQLite integers (safe in JS, exported as `number`), timestamps are RFC 3339 strings, and no
//! field is skipped when empty so the TypeScript side always sees the same shape.

pub mod agent;
pub mod approval;
pub mod bindings;
pub mod error;
pub mod event;
pub mod interrupted;
pub mod job;
pub mod mcp;
pub mod media;
pub mod memory;
pub mod notification;
pub mod origin;
pub mod run_context;
pub mod search;
pub mod session;
pub mod settings;
pub mod tic;
pub mod turn;

pub use agent::*;
pub use approval::*;
pub use error::{ApiError, ErrorCode};
pub use event::{DeltaKind, Event, EventEnvelope, EventKind, ResultType, TaskState};
pub use interrupted::{InterruptedCall, ReconcileChoice};
pub use job::*;
pub use mcp::{McpAuthorization, McpServerInfo, McpServerInput, McpServerState, McpToolInfo};
pub use media::{MediaFile, MediaKind, ResourceLink, ToolMedia, ToolResultMedia};
pub use memory::{MemoryAuthor, MemoryEdit, MemoryFileContent, MemoryFileInfo};
pub use notification::{HomeSource, NotificationInfo};
pub use origin::FrameOrigin;
pub use run_context::RunContext;
pub use search::*;
pub use session::*;
pub use settings::*;
pub use tic::{TicEventInfo, TicStatus, TicTickDetail, TicTickInfo, TickState};
pub use turn::{EndedTurn, TurnEnd};
