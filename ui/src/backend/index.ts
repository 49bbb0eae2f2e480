// The UI's single door to the engine: transport selection, React provider and data hooks.
import {
  QueryClient,
  QueryClientProvider,
  keepPreviousData,
  useQuery,
  useQueryClient,
  type UseQueryResult,
} from "@tanstack/react-query";
import { createContext, createElement, useCallback, useContext, useEffect, useEffectEvent, useMemo, useState, type ReactNode } from "react";
import type {
  Answer,
  ElicitationAction,
  ElicitationAnswered,
  ApiError,
  ApprovalRuleInput,
  ApprovalRuleView,
  BypassView,
  ConnectionTest,
  Decision,
  DecisionInput,
  EventEnvelope,
  Inbox,
  InterruptedCall,
  TaskInfo,
  JsonValue,
  LlmClientInput,
  Page,
  ReconcileChoice,
  SessionListQuery,
  SessionMeta,
  SessionSummary,
  SettingsView,
} from "./bindings";
import { agentKeys } from "./agents";
import { mcpKeys } from "./mcp";
import { createTauriBackend } from "./tauri";
import { toApiError, type Backend } from "./types";
import { createWebBackend } from "./web";

export type * from "./bindings";
export type { Api, OpName, Operations } from "./api";
export type { Backend, BackendKind } from "./types";
export { useChat, type ChatController } from "./useChat";
export { useTreeWindow, type TreeWindowController } from "./useTreeWindow";
export type { ChatItem, ChatState, ToolItem, ApprovalInfo, CardStatus, NoticeItem, QueuedItem, QuestionInfo } from "./chat";
export { describeTurnEnd, queuedReason } from "./chat";
export { isApiError, toApiError } from "./types";
export { agentKeys, useAgents, useAgentDetail, useAgentActions, type AgentActions } from "./agents";
export {
  jobKeys,
  useJobActions,
  useJobRuns,
  useJobs,
  useJobsLive,
  useSchedulePreview,
  type JobActions,
} from "./jobs";
export { noticeKeys, useDismissNotice, useHomeNotices, HOME_SOURCE } from "./notices";
export { ticKeys, useRunTic, useTicStatus, useTicTick } from "./tic";
export { mcpKeys, useMcpActions, useMcpServers, useStartMcpServers, type McpActions } from "./mcp";
export {
  memoryKeys,
  useMemoryActions,
  useMemoryFile,
  useMemoryFiles,
  useMemoryHistory,
  useMemoryLive,
  type MemoryActions,
} from "./memory";

/** Tauri injects `__TAURI_INTERNALS__` before any page script runs; a plain browser has none. */
export function detectBackend(win: Window = window): Backend {
  return "__TAURI_INTERNALS__" in win ? createTauriBackend() : createWebBackend();
}

export const sessionKeys = {
  all: ["sessions"] as const,
  list: (query: SessionListQuery) => ["sessions", "list", query] as const,
  detail: (id: number) => ["sessions", "detail", id] as const,
  /** Under `all`, so a change to any session finds again. */
  find: (id: number, text: string) => ["sessions", "find", id, text] as const,
};

export const inboxKeys = {
  all: ["inbox"] as const,
};

/** A session's calls cut off by a crash while they ran, which the user reconciles. */
export const taskKeys = {
  session: (id: number) => ["tasks", id] as const,
};

export const interruptedKeys = {
  all: ["interrupted_calls"] as const,
  session: (id: number) => ["interrupted_calls", id] as const,
  /** Every session's calls still waiting for the user's word (the inbox's list). */
  open: ["interrupted_calls", "open"] as const,
};

export const bypassKeys = {
  all: ["bypasses"] as const,
  active: ["bypasses", "active"] as const,
  session: (id: number) => ["bypasses", "session", id] as const,
};

export const settingsKeys = {
  view: ["settings"] as const,
  rules: ["approval_rules"] as const,
  request: (messageId: number) => ["llm_request", messageId] as const,
};

/** Events after which the set of waiting approvals may have changed. */
const INBOX_EVENTS = new Set([
  "elicitation_requested",
  "elicitation_resolved",
  "approval_requested",
  "approval_resolved",
  "agent_question",
  "clarification_resolved",
  "sessions_changed",
  "resync",
]);

const NO_RETRY_CODES = new Set(["not_found", "invalid_input", "unauthorized", "config"]);

export function createQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: {
        // Only transient failures are worth retrying; a missing session stays missing.
        retry: (failureCount, error) =>
          failureCount < 2 && !NO_RETRY_CODES.has((error as Partial<ApiError>).code ?? ""),
        refetchOnWindowFocus: false,
        staleTime: 5_000,
      },
    },
  });
}

