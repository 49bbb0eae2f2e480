// The contract every engine transport implements: the generated `Api` (one method per operation
// of the table in crates/skald-api) plus the event stream. Pages only ever see this interface.
import type { ApiError, ErrorCode, EventEnvelope } from "./bindings";
import { ERROR_CODES, type Api } from "./api";

export type BackendKind = "tauri" | "web";

export interface Backend extends Api {
  readonly kind: BackendKind;
  /** Starts delivering engine events; the returned function stops it. */
  subscribe(onEvent: (envelope: EventEnvelope) => void): () => void;
}

const KNOWN_CODES: ReadonlySet<string> = new Set<ErrorCode>(ERROR_CODES);

export function isApiError(value: unknown): value is ApiError {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.code === "string" && KNOWN_CODES.has(v.code) && typeof v.message === "string";
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
