//! Where Skald keeps its files: `--data-dir`, then `SKALD_DATA_DIR`, then the OS data dir.

use std::path::PathBuf;

/// Environment variable naming the data dir.
pub const DATA_DIR_ENV: &str = "SKALD_DATA_DIR";

/// Resolves the data dir without creating it.
pub fn resolve(explicit: Option<PathBuf>) -> Option<PathBuf> {
    explicit
        .or_else(|| std::env::var_os(DATA_DIR_ENV).filter(|v| !v.is_empty()).map(PathBuf::from))
        .or_else(|| dirs::data_dir().map(|d| d.join("Skald")))
}
