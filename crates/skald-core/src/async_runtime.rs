//! The multi-threaded Tokio runtime the shells (the CLI, the desktop app) run the engine on.

/// Stack of each runtime thread. A turn's future is polled through every frame it runs in (a
/// sub-agent's inside its parent's call, a resumed one inside the resume's settling), and an
/// unoptimised build gives each poll a large stack frame: the resume of a sync sub-agent that
/// activates an MCP server needed more than 1.5 MiB there, against Tokio's default of 2 MiB.
/// Reserved address space, not memory: pages are only used as the stack grows into them.
pub const THREAD_STACK_BYTES: usize = 8 * 1024 * 1024;

/// A multi-threaded runtime with every driver enabled and room for deep turns.
pub fn build() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_stack_size(THREAD_STACK_BYTES)
        .build()
}
