// The UI's single door to the engine: transport selection, React provider and data hooks.
import {
  QueryClient,
  QueryClientProvider,
  keepPreviousData,
  useQuery,
  useQueryClient,
  type UseQueryResult,
} from "@tanstack/react-query";
import { createContext, createElement, useContext, useEffect, useState, type ReactNode } from "react";
import type {
  ApiError,
  EventEnvelope,
  Page,
  SessionDetail,
  SessionListQuery,
  SessionSummary,
} from "./bindings";
import { createTauriBackend } from "./tauri";
import type { Backend } from "./types";
import { createWebBackend } from "./web";

export type * from "./bindings";
export type { Backend, BackendKind } from "./types";
export { isApiError, toApiError } from "./types";

/** Tauri injects `__TAURI_INTERNALS__` before any page script runs; a plain browser has none. */
export function detectBackend(win: Window = window): Backend {
  return "__TAURI_INTERNALS__" in win ? createTauriBackend() : createWebBackend();
}

export const sessionKeys = {
  all: ["sessions"] as const,
  list: (query: SessionListQuery) => ["sessions", "list", query] as const,
  detail: (id: number) => ["sessions", "detail", id] as const,
};

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

const BackendContext = createContext<Backend | null>(null);

export interface BackendProviderProps {
  backend: Backend;
  queryClient?: QueryClient;
  children?: ReactNode;
}

function EventBridge({ backend, children }: { backend: Backend; children?: ReactNode }) {
  const client = useQueryClient();
  useEffect(
    () =>
      backend.subscribe((envelope: EventEnvelope) => {
        if (envelope.event.type === "sessions_changed") {
          void client.invalidateQueries({ queryKey: sessionKeys.all });
        }
      }),
    [backend, client],
  );
  return createElement(BackendContext.Provider, { value: backend }, children);
}

export function BackendProvider({ backend, queryClient, children }: BackendProviderProps) {
  const [ownClient] = useState(() => queryClient ?? createQueryClient());
  return createElement(
    QueryClientProvider,
    { client: queryClient ?? ownClient },
    createElement(EventBridge, { backend }, children),
  );
}

export function useBackend(): Backend {
  const backend = useContext(BackendContext);
  if (!backend) throw new Error("useBackend must be used inside <BackendProvider>");
  return backend;
}

export function useSessions(query: SessionListQuery): UseQueryResult<Page<SessionSummary>, ApiError> {
  const backend = useBackend();
  return useQuery<Page<SessionSummary>, ApiError>({
    queryKey: sessionKeys.list(query),
    queryFn: () => backend.listSessions(query),
    // Keep the current page on screen while the next one loads, so pagination does not flash.
    placeholderData: keepPreviousData,
  });
}

export function useSession(id: number): UseQueryResult<SessionDetail, ApiError> {
  const backend = useBackend();
  return useQuery<SessionDetail, ApiError>({
    queryKey: sessionKeys.detail(id),
    queryFn: () => backend.getSession(id),
  });
}
