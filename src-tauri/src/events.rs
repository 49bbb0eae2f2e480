//! Engine events to the UI: one forwarding task per IPC channel, living as long as its page.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Mutex, MutexGuard};

use skald_core::events::EventFeed;
use skald_protocol::EventEnvelope;
use tauri::async_runtime::{self, JoinHandle};
use tauri::ipc::Channel;

/// Why a forwarding task stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ForwardEnd {
    /// The page behind the channel is gone (closed, reloaded or navigated away).
    ChannelClosed,
    /// The engine dropped its event sender; nothing more will come.
    EngineStopped,
}

/// Where a window's events come from: the engine's feed, which carries the events of every
/// process on the data dir and reads back from the outbox what a window that fell behind
/// missed (or says `resync` when it no longer can).
pub trait EventSource: Send + 'static {
    /// The next event; `None` once the engine is gone.
    fn next_event(&mut self) -> impl Future<Output = Option<EventEnvelope>> + Send;
}

impl EventSource for EventFeed {
    fn next_event(&mut self) -> impl Future<Output = Option<EventEnvelope>> + Send {
        self.recv()
    }
}

/// Sends every event from the engine into `channel` until one side goes away.
pub async fn forward(mut events: impl EventSource, channel: Channel<EventEnvelope>) -> ForwardEnd {
    loop {
        let Some(envelope) = events.next_event().await else {
            return ForwardEnd::EngineStopped;
        };
        if let Err(error) = channel.send(envelope) {
            tracing::debug!(%error, "event channel closed");
            return ForwardEnd::ChannelClosed;
        }
    }
}

/// The running forwarders, by webview label, so a page reload or a closed window stops them.
#[derive(Default)]
pub struct Subscriptions {
    by_webview: Mutex<HashMap<String, Vec<JoinHandle<ForwardEnd>>>>,
}

impl Subscriptions {
    /// Starts forwarding `events` into `channel` on behalf of the webview `label`.
    pub fn add(&self, label: &str, events: impl EventSource, channel: Channel<EventEnvelope>) {
        let task = async_runtime::spawn(forward(events, channel));
        let mut by_webview = self.lock();
        let tasks = by_webview.entry(label.to_owned()).or_default();
        tasks.retain(|task| !task.inner().is_finished());
        tasks.push(task);
    }

    /// Stops every forwarder of the webview `label`; returns how many were still running.
    pub fn close_all(&self, label: &str) -> usize {
        let Some(tasks) = self.lock().remove(label) else { return 0 };
        let mut running = 0;
        for task in tasks {
            if !task.inner().is_finished() {
                running += 1;
            }
            task.abort();
        }
        running
    }

