//! Sources and their sessions: messages from two sources at once each land in their own
//! session, in order. (A message sent during a turn of its source is folded as a steer:
//! `suite::turn`; a turn that panics: skald-cli's `serve_chat`.)

use skald_core::turn::TurnOutcome;
use skald_protocol::DebugMessage;
use skald_testkit::Reply;

use super::turn::{Rig, finish};

/// The root user and assistant texts of a session, in order.
async fn texts(rig: &Rig, session_id: i64) -> Vec<String> {
    let detail = rig.engine.session_detail(session_id).await.unwrap();
    detail
        .messages
        .iter()
        .filter_map(|m| match m {
            DebugMessage::User { content, .. } => Some(format!("user:{content}")),
            DebugMessage::Assistant { content, .. } => Some(format!("assistant:{content}")),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn two_sources_at_once_land_in_their_own_sessions_in_order() {
    let rig = Rig::new("").await;
    rig.fake.push_for_prompt("DESK-1", Reply::text("desk answer 1"));
    rig.fake.push_for_prompt("PHONE-1", Reply::text("phone answer 1"));
    let (desk, phone) = tokio::join!(
        rig.engine.send_message("desk", "DESK-1 first from the desk", rig.opts()),
        rig.engine.send_message("phone", "PHONE-1 first from the phone", rig.opts()),
    );
    let (desk, phone) = (desk.unwrap(), phone.unwrap());
    assert_ne!(desk.session_id, phone.session_id, "each source has its own session");
    let (desk_id, desk_end) = finish(&rig.engine, desk).await;
    let (phone_id, phone_end) = finish(&rig.engine, phone).await;
    assert!(matches!(desk_end, TurnOutcome::Final { .. }), "{desk_end:?}");
    assert!(matches!(phone_end, TurnOutcome::Final { .. }), "{phone_end:?}");

    // The second message of each source goes to that source's session, after the first.
    rig.fake.push_for_prompt("DESK-1", Reply::text("desk answer 2"));
    rig.fake.push_for_prompt("PHONE-1", Reply::text("phone answer 2"));
    let (desk, phone) = tokio::join!(
        rig.engine.send_message("desk", "second from the desk", rig.opts()),
        rig.engine.send_message("phone", "second from the phone", rig.opts()),
    );
    let (desk, phone) = (desk.unwrap(), phone.unwrap());
    assert_eq!((desk.session_id, phone.session_id), (desk_id, phone_id));
    finish(&rig.engine, desk).await;
    finish(&rig.engine, phone).await;
    assert_eq!(
        texts(&rig, desk_id).await,
        [
            "user:DESK-1 first from the desk",
            "assistant:desk answer 1",
            "user:second from the desk",
            "assistant:desk answer 2"
        ]
    );
    assert_eq!(
        texts(&rig, phone_id).await,
        [
            "user:PHONE-1 first from the phone",
            "assistant:phone answer 1",
            "user:second from the phone",
            "assistant:phone answer 2"
        ]
    );
}
