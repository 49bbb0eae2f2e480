// MCP servers of config.yml as Settings shows them: state, error, tools once started.
import { useMutation, useQuery, useQueryClient, type UseQueryResult } from "@tanstack/react-query";
import { useMemo } from "react";
import { useBackend } from "./index";
import type { ApiError, McpAuthorization, McpServerInfo, McpServerInput } from "./bindings";

export const mcpKeys = {
  all: ["mcp_servers"] as const,
};

/** How often the list is read again while a server waits for the browser's authorization. */
export const AUTHORIZING_POLL_MS = 2000;

/** The configured servers as they stand (none is started by reading the list); read again every
 * few seconds while one waits for its authorization in the browser. */
export function useMcpServers(): UseQueryResult<McpServerInfo[], ApiError> {
  const backend = useBackend();
  return useQuery<McpServerInfo[], ApiError>({
    queryKey: mcpKeys.all,
    queryFn: () => backend.list_mcp_servers({ start: false, server: null }),
    refetchInterval: (query) =>
      query.state.data?.some((s) => s.state === "authorizing") ? AUTHORIZING_POLL_MS : false,
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

export interface McpActions {
  add(server: McpServerInput): Promise<McpServerInfo[]>;
  remove(name: string): Promise<McpServerInfo[]>;
  setEnabled(name: string, enabled: boolean): Promise<McpServerInfo[]>;
  /** Starts a server's OAuth authorization: the page to open in the browser. */
  authorize(name: string): Promise<McpAuthorization>;
}

/** Edits of `mcp.servers` in config.yml; each answers the servers as they stand after it. */
export function useMcpActions(): McpActions {
  const backend = useBackend();
  const client = useQueryClient();
  return useMemo<McpActions>(() => {
    const show = (servers: McpServerInfo[]) => {
      client.setQueryData(mcpKeys.all, servers);
      return servers;
    };
    return {
      add: (server) => backend.add_mcp_server({ server }).then(show),
      remove: (name) => backend.remove_mcp_server({ name }).then(show),
      setEnabled: (name, enabled) => backend.set_mcp_server_enabled({ name, enabled }).then(show),
      authorize: (name) =>
        backend.authorize_mcp_server({ name }).then(async (started) => {
          await client.invalidateQueries({ queryKey: mcpKeys.all });
          return started;
        }),
    };
  }, [backend, client]);
}
