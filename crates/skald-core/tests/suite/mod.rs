mod config;
mod engine;
