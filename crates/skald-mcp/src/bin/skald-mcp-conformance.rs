//! The client under test of the official MCP conformance suite (`conformance client --command
//! <this> …`, see `crates/skald-mcp/tests/conformance.rs`): Skald's own MCP client — the
//! manager, its connection and its handler — pointed at the scenario's server (the URL the suite
//! appends), doing what the scenario (`MCP_CONFORMANCE_SCENARIO`) asks of a client. Questions
//! the server asks are answered as a person pressing Submit on the untouched form would: with
//! the form's defaults.

use std::pin::Pin;
use std::process::ExitCode;
use std::sync::Arc;

use serde_json::{Value, json};
use skald_mcp::{Answer, Elicitor, Form, McpManager, ServerConfig, Transport};
use tokio_util::sync::CancellationToken;

struct SubmitDefaults;

impl Elicitor for SubmitDefaults {
    fn elicit(&self, _server: &str, form: Form) -> Pin<Box<dyn Future<Output = Answer> + Send>> {
        Box::pin(async move { Answer::Accept(form.defaults()) })
    }
}

/// The tool a scenario expects to be called, and its arguments (`None`: connecting is all).
fn tool_of(scenario: &str) -> Option<(&'static str, Value)> {
    match scenario {
        "tools_call" => Some(("add_numbers", json!({"a": 5, "b": 3}))),
        "elicitation-sep1034-client-defaults" => {
            Some(("test_client_elicitation_defaults", json!({})))
        }
        "sse-retry" => Some(("test_reconnection", json!({}))),
        _ => None,
    }
}

async fn run(url: String, scenario: &str) -> Result<(), String> {
    let server = "conformance";
    let config = ServerConfig {
        name: server.into(),
        transport: Transport::Http { url, api_key: None },
        description: None,
        enabled: true,
        call_timeout: None,
        trusted: false,
    };
    let manager = McpManager::new(vec![config], None);
    manager.set_elicitor(Arc::new(SubmitDefaults));
    let tools = manager.connect(server, false).await.map_err(|e| e.to_string())?;
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    println!("connected; tools: {names:?}");
    let result = match tool_of(scenario) {
        Some((tool, args)) => {
            let out = manager.call(server, tool, &args, &CancellationToken::new()).await;
            match out {
                Ok(out) => {
                    println!("{tool}: {}", out.text);
                    Ok(())
                }
                Err(e) => Err(e.to_string()),
            }
        }
        None => Ok(()),
    };
    manager.shutdown().await;
    result
}

fn main() -> ExitCode {
    let Some(url) = std::env::args().nth(1) else {
        eprintln!("usage: skald-mcp-conformance <server url> (MCP_CONFORMANCE_SCENARIO set)");
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(url, &scenario)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{scenario}: {e}");
            ExitCode::FAILURE
        }
    }
}