    /// How many forwarders of `label` are still running.
    #[cfg(test)]
    fn running(&self, label: &str) -> usize {
        self.lock()
            .get(label)
            .map_or(0, |tasks| tasks.iter().filter(|task| !task.inner().is_finished()).count())
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Vec<JoinHandle<ForwardEnd>>>> {
        // A panic while holding the lock leaves only a list of task handles: still usable.
        self.by_webview.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use std::sync::Arc;
    use std::time::Duration;

    use skald_core::config::{EnvOverrides, MemorySecrets};
    use skald_core::{Engine, EngineOptions};
    use skald_protocol::Event;
    use tauri::ipc::InvokeResponseBody;
    use tokio::sync::broadcast;

    use super::*;

    /// A channel that records what the UI would receive, as JSON text.
    fn recording_channel() -> (Channel<EventEnvelope>, Arc<Mutex<Vec<serde_json::Value>>>) {
        let received = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&received);
        let channel = Channel::new(move |body| {
            let InvokeResponseBody::Json(json) = body else { panic!("events are sent as JSON") };
            sink.lock().unwrap().push(serde_json::from_str(&json).unwrap());
            Ok(())
        });
        (channel, received)
    }

    fn session_event(id: i64) -> EventEnvelope {
        EventEnvelope::session(id, "web", Event::SessionsChanged {})
    }

    async fn wait_until(mut done: impl FnMut() -> bool) {
        for _ in 0..200 {
            if done() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("condition not reached within 2 s");
    }

    /// A bare broadcast as the source, for the tests about pages and windows.
    struct Bus(broadcast::Receiver<EventEnvelope>);

    impl EventSource for Bus {
        async fn next_event(&mut self) -> Option<EventEnvelope> {
            loop {
                match self.0.recv().await {
                    Ok(envelope) => return Some(envelope),
                    Err(broadcast::error::RecvError::Lagged(_)) => {}
                    Err(broadcast::error::RecvError::Closed) => return None,
                }
            }
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn events_reach_the_ui_in_commit_order_with_their_wire_shape() {
        let dir = tempfile::tempdir().unwrap();
        let engine = Engine::open(EngineOptions {
            data_dir: Some(dir.path().to_path_buf()),
            env: Some(EnvOverrides::default()),
            secrets: Some(Arc::new(MemorySecrets::default())),
            ..Default::default()
        })
        .await
        .unwrap();
        let (channel, received) = recording_channel();
        let task = tokio::spawn(forward(engine.subscribe_feed(None).await.unwrap(), channel));
        let id = engine.new_session("web").await.unwrap();
        engine.flush_events().await;
        wait_until(|| received.lock().unwrap().len() == 3).await;
        drop(engine);

        // The engine going away ends the stream.
        let end = tokio::time::timeout(Duration::from_secs(5), task).await.unwrap().unwrap();
        assert_eq!(end, ForwardEnd::EngineStopped);
        let received = received.lock().unwrap();
        let wire = |seq: i64, event: serde_json::Value| serde_json::json!({"seq": seq, "session_id": id, "source": "web", "frame": null, "event": event});
        let start = serde_json::json!({"seq": 0, "session_id": null, "source": null, "frame": null,
            "event": {"type": "subscribed"}});
        assert_eq!(
            *received,
            vec![
                start,
                wire(1, serde_json::json!({"type": "new_session", "session_id": id})),
                wire(2, serde_json::json!({"type": "sessions_changed"})),
            ]
        );
    }

    #[tokio::test]
    async fn forwarding_stops_when_the_page_is_gone() {
        let (sender, receiver) = broadcast::channel(16);
        let channel: Channel<EventEnvelope> = Channel::new(|_| Err(tauri::Error::WebviewNotFound));
        let task = tokio::spawn(forward(Bus(receiver), channel));
        sender.send(session_event(1)).unwrap();

        let end = tokio::time::timeout(Duration::from_secs(2), task).await.unwrap().unwrap();
        assert_eq!(end, ForwardEnd::ChannelClosed);
        assert_eq!(sender.receiver_count(), 0, "the engine no longer keeps a receiver for it");
    }

    #[tokio::test]
    async fn closing_a_webview_stops_only_its_own_forwarders() {
        let (sender, _keep) = broadcast::channel(16);
        let subscriptions = Subscriptions::default();
        let (main_channel, main_received) = recording_channel();
        let (other_channel, other_received) = recording_channel();
        subscriptions.add("main", Bus(sender.subscribe()), main_channel);
        subscriptions.add("other", Bus(sender.subscribe()), other_channel);
        assert_eq!(subscriptions.running("main"), 1);

        assert_eq!(subscriptions.close_all("main"), 1);
        wait_until(|| sender.receiver_count() == 2).await;
        sender.send(session_event(7)).unwrap();

        wait_until(|| other_received.lock().unwrap().len() == 1).await;
        assert!(main_received.lock().unwrap().is_empty(), "a closed page receives nothing");
        assert_eq!(subscriptions.running("other"), 1);
        assert_eq!(subscriptions.close_all("main"), 0, "closing twice is harmless");
    }
}
