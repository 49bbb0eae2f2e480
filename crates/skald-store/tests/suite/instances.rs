//! Instances, not pids: a holder on another host is alive while its heartbeat is fresh, whatever
//! pid it had; on this host a dead pid is noticed at once.

use skald_store::Clock;
use skald_store::repo::instances::{Instance, InstanceBeat};
use skald_store::repo::sessions::NewSession;

const NO_PID_LIVES: fn(i64) -> bool = |_| false;

#[tokio::test]
async fn a_holder_elsewhere_lives_by_its_heartbeat_and_one_here_by_its_pid() {
    let (_dir, store, clock) = super::fresh().await;
    let s = store.create_session(&NewSession::interactive("web")).await.unwrap();
    let there = Instance::new("host-b", 4242, clock.now());
    let here = Instance::new("host-a", 77, clock.now());
    store.register_instance(&there).await.unwrap();
    store.register_instance(&here).await.unwrap();
    // How host-a judges others: pids of host-a's processes are checked, none exists.
    let judge = |c: &skald_store::ManualClock| {
        let now = c.now();
        move |b: &InstanceBeat| b.alive(now, "host-a", &NO_PID_LIVES)
    };
    store.claim_runner(s.session_id, &there, &judge(&clock)).await.unwrap();

    // host-b's pid 4242 means nothing here: its fresh heartbeat keeps it the holder.
    let refused = store.claim_runner(s.session_id, &here, &judge(&clock)).await;
    assert!(refused.is_err(), "a live holder on another host keeps the session");
    assert!(store.session_held(s.session_id, &judge(&clock)).await.unwrap());
    clock.advance(chrono::Duration::seconds(10));
    store.instance_heartbeat(&there.id).await.unwrap();
    clock.advance(chrono::Duration::seconds(10));
    assert!(store.session_held(s.session_id, &judge(&clock)).await.unwrap(), "beat 10 s ago");
    assert!(store.abandoned_runners(&here.id, &judge(&clock)).await.unwrap().is_empty());

    // Silent for longer than 15 s: presumed dead, its session abandoned and claimable.
    clock.advance(chrono::Duration::seconds(6));
    assert_eq!(store.abandoned_runners(&here.id, &judge(&clock)).await.unwrap(), [s.session_id]);
    store.claim_runner(s.session_id, &here, &judge(&clock)).await.unwrap();

    // A holder on this host whose process is gone is dead at once, heartbeat or not.
    let local = Instance::new("host-a", 78, clock.now());
    store.register_instance(&local).await.unwrap();
    let s2 = store.create_session(&NewSession::interactive("cli")).await.unwrap();
    store.claim_runner(s2.session_id, &local, &judge(&clock)).await.unwrap();
    assert!(!store.session_held(s2.session_id, &judge(&clock)).await.unwrap());

    // A clean stop ends an instance at once.
    store.stop_instance(&here.id).await.unwrap();
    assert!(!store.session_held(s.session_id, &judge(&clock)).await.unwrap());
}
