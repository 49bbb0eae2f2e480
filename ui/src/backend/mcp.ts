// MCP servers of config.yml as Settings shows them: state, error, tools once started.
import { useMutation, useQuery, useQueryClient, type UseQueryResult } from "@tanstack/react-query";
import { useBackend } from "./index";
import type { ApiError, McpServerInfo } from "./bindings";

export const mcpKeys = {
  all: ["mcp_servers"] as const,
};

/** The configured servers as they stand (none is started by reading the list). */
export function useMcpServers(): UseQueryResult<McpServerInfo[], ApiError> {
  const backend = useBackend();
  return useQuery<McpServerInfo[], ApiError>({
    queryKey: mcpKeys.all,
    queryFn: () => backend.list_mcp_servers({ start: false, server: null }),
  });
}

/** Starts the enabled servers (a failed one is tried again) and shows what they answered. */
export function useStartMcpServers() {
  const backend = useBackend();
  const client = useQueryClient();
  return useMutation<McpServerInfo[], ApiError>({
    mutationFn: () => backend.list_mcp_servers({ start: true, server: null }),
    onSuccess: (servers) => client.setQueryData(mcpKeys.all, servers),
  });
}
