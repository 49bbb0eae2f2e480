mod config;
mod engine;
mod tools;
