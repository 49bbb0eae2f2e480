mod declarations;
mod dispatch;
mod typescript;
