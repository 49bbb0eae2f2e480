//! Shared harness: a client whose backoff sleeps are recorded instead of waited, and a runner
//! that collects deltas and notices.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use skald_llm::{
    CancellationToken, ChatRequest, HealthTracker, LlmClient, LlmError, LlmNotice, LlmSettings,
    LlmTurn, ModelEndpoint, Sleeper, StreamDelta,
};

/// Records every requested delay and returns at once.
#[derive(Default)]
pub struct RecordingSleeper {
    pub delays: Mutex<Vec<Duration>>,
}

impl Sleeper for RecordingSleeper {
    fn sleep(&self, delay: Duration) -> Pin<Box<dyn Future<Output = ()> + Send + 'static>> {
        self.delays.lock().unwrap().push(delay);
        Box::pin(async {})
    }
}

pub fn settings() -> LlmSettings {
    LlmSettings {
        request_timeout: Duration::from_secs(10),
        idle_timeout: Duration::from_secs(10),
        connect_timeout: Duration::from_secs(2),
        ..LlmSettings::default()
    }
}

pub fn client_with(settings: LlmSettings) -> (LlmClient, Arc<RecordingSleeper>) {
    let sleeper = Arc::new(RecordingSleeper::default());
    let client =
        LlmClient::with_parts(settings, Arc::new(HealthTracker::new()), sleeper.clone()).unwrap();
    (client, sleeper)
}

pub fn client() -> (LlmClient, Arc<RecordingSleeper>) {
    client_with(settings())
}

/// An endpoint whose alias and model id are both `name`.
pub fn endpoint(base_url: &str, name: &str) -> ModelEndpoint {
    ModelEndpoint::new(name, base_url, name)
}

pub fn user(text: &str) -> ChatRequest {
    ChatRequest {
        messages: vec![json!({"role": "user", "content": text})].into(),
        stream: true,
        ..ChatRequest::default()
    }
}

pub fn tool(name: &str) -> Value {
    json!({"type": "function", "function": {
        "name": name, "description": "test tool",
        "parameters": {"type": "object", "properties": {}}}})
}

pub struct Run {
    pub result: Result<LlmTurn, LlmError>,
    pub deltas: Vec<StreamDelta>,
    pub notices: Vec<LlmNotice>,
}

impl Run {
    pub fn turn(&self) -> &LlmTurn {
        match &self.result {
            Ok(t) => t,
            Err(e) => panic!("expected a turn, got {e:?} (notices {:?})", self.notices),
        }
    }

    pub fn content_deltas(&self) -> String {
        self.deltas
            .iter()
            .filter_map(|d| match d {
                StreamDelta::Content(t) => Some(t.as_str()),
                StreamDelta::Reasoning(_) => None,
            })
            .collect()
    }
}

pub async fn run(client: &LlmClient, chain: &[ModelEndpoint], req: &ChatRequest) -> Run {
    run_with_cancel(client, chain, req, CancellationToken::new()).await
}

pub async fn run_with_cancel(
    client: &LlmClient,
    chain: &[ModelEndpoint],
    req: &ChatRequest,
    cancel: CancellationToken,
) -> Run {
    let mut deltas = Vec::new();
    let mut notices = Vec::new();
    let result = client
        .complete(chain, req, cancel, &mut |d| deltas.push(d), &mut |n| notices.push(n))
        .await;
    Run { result, deltas, notices }
}
