//! The search tools (`search_files`, `find_files`) on the walker, searcher and matchers ripgrep is built from.

mod find_files;
mod grep;
mod search_files;
mod sink;
mod walk;

pub(crate) use find_files::FindFiles;
pub(crate) use search_files::SearchFiles;

#[cfg(test)]
mod rg_parity_tests;
