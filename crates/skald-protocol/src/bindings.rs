//! Renders every wire type as one TypeScript module (`ui/src/backend/bindings.ts`).

use ts_rs::TS;

use crate::*;

/// The generated file, byte-for-byte; a test fails when the committed copy drifts from it.
pub fn typescript() -> String {
    let decls = [
        serde_json::Value::decl(),
        ErrorCode::decl(),
        ApiError::decl(),
        Page::<()>::decl(),
        SnippetPart::decl(),
        HitKind::decl(),
        MatchRef::decl(),
        SearchQuery::decl(),
        SearchHit::decl(),
        SearchResults::decl(),
        SessionMatches::decl(),
        SessionListQuery::decl(),
        SessionSummary::decl(),
        SessionMeta::decl(),
        ToolStatus::decl(),
        ReconcileChoice::decl(),
        InterruptedCall::decl(),
        DebugMessage::decl(),
        PendingInput::decl(),
        TurnEnd::decl(),
        EndedTurn::decl(),
        SessionDetail::decl(),
        ItemRef::decl(),
        WindowAnchor::decl(),
        WindowQuery::decl(),
        SessionWindow::decl(),
        SendResult::decl(),
        SessionUsage::decl(),
        CompactResult::decl(),
        SessionRef::decl(),
        StopResult::decl(),
        TaskState::decl(),
        TaskInfo::decl(),
        TurnStatus::decl(),
        ToolGroupsReset::decl(),
        RunContext::decl(),
        JobSchedule::decl(),
        OnApproval::decl(),
        OnOverlap::decl(),
        OnDowntime::decl(),
        JobPolicies::decl(),
        JobInput::decl(),
        JobRunState::decl(),
        JobRunInfo::decl(),
        JobInfo::decl(),
        SchedulePreview::decl(),
        JobDeleted::decl(),
        HomeNotice::decl(),
        NotificationInfo::decl(),
        HomeSource::decl(),
        ApprovalKind::decl(),
        ApprovalRequest::decl(),
        DiffKind::decl(),
        DiffSpan::decl(),
        DiffLineTag::decl(),
        DiffLine::decl(),
        DiffHunk::decl(),
        FileDiff::decl(),
        InboxItem::decl(),
        QuestionItem::decl(),
        Answer::decl(),
        Inbox::decl(),
        BypassScopeKind::decl(),
        BypassDuration::decl(),
        BypassRequest::decl(),
        DecisionInput::decl(),
        Decision::decl(),
        BypassView::decl(),
        LlmClientView::decl(),
        LlmClientInput::decl(),
        SettingsView::decl(),
        ConnectionTest::decl(),
        RuleAction::decl(),
        ApprovalRuleView::decl(),
        ApprovalRuleInput::decl(),
        AgentType::decl(),
        AgentStrength::decl(),
        AgentSummary::decl(),
        McpServerState::decl(),
        McpToolInfo::decl(),
        McpServerInfo::decl(),
        McpServerInput::decl(),
        AgentDefinition::decl(),
        AgentDetail::decl(),
        DeltaKind::decl(),
        ResultType::decl(),
        Event::decl(),
        EventKind::decl(),
        FrameOrigin::decl(),
        EventEnvelope::decl(),
    ];
    let mut out = String::from(
        "// Generated from the Rust types in crates/skald-protocol. Do not edit by hand:\n\
         // run `UPDATE_BINDINGS=1 cargo test -p skald-protocol --test bindings` instead.\n\n",
    );
    for d in decls {
        out.push_str("export ");
        out.push_str(&d);
        out.push_str("\n\n");
    }
    out.truncate(out.trim_end().len());
    out.push('\n');
    out
}
