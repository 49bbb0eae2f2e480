mod approval;
mod auto_resume;
mod config;
mod engine;
mod model_powers;
mod tools;
mod turn;
