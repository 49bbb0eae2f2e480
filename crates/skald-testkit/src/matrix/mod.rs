//! The reliability matrix: the catalog of rows issue 11 asks for, the observation each row test
//! records (and asserts), and the renderer of `docs/reliability.md`.

mod catalog;
mod render;
mod row;

pub use catalog::{Group, ROWS, RowSpec, spec};
pub use render::{RenderError, Tally, parse_lines, render};
pub use row::{Ending, OUT_ENV, Observation, Row, excerpt};