type Listener = (envelope: EventEnvelope) => void;

/** One engine subscription per app, fanned out to every page that listens. */
class EventHub {
  private listeners = new Set<Listener>();
  add(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }
  dispatch(envelope: EventEnvelope): void {
    for (const l of [...this.listeners]) l(envelope);
  }
}

/**
 * The origin label of each call a sub-agent asked about (an approval or a question) while this
 * app listened: inbox items do not carry their frame, so the inbox names the asking sub-agent
 * from what the live stream said. Forgotten once decided or answered.
 */
class CallOrigins {
  private labels = new Map<number, string>();
  note(envelope: EventEnvelope): void {
    const e = envelope.event;
    if ((e.type === "approval_requested" || e.type === "agent_question") && envelope.frame?.label) {
      this.labels.set(e.tool_call_id, envelope.frame.label);
    } else if (e.type === "approval_resolved" || e.type === "clarification_resolved") {
      this.labels.delete(e.tool_call_id);
    }
  }
  get(toolCallId: number): string | null {
    return this.labels.get(toolCallId) ?? null;
  }
}

type BackendContextValue = { backend: Backend; hub: EventHub; origins: CallOrigins };

const BackendContext = createContext<BackendContextValue | null>(null);

export interface BackendProviderProps {
  backend: Backend;
  queryClient?: QueryClient;
  children?: ReactNode;
}

function EventBridge({ backend, children }: { backend: Backend; children?: ReactNode }) {
  const client = useQueryClient();
  const [value] = useState<BackendContextValue>(() => ({ backend, hub: new EventHub(), origins: new CallOrigins() }));
  const current = value.backend === backend ? value : { ...value, backend };
  const { hub, origins } = current;
  useEffect(
    () =>
      backend.subscribe((envelope: EventEnvelope) => {
        const type = envelope.event.type;
        // Before the inbox refetch below, so the refreshed inbox names the asking sub-agent.
        origins.note(envelope);
        // After a resync (missed events) anything listed may be stale.
        if (type === "sessions_changed" || type === "resync") {
          void client.invalidateQueries({ queryKey: sessionKeys.all });
        }
        if (type === "agents_changed" || type === "resync") {
          // An agent file edited by hand or in another window: the picker and Settings refresh.
          void client.invalidateQueries({ queryKey: agentKeys.all });
        }
        if (type === "config_reloaded") {
          // A hand edit of config.yml (or another window) changed the clients under us.
          void client.invalidateQueries({ queryKey: settingsKeys.view });
          void client.invalidateQueries({ queryKey: mcpKeys.all });
        }
        if (type === "interrupted_call" || type === "resync") {
          // Flagged by a resume, or reconciled here, in another window or process.
          void client.invalidateQueries({ queryKey: interruptedKeys.all });
        }
        if (INBOX_EVENTS.has(type)) {
          void client.invalidateQueries({ queryKey: inboxKeys.all });
        }
        if (type === "bypasses_changed" || type === "sessions_changed") {
          // Granted, revoked or ended by /new, here or in another process (a reconnect resyncs).
          void client.invalidateQueries({ queryKey: bypassKeys.all });
        }
        hub.dispatch(envelope);
      }),
    [backend, client, hub, origins],
  );
  return createElement(BackendContext.Provider, { value: current }, children);
}

export function BackendProvider({ backend, queryClient, children }: BackendProviderProps) {
  const [ownClient] = useState(() => queryClient ?? createQueryClient());
  return createElement(
    QueryClientProvider,
    { client: queryClient ?? ownClient },
    createElement(EventBridge, { backend }, children),
  );
}

function useBackendContext(): BackendContextValue {
  const value = useContext(BackendContext);
  if (!value) throw new Error("useBackend must be used inside <BackendProvider>");
  return value;
}

export function useBackend(): Backend {
  return useBackendContext().backend;
}

/** Calls `handler` for every engine event while the component is mounted (latest handler wins). */
/** The origin label of the sub-agent that asked about a call, when this app saw it ask. */
export function useCallOrigin(): (toolCallId: number) => string | null {
  const { origins } = useBackendContext();
  return useCallback((toolCallId: number) => origins.get(toolCallId), [origins]);
}

export function useEngineEvents(handler: (envelope: EventEnvelope) => void): void {
  const { hub } = useBackendContext();
  // The handler of the latest render, without re-subscribing each time it is rebuilt.
  const onEvent = useEffectEvent(handler);
  useEffect(() => hub.add((e) => onEvent(e)), [hub]);
}

/** Sends a decision and refreshes the inbox, so the decided item leaves the list at once (and a
 * bypass granted with it shows up). */
