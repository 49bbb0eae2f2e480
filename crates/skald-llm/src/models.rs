//! `GET {base_url}/models`: the endpoint's model list, for "test connection" in Settings.

use std::time::Duration;

use serde_json::Value;

use crate::endpoint::ModelEndpoint;
use crate::error::LlmError;

/// Lists the model ids the endpoint serves. Errors name what went wrong (never the key).
pub async fn list_models(
    endpoint: &ModelEndpoint,
    timeout: Duration,
) -> Result<Vec<String>, LlmError> {
    let http = reqwest::Client::builder()
        .timeout(timeout)
        .tcp_nodelay(true)
        .build()
        .map_err(|e| LlmError::Config(e.to_string()))?;
    let base = endpoint.base_url.trim_end_matches('/');
    let base = base.strip_suffix("/chat/completions").unwrap_or(base);
    let mut req = http.get(format!("{base}/models"));
    if let Some(key) = endpoint.api_key.as_deref().filter(|k| !k.is_empty()) {
        req = req.bearer_auth(key);
    }
    let resp = req.send().await.map_err(|e| {
        if e.is_timeout() {
            LlmError::Timeout(timeout)
        } else {
            LlmError::Connect(e.without_url().to_string())
        }
    })?;
    let status = resp.status().as_u16();
    let body = resp.text().await.map_err(|e| LlmError::Stream(e.without_url().to_string()))?;
    if !(200..300).contains(&status) {
        let body: String = body.chars().take(500).collect();
        return Err(LlmError::Http { status, body, retry_after: None });
    }
    let v: Value = serde_json::from_str(&body).map_err(|e| LlmError::Malformed(e.to_string()))?;
    let list = v
        .get("data")
        .or_else(|| v.get("models"))
        .and_then(Value::as_array)
        .ok_or_else(|| LlmError::Malformed("no `data` list in the /models answer".into()))?;
    Ok(list
        .iter()
        .filter_map(|m| m.get("id").or_else(|| m.get("name")).and_then(Value::as_str))
        .map(str::to_string)
        .collect())
}
