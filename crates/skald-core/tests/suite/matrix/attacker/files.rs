//! Rows of "A model that tries" measured by the engine: files.

use std::time::Duration;

use serde_json::json;
use skald_core::engine::ChatOptions;
use skald_core::turn::{ParkMode, TurnOutcome};
use skald_testkit::matrix::{Row, excerpt};
use skald_testkit::{Reply, ScriptedToolCall};

use crate::suite::matrix::{stored_view, tool_results, user_view};
use crate::suite::turn::{Rig, drain};

/// Longest a turn over special files may take before the row counts it as hung.
const HUNG_AFTER: Duration = Duration::from_secs(30);

/// What one scripted turn showed: (user view, what the model was told, stored view, outcome,
/// whether the FIFO is still a FIFO).
type Seen = (String, Vec<String>, String, TurnOutcome, bool);

/// The model, in one reply, reads a FIFO in the working directory (no approval is needed to
/// read there), reads a link to it under a harmless name, and edits it (which would ask
/// first); then answers. Before, the read blocked forever and the turn with it. The turn runs
/// on a thread of its own, so a hang fails the row instead of holding the test up.
#[cfg(unix)]
#[test]
fn a_fifo_where_a_file_is_read() {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let _ = tx.send(rt.block_on(fifo_turn()));
    });
    let mut row = Row::new("attacker.fifo-read");
    match rx.recv_timeout(HUNG_AFTER) {
        Ok((redactions, (user, told, stored, outcome, still_fifo))) => {
            for (volatile, stable) in redactions {
                row.redact(volatile, stable);
            }
            let quoted: Vec<String> = told.iter().map(|t| excerpt(t, 120)).collect();
            row.user_sees(user)
                .model_sees(format!("the calls are answered with {}", quoted.join(" and ")))
                .stored(format!(
                    "{stored}; the FIFO is still a FIFO, nothing written over it: {}",
                    if still_fifo { "yes" } else { "no" }
                ))
                .lost_if(!still_fifo, "the FIFO was replaced by a written file");
            let refused = told.len() == 3 && told.iter().all(|t| t.contains("FIFO"));
            if matches!(outcome, TurnOutcome::Final { .. }) && refused {
                row.clear_error(&told.join(" "), &["pipe", "FIFO (named pipe)", "regular file"]);
            } else {
                row.recovered_if(false, "a call was not refused, or the turn did not answer");
            }
        }
        Err(_) => {
            row.user_sees(format!("nothing: the turn hung for {} s", HUNG_AFTER.as_secs()))
                .model_sees("nothing: the reads never returned")
                .stored("the calls left running")
                .recovered_if(false, "the turn hung on the FIFO");
        }
    }
    row.finish();
}

/// Runs the turn; the redactions for its temp paths, and what it showed.
async fn fifo_turn() -> (Vec<(String, &'static str)>, Seen) {
    let rig = Rig::new("").await;
    let pipe = rig.work.join("pipe");
    let made = std::process::Command::new("mkfifo").arg(&pipe).status().unwrap();
    assert!(made.success());
    std::os::unix::fs::symlink(&pipe, rig.work.join("notes.txt")).unwrap();
    let call = |name: &str, args: serde_json::Value| ScriptedToolCall::new(name, &args.to_string());
    rig.fake.push(Reply::tool_calls(vec![
        call("read_file", json!({"path": "pipe"})),
        call("read_file", json!({"path": "notes.txt"})),
        call("edit_file", json!({"path": "pipe", "old": "a", "new": "b"})),
    ]));
    rig.fake.push(Reply::text("Those are pipes, not files."));
    let mut rx = rig.engine.subscribe();
    let opts = ChatOptions {
        workdir: Some(rig.work.clone()),
        park_mode: ParkMode::Exit,
        ..Default::default()
    };
    let receipt = rig.engine.send_message("test", "read the notes", opts).await.unwrap();
    let sid = receipt.session_id;
    let outcome = rig.engine.wait_turn(sid).await.unwrap();
    let events = drain(&mut rx, sid);
    let told = rig.fake.requests().get(1).map(tool_results).unwrap_or_default();
    let stored = stored_view(&rig.engine.session_detail(sid).await.unwrap());
    let still_fifo = std::fs::symlink_metadata(&pipe)
        .is_ok_and(|m| std::os::unix::fs::FileTypeExt::is_fifo(&m.file_type()));
    let redactions = vec![
        (rig.work.display().to_string(), "<workdir>"),
        (rig.data_dir().display().to_string(), "<data>"),
    ];
    (redactions, (user_view(&events), told, stored, outcome, still_fifo))
}