export function useDecide(): (toolCallId: number, input: DecisionInput) => Promise<Decision> {
  const backend = useBackend();
  const client = useQueryClient();
  return useCallback(
    async (toolCallId, input) => {
      try {
        return await backend.decide({ tool_call_id: toolCallId, input });
      } finally {
        void client.invalidateQueries({ queryKey: inboxKeys.all });
        if (input.bypass) void client.invalidateQueries({ queryKey: bypassKeys.all });
      }
    },
    [backend, client],
  );
}

/** Bypasses in force: the session's when `sessionId` is given, else across sessions. `null`
 * (no session yet) fetches nothing. Expiry sends no event, so the list is read again every 30 s. */
/** Answers an MCP server's question as this surface, and refreshes the inbox. */
export function useAnswerElicitation(): (
  id: number,
  action: ElicitationAction,
  content: Record<string, unknown> | null,
) => Promise<ElicitationAnswered> {
  const backend = useBackend();
  const client = useQueryClient();
  return useCallback(
    async (id, action, content) => {
      try {
        return await backend.answer_elicitation({ elicitation_id: id, action, content });
      } finally {
        void client.invalidateQueries({ queryKey: inboxKeys.all });
      }
    },
    [backend, client],
  );
}

/** Answers a clarification question as this surface, and refreshes the inbox. */
export function useAnswer(): (toolCallId: number, answer: string) => Promise<Answer> {
  const backend = useBackend();
  const client = useQueryClient();
  return useCallback(
    async (toolCallId, answer) => {
      try {
        return await backend.answer_question({ tool_call_id: toolCallId, answer });
      } finally {
        void client.invalidateQueries({ queryKey: inboxKeys.all });
      }
    },
    [backend, client],
  );
}

export function useBypasses(sessionId?: number | null): UseQueryResult<BypassView[], ApiError> {
  const backend = useBackend();
  return useQuery<BypassView[], ApiError>({
    queryKey: sessionId === undefined ? bypassKeys.active : bypassKeys.session(sessionId ?? -1),
    queryFn: () =>
      sessionId === undefined
        ? backend.active_bypasses({})
        : backend.session_bypasses({ session_id: sessionId as number }),
    enabled: sessionId !== null,
    refetchInterval: 30_000,
  });
}

/** The session's interrupted calls by tool call id (empty until loaded; `null` fetches nothing). */
export function useInterruptedCalls(sessionId: number | null): Map<number, InterruptedCall> {
  const backend = useBackend();
  const { data } = useQuery<InterruptedCall[], ApiError>({
    queryKey: interruptedKeys.session(sessionId ?? -1),
    queryFn: () => backend.interrupted_calls({ session_id: sessionId as number }),
    enabled: sessionId !== null,
  });
  return useMemo(() => new Map((data ?? []).map((c) => [c.tool_call_id, c])), [data]);
}

/** Interrupted calls of every session still waiting for the user's word, oldest first. */
export function useOpenInterruptedCalls(): InterruptedCall[] {
  const backend = useBackend();
  const { data } = useQuery<InterruptedCall[], ApiError>({
    queryKey: interruptedKeys.open,
    queryFn: () => backend.open_interrupted_calls({}),
  });
  return data ?? [];
}

/** The async tasks a session started, oldest first. */
export function useTasks(sessionId: number): TaskInfo[] {
  const backend = useBackend();
  const { data } = useQuery<TaskInfo[], ApiError>({
    queryKey: taskKeys.session(sessionId),
    queryFn: () => backend.list_tasks({ session_id: sessionId }),
  });
  return data ?? [];
}

/** Continues a failed or stopped task (by its child session) and refreshes its parent's list. */
export function useContinueTask(): (task: TaskInfo) => Promise<TaskInfo> {
  const backend = useBackend();
  const client = useQueryClient();
  return useCallback(
    async (task) => {
      const info = await backend.continue_task({ session_id: task.child_session_id });
      void client.invalidateQueries({ queryKey: taskKeys.session(task.parent_session_id) });
      return info;
    },
    [backend, client],
  );
}

/** Says what happened to an interrupted call and refreshes the session's list. */
export function useReconcileCall(): (toolCallId: number, choice: ReconcileChoice) => Promise<InterruptedCall> {
  const backend = useBackend();
  const client = useQueryClient();
  return useCallback(
    async (toolCallId, choice) => {
      try {
        return await backend.reconcile_call({ tool_call_id: toolCallId, choice });
      } finally {
        void client.invalidateQueries({ queryKey: interruptedKeys.all });
      }
    },
    [backend, client],
  );
}

