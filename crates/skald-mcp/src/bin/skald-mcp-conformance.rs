//! The client under test of the official MCP conformance suite (`conformance client --command
//! <this> …`, see `crates/skald-mcp/tests/conformance.rs`): Skald's own MCP client — the
//! manager, its connection and its handler — pointed at the scenario's server (the URL the suite
//! appends), doing what the scenario (`MCP_CONFORMANCE_SCENARIO`) asks of a client. Questions
//! the server asks are answered as a person pressing Submit on the untouched form would: with
//! the form's defaults. A server that asks for authorization is authorized the way a person
//! would in Skald: the manager starts it and hands out the URL, and a "browser" here opens it —
//! the suite's authorization server consents at once and redirects to Skald's loopback listener.

use std::pin::Pin;
use std::process::ExitCode;
use std::sync::Arc;

use serde_json::{Value, json};
use skald_mcp::{
    Answer, Elicitor, Form, McpError, McpManager, OAuthSettings, ServerConfig, Transport,
};
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

/// The client metadata document the suite's CIMD scenarios expect a client id to be.
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";
/// How often a server may ask for more authorization before the driver gives up (a server
/// that never has enough must not loop the client).
const MAX_AUTHORIZATIONS: usize = 3;

/// The client Skald would be configured with for `scenario` (`MCP_CONFORMANCE_CONTEXT` holds
/// the pre-registered client where the scenario has one).
fn oauth_settings(scenario: &str) -> OAuthSettings {
    let context: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or_default();
    let text = |k: &str| context.get(k).and_then(Value::as_str).map(str::to_string);
    OAuthSettings {
        client_id: text("client_id"),
        client_secret: text("client_secret"),
        scopes: Vec::new(),
        client_metadata_url: Some(CLIENT_METADATA_URL.into()),
        client_credentials: scenario.starts_with("auth/client-credentials"),
        private_key_pem: text("private_key_pem"),
        signing_algorithm: text("signing_algorithm"),
    }
}

/// What a person's browser does with the authorization URL when they consent: follows the
/// authorization server's redirect back to Skald's listener.
async fn browse(url: &str) -> Result<(), String> {
    let response = reqwest13::get(url).await.map_err(|e| format!("browser: {e}"))?;
    let status = response.status();
    if !status.is_success() {
        return Err(format!("browser: the redirect answered {status}"));
    }
    Ok(())
}

/// Authorizes `server` as a person would: starts it, "opens" the URL, waits for the end.
async fn authorize(manager: &McpManager, server: &str) -> Result<(), String> {
    let url = manager.authorize(server).await.map_err(|e| e.to_string())?;
    println!("authorize at {url}");
    let (browsed, done) = tokio::join!(browse(&url), manager.wait_authorized(server));
    done.map_err(|e| e.to_string())?;
    browsed
}

/// Connects, authorizing first when the server asks.
async fn connect(manager: &McpManager, server: &str) -> Result<Vec<skald_mcp::McpTool>, String> {
    for _ in 0..MAX_AUTHORIZATIONS {
        match manager.connect(server, true).await {
            Err(McpError::Unauthorized { message, .. }) => {
                println!("{message}");
                authorize(manager, server).await?;
            }
            other => return other.map_err(|e| e.to_string()),
        }
    }
    Err("the server still asks for authorization".into())
}

/// Calls `tool`, authorizing again (for more scopes) when the server asks, a few times.
async fn call(
    manager: &McpManager,
    server: &str,
    tool: &str,
    args: &Value,
) -> Result<skald_mcp::CallOutput, String> {
    for _ in 0..MAX_AUTHORIZATIONS {
        match manager.call(server, tool, args, &CancellationToken::new()).await {
            Err(McpError::Unauthorized { message, .. }) => {
                println!("{message}");
                authorize(manager, server).await?;
                connect(manager, server).await?;
            }
            other => return other.map_err(|e| e.to_string()),
        }
    }
    Err(format!("`{tool}`: the server still asks for more authorization"))
}

async fn run(url: String, scenario: &str) -> Result<(), String> {
    let server = "conformance";
    let config = ServerConfig {
        name: server.into(),
        transport: Transport::Http { url, api_key: None, oauth: oauth_settings(scenario) },
        description: None,
        enabled: true,
        call_timeout: None,
        trusted: false,
    };
    let manager = McpManager::new(vec![config], None);
    manager.set_elicitor(Arc::new(SubmitDefaults));
    let tools = match connect(&manager, server).await {
        Ok(tools) => tools,
        Err(e) => {
            manager.shutdown().await;
            return Err(e);
        }
    };
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    println!("connected; tools: {names:?}");
    // The auth scenarios' servers check the token on a call too (and ask for more scopes there).
    let calls: Vec<(String, Value)> = match tool_of(scenario) {
        Some((tool, args)) => vec![(tool.to_string(), args)],
        None if scenario.starts_with("auth/") => {
            tools.iter().map(|t| (t.name.clone(), json!({}))).collect()
        }
        None => Vec::new(),
    };
    let mut result = Ok(());
    for (tool, args) in calls {
        match call(&manager, server, &tool, &args).await {
            Ok(out) => println!("{tool}: {}", out.text),
            Err(e) => {
                result = Err(e);
                break;
            }
        }
    }
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
