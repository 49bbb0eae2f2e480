//! Which paths a walking read tool may show: the gate judges the call's root, this judges each entry.

use std::path::Path;
use std::sync::Arc;

/// A predicate over canonical paths found while walking: `false` hides the path (and, for a
/// directory, everything below it). The engine builds it from the same deny rules and protected
/// places the gate applies to `read_file`, so a search never shows what a read would refuse.
#[derive(Clone)]
pub struct ReadFilter(Arc<dyn Fn(&Path) -> bool + Send + Sync>);

impl ReadFilter {
    pub fn new(allows: impl Fn(&Path) -> bool + Send + Sync + 'static) -> Self {
        Self(Arc::new(allows))
    }

    /// Shows every path: for tools run outside a session (tests, benchmarks), where no policy exists.
    pub fn everything() -> Self {
        Self::new(|_| true)
    }

    pub fn allows(&self, path: &Path) -> bool {
        (self.0)(path)
    }
}

impl std::fmt::Debug for ReadFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ReadFilter")
    }
}
