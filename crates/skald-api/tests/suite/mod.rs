mod agents;
mod declarations;
mod dispatch;
mod memory;
mod typescript;
