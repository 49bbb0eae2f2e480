//! A call whose arguments break its tool's schema is answered to the model at once, naming the
//! place in the arguments: it never waits for a person (no approval is created).

use serde_json::json;
use skald_core::engine::ChatOptions;
use skald_core::turn::{ParkMode, TurnOutcome};
use skald_protocol::Event;
use skald_testkit::{Reply, ScriptedToolCall};

use crate::suite::turn::Rig;

#[tokio::test]
async fn invalid_nested_and_out_of_range_arguments_of_built_in_tools_never_reach_a_person() {
    let rig = Rig::new("").await;
    let todos = json!({"todos": [
        {"content": "read", "status": "pending"},
        {"content": "write", "status": "done"}
    ]});
    // Valid, this command would wait for approval: its timeout is past the maximum.
    let command = json!({"command": "echo hi", "timeout": 99999});
    rig.fake.push(Reply::tool_calls(vec![
        ScriptedToolCall::new("write_todos", &todos.to_string()),
        ScriptedToolCall::new("execute_cmd", &command.to_string()),
    ]));
    rig.fake.push(Reply::text("fixed later"));
    let opts = ChatOptions {
        workdir: Some(rig.work.clone()),
        park_mode: ParkMode::Exit,
        ..Default::default()
    };
    let mut rx = rig.engine.subscribe();
    let receipt = rig.engine.send_message("test", "plan and run", opts).await.unwrap();
    let (sid, outcome) = crate::suite::turn::finish(&rig.engine, receipt).await;
    assert!(matches!(outcome, TurnOutcome::Final { .. }), "{outcome:?}");
    let errors: Vec<String> = crate::suite::turn::drain(&mut rx, sid)
        .into_iter()
        .filter_map(|e| match e {
            Event::ToolError { error, .. } => Some(error),
            Event::ApprovalRequested { .. } => panic!("an invalid call was sent to a person"),
            _ => None,
        })
        .collect();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(errors[0].contains("at `/todos/1/status`: \"done\" is not one of"), "{}", errors[0]);
    assert!(errors[0].contains("Call `write_todos` again"), "{}", errors[0]);
    assert!(
        errors[1].contains("at `/timeout`: 99999 is greater than the maximum of 600"),
        "{}",
        errors[1]
    );
    assert!(rig.engine.inbox().await.unwrap().items.is_empty());
}
