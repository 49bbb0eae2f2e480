// The desktop transport: Tauri commands plus one IPC channel for engine events.
import { Channel, invoke } from "@tauri-apps/api/core";
import type {
  ApprovalRuleInput,
  ApprovalRuleView,
  BypassView,
  CompactResult,
  ConnectionTest,
  Decision,
  DecisionInput,
  EventEnvelope,
  Inbox,
  ItemRef,
  LlmClientInput,
  DebugMessage,
  Page,
  SessionDetail,
  SessionListQuery,
  SessionSummary,
  SessionUsage,
  SessionWindow,
  SettingsView,
  WindowQuery,
} from "./bindings";
import { isEventEnvelope, toApiError, type Backend, type SendResult } from "./types";

type Invoke = <T>(cmd: string, args?: Record<string, unknown>) => Promise<T>;

async function call<T>(run: Invoke, cmd: string, args: Record<string, unknown>): Promise<T> {
  try {
    return await run<T>(cmd, args);
  } catch (error) {
    // Commands reject with the serialised ApiError; anything else is an IPC failure.
    throw toApiError(error);
  }
}

export function createTauriBackend(run: Invoke = invoke): Backend {
  return {
    kind: "tauri",
    listSessions: (query: SessionListQuery) =>
      call<Page<SessionSummary>>(run, "list_sessions", { query }),
    getSession: (id: number) => call<SessionDetail>(run, "session_detail", { id }),
    sessionWindow: (sessionId: number, query: WindowQuery) =>
      call<SessionWindow>(run, "session_window", { sessionId, query }),
    sessionItem: (sessionId: number, item: ItemRef) => call<DebugMessage>(run, "session_item", { sessionId, item }),
    activeSession: (source: string) => call<number>(run, "active_session", { source }),
    sendMessage: (source: string, text: string) => call<SendResult>(run, "send_message", { source, text }),
    stop: (sessionId: number) => call<boolean>(run, "stop_turn", { sessionId }),
    isRunning: (sessionId: number) => call<boolean>(run, "turn_running", { sessionId }),
    sessionUsage: (sessionId: number) => call<SessionUsage>(run, "session_usage", { sessionId }),
    resetTools: (sessionId: number) => call<number>(run, "reset_tool_groups", { sessionId }),
    compact: (sessionId: number, focus: string | null) =>
      call<CompactResult>(run, "compact_session", { sessionId, focus }),
    newSession: (source: string) => call<number>(run, "new_session", { source }),
    inbox: () => call<Inbox>(run, "inbox", {}),
    decide: (toolCallId: number, input: DecisionInput) =>
      call<Decision>(run, "decide", { toolCallId, input }),
    activeBypasses: () => call<BypassView[]>(run, "active_bypasses", {}),
    sessionBypasses: (sessionId: number) => call<BypassView[]>(run, "session_bypasses", { sessionId }),
    revokeBypass: (id: number) => call<BypassView>(run, "revoke_bypass", { id }),
    settings: () => call<SettingsView>(run, "settings", {}),
    saveClients: (clients: LlmClientInput[], fallback: string[]) =>
      call<SettingsView>(run, "save_llm_clients", { clients, fallback }),
    setApiKey: async (client: string, key: string | null) => {
      await call<unknown>(run, "set_api_key", { client, key });
    },
    testConnection: (client: string) => call<ConnectionTest>(run, "test_connection", { client }),
    approvalRules: () => call<ApprovalRuleView[]>(run, "approval_rules", {}),
    saveRule: (id: number | null, input: ApprovalRuleInput) =>
      call<ApprovalRuleView>(run, "save_approval_rule", { id, input }),
    deleteRule: async (id: number) => {
      await call<unknown>(run, "delete_approval_rule", { id });
    },
    llmRequest: (messageId: number) => call<unknown>(run, "llm_request", { messageId }),
    subscribe(onEvent) {
      let active = true;
      const channel = new Channel<EventEnvelope>((message) => {
        if (active && isEventEnvelope(message)) onEvent(message);
      });
      run<void>("subscribe_events", { channel }).catch((error: unknown) => {
        console.error("subscribe_events failed", toApiError(error));
      });
      // There is no unsubscribe command: the shell drops the channel once a send fails
      // or the window goes; until then we just stop forwarding.
      return () => {
        active = false;
        channel.onmessage = () => {};
      };
    },
  };
}
