mod approval;
mod config;
mod engine;
mod model_powers;
mod tools;
mod turn;
