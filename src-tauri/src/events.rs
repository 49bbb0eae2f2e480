//! Engine events to the UI: one forwarding task per IPC channel, living as long as its page.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use skald_protocol::{Event, EventEnvelope};
use tauri::async_runtime::{self, JoinHandle};
use tauri::ipc::Channel;
use tokio::sync::broadcast::{Receiver, error::RecvError};

/// Why a forwarding task stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ForwardEnd {
    /// The page behind the channel is gone (closed, reloaded or navigated away).
    ChannelClosed,
    /// The engine dropped its event sender; nothing more will come.
    EngineStopped,
}

/// Sends every event from the engine into `channel` until one side goes away.
pub async fn forward(
    mut events: Receiver<EventEnvelope>,
    channel: Channel<EventEnvelope>,
) -> ForwardEnd {
    loop {
        let envelope = match events.recv().await {
            Ok(envelope) => envelope,
            Err(RecvError::Lagged(skipped)) => {
                // The UI missed events. Everything it shows can be rebuilt from the database,
                // so tell it to reload instead of leaving it silently stale.
                tracing::warn!(
                    skipped,
                    "a window fell behind the engine's events; asking it to resync"
                );
                EventEnvelope::global(Event::Resync {})
            }
            Err(RecvError::Closed) => return ForwardEnd::EngineStopped,
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
    pub fn add(
        &self,
        label: &str,
        events: Receiver<EventEnvelope>,
        channel: Channel<EventEnvelope>,
    ) {
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

    #[tokio::test]
    async fn events_reach_the_ui_in_commit_order_with_their_wire_shape() {
        let (sender, receiver) = broadcast::channel(16);
        let (channel, received) = recording_channel();
        let task = tokio::spawn(forward(receiver, channel));
        sender.send(session_event(1)).unwrap();
        sender.send(session_event(2)).unwrap();
        drop(sender);

        assert_eq!(task.await.unwrap(), ForwardEnd::EngineStopped);
        let received = received.lock().unwrap();
        let event = serde_json::json!({"type": "sessions_changed"});
        let wire = |id: i64| serde_json::json!({"session_id": id, "source": "web", "frame": null, "event": event});
        assert_eq!(*received, vec![wire(1), wire(2)]);
    }

    #[tokio::test]
    async fn forwarding_stops_when_the_page_is_gone() {
        let (sender, receiver) = broadcast::channel(16);
        let channel: Channel<EventEnvelope> = Channel::new(|_| Err(tauri::Error::WebviewNotFound));
        let task = tokio::spawn(forward(receiver, channel));
        sender.send(session_event(1)).unwrap();

        let end = tokio::time::timeout(Duration::from_secs(2), task).await.unwrap().unwrap();
        assert_eq!(end, ForwardEnd::ChannelClosed);
        assert_eq!(sender.receiver_count(), 0, "the engine no longer keeps a receiver for it");
    }

    #[tokio::test]
    async fn a_window_that_fell_behind_is_told_to_resync() {
        let (sender, receiver) = broadcast::channel(2);
        for id in 1..=5 {
            sender.send(session_event(id)).unwrap();
        }
        drop(sender);
        let (channel, received) = recording_channel();

        assert_eq!(forward(receiver, channel).await, ForwardEnd::EngineStopped);
        let received = received.lock().unwrap();
        let ids: Vec<_> = received.iter().map(|e| e["session_id"].clone()).collect();
        // The overwritten events 1..=3 are replaced by one global "reload" before 4 and 5.
        assert_eq!(ids, vec![serde_json::Value::Null, 4.into(), 5.into()]);
        assert_eq!(received[0]["event"]["type"], "resync");
    }

    #[tokio::test]
    async fn closing_a_webview_stops_only_its_own_forwarders() {
        let (sender, _keep) = broadcast::channel(16);
        let subscriptions = Subscriptions::default();
        let (main_channel, main_received) = recording_channel();
        let (other_channel, other_received) = recording_channel();
        subscriptions.add("main", sender.subscribe(), main_channel);
        subscriptions.add("other", sender.subscribe(), other_channel);
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
