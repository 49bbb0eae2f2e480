//! Skald's SQLite storage: the pool, embedded migrations and typed repositories.
//!
//! Every SQL string of the project lives in this crate. Callers get typed rows and typed errors.

pub mod clock;
pub mod db_file;
pub mod enums;
pub mod error;
pub mod kill_point;
pub mod pool;
pub mod repo;

pub use clock::{Clock, ManualClock, SystemClock};
pub use db_file::DiskProblem;
pub use error::StoreError;
pub use pool::{DB_FILE_NAME, Store};
