mod agents;
mod declarations;
mod dispatch;
mod typescript;
