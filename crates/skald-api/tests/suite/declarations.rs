//! The table's declarations are complete and consistent.

use std::collections::BTreeSet;

use skald_api::OPERATIONS;
use skald_protocol::{ErrorCode, EventKind};

#[test]
fn names_are_unique_snake_case_and_each_params_type_is_named_after_its_operation() {
    let mut seen = BTreeSet::new();
    for op in OPERATIONS {
        assert!(seen.insert(op.name), "`{}` is declared twice", op.name);
        assert!(op.name.chars().all(|c| c.is_ascii_lowercase() || c == '_'), "{}", op.name);
        let pascal: String =
            op.name.split('_').map(|w| w[..1].to_ascii_uppercase() + &w[1..]).collect();
        assert_eq!(op.params, format!("{pascal}Params"), "params of `{}`", op.name);
        assert!(!op.doc.trim().is_empty(), "`{}` has no doc comment", op.name);
    }
}

#[test]
fn every_error_code_but_unauthorized_is_one_some_operation_can_return() {
    // `unauthorized` is the HTTP shell's own (a missing or wrong token); every other code must
    // come from an operation, or it has no reason to exist.
    let declared: BTreeSet<String> =
        OPERATIONS.iter().flat_map(|op| op.errors).map(|c| format!("{c:?}")).collect();
    for code in ErrorCode::ALL {
        if *code == ErrorCode::Unauthorized {
            continue;
        }
        assert!(declared.contains(&format!("{code:?}")), "no operation returns {code:?}");
    }
}

#[test]
fn every_event_kind_is_caused_by_some_operation() {
    // An event no operation causes is one the engine never emits (the UI once followed a
    // `new_session` event nothing sent).
    let caused: BTreeSet<&str> =
        OPERATIONS.iter().flat_map(|op| op.events).map(|k| k.as_str()).collect();
    // `resync` and `subscribed` are a subscription's own (its start, a client that cannot be
    // caught up from the outbox), sent by no operation.
    let own = [EventKind::Resync, EventKind::Subscribed];
    let kinds = skald_protocol::EventKind::ALL.iter().filter(|k| !own.contains(k));
    for kind in kinds {
        assert!(caused.contains(kind.as_str()), "no operation causes `{}`", kind.as_str());
    }
}
