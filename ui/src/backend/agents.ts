// Agent definitions: the list Settings and the chat's picker show, and the edits Settings makes.
import { useQuery, useQueryClient, type UseQueryResult } from "@tanstack/react-query";
import { useMemo } from "react";
import { useBackend } from "./index";
import type { AgentDefinition, AgentDetail, AgentSummary, ApiError } from "./bindings";

export const agentKeys = {
  all: ["agents"] as const,
  list: ["agents", "list"] as const,
  detail: (id: string) => ["agents", "detail", id] as const,
};

/** Every agent, by id; a broken one carries its error. Files edited by hand show on the next read. */
export function useAgents(): UseQueryResult<AgentSummary[], ApiError> {
  const backend = useBackend();
  return useQuery<AgentSummary[], ApiError>({
    queryKey: agentKeys.list,
    queryFn: () => backend.list_agents({}),
  });
}

/** One agent's meta and AGENT.md, read when an edit form opens. */
export function useAgentDetail(id: string | null): UseQueryResult<AgentDetail, ApiError> {
  const backend = useBackend();
  return useQuery<AgentDetail, ApiError>({
    queryKey: agentKeys.detail(id ?? ""),
    queryFn: () => backend.get_agent({ id: id ?? "" }),
    enabled: id !== null,
    staleTime: 0,
  });
}

export interface AgentActions {
  save(id: string, meta: AgentDefinition, prompt: string): Promise<AgentSummary>;
  remove(id: string): Promise<void>;
}

export function useAgentActions(): AgentActions {
  const backend = useBackend();
  const client = useQueryClient();
  return useMemo<AgentActions>(
    () => ({
      async save(id, meta, prompt) {
        try {
          return await backend.save_agent({ id, meta, prompt });
        } finally {
          void client.invalidateQueries({ queryKey: agentKeys.all });
        }
      },
      async remove(id) {
        try {
          await backend.delete_agent({ id });
        } finally {
          void client.invalidateQueries({ queryKey: agentKeys.all });
        }
      },
    }),
    [backend, client],
  );
}
