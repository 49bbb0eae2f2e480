//! This engine as an instance other processes can judge: registered when it opens, its heartbeat
//! refreshed while it holds sessions (and only then: an idle or parked engine writes nothing),
//! and stops requested by other processes turned into cancels of its leases.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use skald_store::repo::instances::{Instance, InstanceBeat};
use tokio::sync::Notify;

use super::Engine;
use crate::session::process::pid_alive;

/// How often a holding instance looks for stops requested elsewhere (one read).
const STOP_POLL: Duration = Duration::from_millis(250);

/// How often a holding instance refreshes its heartbeat (one write); well inside the 15 s after
/// which others presume it dead.
const HEARTBEAT: Duration = Duration::from_secs(2);

/// The instance, the count of leases it holds and of sessions it waits on, and whether it runs
/// the background: while any of these, others must be able to see it alive.
#[derive(Debug)]
pub(super) struct InstanceState {
    pub(super) me: Instance,
    held: AtomicUsize,
    adopted: AtomicUsize,
    background: AtomicBool,
    /// Woken when the first lease is taken, so the watch starts polling. Its own `Arc`: the
    /// watch waits on it without keeping the engine alive.
    first_lease: Arc<Notify>,
}

impl InstanceState {
    pub(super) fn new(me: Instance) -> Self {
        Self {
            me,
            held: AtomicUsize::new(0),
            adopted: AtomicUsize::new(0),
            background: AtomicBool::new(false),
            first_lease: Arc::new(Notify::new()),
        }
    }

    pub(super) fn lease_taken(&self) {
        if self.held.fetch_add(1, Ordering::SeqCst) == 0 {
            self.first_lease.notify_one();
        }
    }

    pub(super) fn lease_given_back(&self) {
        let _ = self.held.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
    }

    /// The number of sessions this engine waits on changed.
    pub(super) fn adopted_changed(&self, n: usize) {
        if self.adopted.swap(n, Ordering::SeqCst) == 0 && n > 0 {
            self.first_lease.notify_one();
        }
    }

    /// The engine runs the background from now on.
    pub(super) fn serves_background(&self) {
        self.background.store(true, Ordering::SeqCst);
        self.first_lease.notify_one();
    }

    /// Whether others must see this instance alive (its heartbeat matters).
    fn holding(&self) -> bool {
        self.held.load(Ordering::SeqCst) > 0
            || self.adopted.load(Ordering::SeqCst) > 0
            || self.background.load(Ordering::SeqCst)
    }

    fn holds_leases(&self) -> bool {
        self.held.load(Ordering::SeqCst) > 0
    }
}

impl Engine {
    /// This engine's instance id (what its runner rows name).
    pub fn instance_id(&self) -> &str {
        &self.inner.instance.me.id
    }

    /// How this engine judges another instance: alive while its heartbeat is fresh, and — on
    /// this host — while its process exists (a kill here is noticed at once).
    pub(super) fn liveness(&self) -> impl Fn(&InstanceBeat) -> bool + Sync + use<> {
        let clock = self.store().clock().clone();
        let host = self.inner.instance.me.host.clone();
        move |beat: &InstanceBeat| beat.alive(clock.now(), &host, &pid_alive)
    }

    /// The instance's watch, one task for the engine's life: while it holds leases, waits on
    /// sessions or runs the background it refreshes the heartbeat (and while it holds leases it
    /// turns stops requested by other processes into cancels); otherwise it sleeps.
    pub(super) fn start_instance_watch(&self) {
        let weak = Arc::downgrade(&self.inner);
        let stop = self.inner.lifecycle.stop_token().clone();
        let first_lease = self.inner.instance.first_lease.clone();
        self.inner.lifecycle.spawn(async move {
            let mut since_beat = Duration::ZERO;
            loop {
                let Some(inner) = weak.upgrade() else { return };
                let engine = Engine { inner };
                if !engine.inner.instance.holding() {
                    drop(engine);
                    tokio::select! {
                        () = stop.cancelled() => return,
                        () = first_lease.notified() => {}
                    }
                    continue;
                }
                if engine.inner.instance.holds_leases() {
                    engine.forward_remote_stops().await;
                }
                if since_beat >= HEARTBEAT {
                    since_beat = Duration::ZERO;
                    let id = &engine.inner.instance.me.id;
                    if let Err(e) = engine.store().instance_heartbeat(id).await {
                        tracing::warn!("cannot refresh this engine's heartbeat: {e}");
                    }
                }
                drop(engine);
                tokio::select! {
                    () = stop.cancelled() => return,
                    () = tokio::time::sleep(STOP_POLL) => since_beat += STOP_POLL,
                }
            }
        });
    }

    /// Cancels the local work of every session whose stop another process requested.
    async fn forward_remote_stops(&self) {
        match self.store().cancel_requests(self.instance_id()).await {
            Ok(ids) => {
                for id in ids {
                    if let Some(handle) = self.inner.sessions.existing(id) {
                        handle.cancel();
                    }
                }
            }
            Err(e) => tracing::warn!("cannot read stop requests: {e}"),
        }
    }
}
