// Generated from the Rust types in crates/skald-protocol. Do not edit by hand:
// run `UPDATE_BINDINGS=1 cargo test -p skald-protocol --test bindings` instead.

export type ErrorCode = "not_found" | "invalid_input" | "conflict" | "config" | "storage" | "llm" | "cancelled" | "unauthorized" | "internal";

export type ApiError = { code: ErrorCode, message: string, };

export type Page<T> = { items: Array<T>, total: number, page: number, per_page: number, };

export type SessionListQuery = { 
/**
 * Only sessions of this source (`web`, `tic`, `cron`, ...); `None` = all.
 */
source: string | null, 
/**
 * Case-insensitive text search over title and message content.
 */
search: string | null, 
/**
 * 1-based page number.
 */
page: number, per_page: number, };

export type SessionSummary = { id: number, title: string | null, source: string, agent_id: string, is_ephemeral: boolean, is_interactive: boolean, created_at: string, message_count: number, last_message_at: string | null, };

export type SessionMeta = { id: number, title: string | null, source: string, agent_id: string, is_interactive: boolean, is_ephemeral: boolean, created_at: string, };

export type ToolStatus = "pending" | "running" | "done" | "failed" | "rejected" | "cancelled";

export type DebugMessage = { "kind": "user", message_id: number, content: string, is_synthetic: boolean, failed: boolean, stack_id: number, depth: number, created_at: string, } | { "kind": "thinking", message_id: number, content: string, reasoning: string | null, is_synthetic: boolean, input_tokens: number | null, output_tokens: number | null, stack_id: number, depth: number, created_at: string, } | { "kind": "assistant", message_id: number, content: string, reasoning: string | null, is_synthetic: boolean, input_tokens: number | null, output_tokens: number | null, stack_id: number, depth: number, created_at: string, } | { "kind": "tool", tool_call_id: number, message_id: number, name: string, arguments: unknown, status: ToolStatus, result: string | null, stack_id: number, depth: number, created_at: string, } | { "kind": "agent", stack_id: number, agent_id: string, depth: number, prompt: string | null, parent_tool_call_id: number | null, } | { "kind": "agent_end", stack_id: number, agent_id: string, depth: number, };

export type SessionDetail = { session: SessionMeta, messages: Array<DebugMessage>, };

export type Event = { "type": "sessions_changed", } | { "type": "config_reloaded", ok: boolean, error: string | null, };

export type EventEnvelope = { session_id: number | null, source: string | null, event: Event, };