/** Ends a bypass and refreshes every bypass list. */
export function useRevokeBypass(): (id: number) => Promise<BypassView> {
  const backend = useBackend();
  const client = useQueryClient();
  return useCallback(
    async (id) => {
      try {
        return await backend.revoke_bypass({ id });
      } finally {
        void client.invalidateQueries({ queryKey: bypassKeys.all });
      }
    },
    [backend, client],
  );
}

/** Renames a session (null or blank clears the name) and refreshes the lists and its detail. */
export function useRenameSession(): (sessionId: number, title: string | null) => Promise<SessionMeta> {
  const backend = useBackend();
  const client = useQueryClient();
  return useCallback(
    async (sessionId, title) => {
      try {
        return await backend.rename_session({ session_id: sessionId, title });
      } finally {
        void client.invalidateQueries({ queryKey: sessionKeys.all });
      }
    },
    [backend, client],
  );
}

/** Every approval waiting for a human, across sessions; also feeds the sidebar badge. */
export function useInbox(): UseQueryResult<Inbox, ApiError> & { count: number | null } {
  const backend = useBackend();
  const result = useQuery<Inbox, ApiError>({
    queryKey: inboxKeys.all,
    queryFn: () => backend.inbox({}),
    // Events cover live changes; the slow poll catches decisions made by the CLI or a restart.
    refetchInterval: 10_000,
  });
  return Object.assign(result, { count: result.data ? result.data.total : null });
}

export function useSessions(query: SessionListQuery): UseQueryResult<Page<SessionSummary>, ApiError> {
  const backend = useBackend();
  return useQuery<Page<SessionSummary>, ApiError>({
    queryKey: sessionKeys.list(query),
    queryFn: () => backend.list_sessions({ query }),
    // Keep the current page on screen while the next one loads, so pagination does not flash.
    placeholderData: keepPreviousData,
  });
}

/** Clients in fallback order, data dir and config path. */
export function useSettings(): UseQueryResult<SettingsView, ApiError> {
  const backend = useBackend();
  return useQuery<SettingsView, ApiError>({
    queryKey: settingsKeys.view,
    queryFn: () => backend.settings({}),
  });
}

export function useApprovalRules(): UseQueryResult<ApprovalRuleView[], ApiError> {
  const backend = useBackend();
  return useQuery<ApprovalRuleView[], ApiError>({
    queryKey: settingsKeys.rules,
    queryFn: () => backend.approval_rules({}),
  });
}

/** The logged provider request of one round; only fetched while `enabled` (the row is open). */
export function useLlmRequest(messageId: number, enabled: boolean): UseQueryResult<JsonValue, ApiError> {
  const backend = useBackend();
  return useQuery<JsonValue, ApiError>({
    queryKey: settingsKeys.request(messageId),
    queryFn: () => backend.llm_request({ message_id: messageId }),
    enabled,
    // A logged request never changes; a missing one stays missing until the log is switched on.
    staleTime: Infinity,
    retry: false,
  });
}

export interface SettingsActions {
  /** `revision`: the view's the list came from; a file changed since is refused (`conflict`). */
  saveClients(clients: LlmClientInput[], fallback: string[], revision: string): Promise<SettingsView>;
  setApiKey(client: string, key: string | null): Promise<void>;
  testConnection(client: string): Promise<ConnectionTest>;
  saveRule(id: number | null, input: ApprovalRuleInput): Promise<ApprovalRuleView>;
  deleteRule(id: number): Promise<void>;
}

/** Settings writes; each keeps the cached settings and rules in step with what the engine stored. */
export function useSettingsActions(): SettingsActions {
  const backend = useBackend();
  const client = useQueryClient();
  return useMemo<SettingsActions>(
    () => ({
    async saveClients(clients, fallback, revision) {
      try {
        const view = await backend.save_llm_clients({ clients, fallback, revision });
        client.setQueryData(settingsKeys.view, view);
        return view;
      } catch (e) {
        // The file changed under the page: show what it holds now.
        if (toApiError(e).code === "conflict") void client.invalidateQueries({ queryKey: settingsKeys.view });
        throw e;
      }
    },
    async setApiKey(name, key) {
      try {
        await backend.set_api_key({ client: name, key });
      } finally {
        // `has_api_key` is computed by the engine; ask again rather than guess.
        void client.invalidateQueries({ queryKey: settingsKeys.view });
      }
    },
    testConnection: (name) => backend.test_connection({ client: name }),
    async saveRule(id, input) {
      try {
        return await backend.save_approval_rule({ id, input });
      } finally {
        void client.invalidateQueries({ queryKey: settingsKeys.rules });
      }
    },
    async deleteRule(id) {
      try {
        await backend.delete_approval_rule({ id });
      } finally {
        void client.invalidateQueries({ queryKey: settingsKeys.rules });
      }
    },
  }),
    [backend, client],
  );
}
