// The contract every engine transport implements; pages only ever see this interface.
import type {
  ApiError,
  ApprovalRuleInput,
  ApprovalRuleView,
  BypassView,
  CompactResult,
  ConnectionTest,
  Decision,
  DecisionInput,
  ErrorCode,
  EventEnvelope,
  Inbox,
  LlmClientInput,
  Page,
  SendResult,
  SessionDetail,
  SessionListQuery,
  SessionSummary,
  SessionUsage,
  SettingsView,
} from "./bindings";

export type BackendKind = "tauri" | "web";
export type { SendResult };


export interface Backend {
  readonly kind: BackendKind;
  listSessions(query: SessionListQuery): Promise<Page<SessionSummary>>;
  getSession(id: number): Promise<SessionDetail>;
  /** The session a source's chat currently writes to (created on demand by the engine). */
  activeSession(source: string): Promise<number>;
  /**
   * Saves and echoes a message. During a running turn, or while calls wait for a decision
   * (`waiting_for`), it becomes a steer (`steered: true`) folded in later.
   */
  sendMessage(source: string, text: string): Promise<SendResult>;
  /** Cancels the running turn; false when nothing was running. */
  stop(sessionId: number): Promise<boolean>;
  isRunning(sessionId: number): Promise<boolean>;
  /** The last request's size against the model's window, and what the session spent. */
  sessionUsage(sessionId: number): Promise<SessionUsage>;
  /** Summarises the session's older history now; `focus` steers the summary. */
  compact(sessionId: number, focus: string | null): Promise<CompactResult>;
  /** Revokes the tool groups the session's agents activated; resolves to how many. */
  resetTools(sessionId: number): Promise<number>;
  /** Starts a fresh session for the source and returns its id. */
  newSession(source: string): Promise<number>;
  inbox(): Promise<Inbox>;
  decide(toolCallId: number, input: DecisionInput): Promise<Decision>;
  /** Bypasses in force across sessions (the inbox lists them). */
  activeBypasses(): Promise<BypassView[]>;
  /** The session's bypasses in force (the chat shows them). */
  sessionBypasses(sessionId: number): Promise<BypassView[]>;
  /** Ends a bypass now; calls it covered ask again. */
  revokeBypass(id: number): Promise<BypassView>;
  /** The LLM clients (config file and env), fallback order, data dir and config path. */
  settings(): Promise<SettingsView>;
  /** Replaces the config-file clients and the fallback order; env clients are not part of it. */
  saveClients(clients: LlmClientInput[], fallback: string[]): Promise<SettingsView>;
  /** Stores (or with `null` removes) a client's API key in the OS keychain. */
  setApiKey(client: string, key: string | null): Promise<void>;
  testConnection(client: string): Promise<ConnectionTest>;
  approvalRules(): Promise<ApprovalRuleView[]>;
  /** Creates a rule (`id` null) or replaces rule `id`. */
  saveRule(id: number | null, input: ApprovalRuleInput): Promise<ApprovalRuleView>;
  deleteRule(id: number): Promise<void>;
  /** The logged request body the model received for the round that produced this message. */
  llmRequest(messageId: number): Promise<unknown>;
  /** Starts delivering engine events; the returned function stops it. */
  subscribe(onEvent: (envelope: EventEnvelope) => void): () => void;
}

const ERROR_CODES: ReadonlySet<string> = new Set<ErrorCode>([
  "not_found",
  "invalid_input",
  "conflict",
  "config",
  "storage",
  "llm",
  "cancelled",
  "unauthorized",
  "internal",
]);

export function isApiError(value: unknown): value is ApiError {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.code === "string" && ERROR_CODES.has(v.code) && typeof v.message === "string";
}

/** Normalises whatever a transport threw into the one error shape pages switch on. */
export function toApiError(error: unknown, fallback: ErrorCode = "internal"): ApiError {
  if (isApiError(error)) return { code: error.code, message: error.message };
  if (error instanceof Error) return { code: fallback, message: error.message };
  if (typeof error === "string" && error.length > 0) return { code: fallback, message: error };
  return { code: fallback, message: "Unexpected error" };
}

/** A runtime check on incoming events, so a malformed frame is dropped instead of crashing a page. */
export function isEventEnvelope(value: unknown): value is EventEnvelope {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  const event = v.event as Record<string, unknown> | null | undefined;
  return typeof event === "object" && event !== null && typeof event.type === "string";
}
