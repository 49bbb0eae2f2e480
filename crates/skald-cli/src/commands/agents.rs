//! `skald agents list`.

use serde::Serialize;
use skald_api::{Caller, ListAgentsParams, ops};
use skald_core::Engine;
use skald_protocol::{AgentSummary, ApiError};

use crate::cli::AgentsCommand;
use crate::exit;
use crate::output::Output;

pub async fn run(engine: &Engine, cmd: AgentsCommand, out: &Output) -> Result<u8, ApiError> {
    match cmd {
        AgentsCommand::List => {
            let agents = ops::list_agents(engine, &Caller::Cli, ListAgentsParams {}).await?;
            if out.is_json() {
                out.json(&agents)?;
                return Ok(exit::OK);
            }
            out.line(&format!(
                "{:<20} {:<6} {:<9} {:<20} DESCRIPTION",
                "ID", "TYPE", "ORIGIN", "MODEL"
            ));
            for a in &agents {
                out.line(&row(a));
                if let Some(error) = &a.error {
                    out.line(&format!("{:>4}error: {error}", ""));
                }
                for warning in &a.warnings {
                    out.line(&format!("{:>4}warning: {warning}", ""));
                }
            }
            Ok(exit::OK)
        }
    }
}

/// `generalist           task   built-in  auto                 A general-purpose worker…`
fn row(a: &AgentSummary) -> String {
    let kind = a.agent_type.map_or_else(|| "?".to_string(), wire_name);
    let origin = if a.built_in {
        "built-in"
    } else if a.overrides_built_in {
        "override"
    } else {
        "user"
    };
    let model = match (&a.client, a.strength) {
        (Some(client), _) => client.clone(),
        (None, Some(strength)) => format!("auto, ≥ {}", wire_name(strength)),
        (None, None) => "auto".to_string(),
    };
    format!("{:<20} {:<6} {:<9} {:<20} {}", a.id, kind, origin, model, a.description)
}

/// A wire enum's name as the JSON says it (`very_high`).
fn wire_name(value: impl Serialize) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        _ => String::new(),
    }
}
