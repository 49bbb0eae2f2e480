// TIC ticks: the settings in force, the events waiting and each tick (its events on demand).
// There is no tick event on the bus: the page reads again when a turn ends anywhere (a tick's
// turn is one), and every few seconds while a tick runs.
import { useQuery, useQueryClient, type UseQueryResult } from "@tanstack/react-query";
import { useMemo } from "react";
import { useBackend, useEngineEvents } from "./index";
import type { ApiError, TicStatus, TicTickDetail, TicTickInfo } from "./bindings";

export const ticKeys = {
  all: ["tic"] as const,
  status: ["tic", "status"] as const,
  tick: (id: number) => ["tic", "tick", id] as const,
};

const WHILE_RUNNING_MS = 3000;

export function useTicStatus(): UseQueryResult<TicStatus, ApiError> {
  const backend = useBackend();
  const client = useQueryClient();
  useEngineEvents(({ event }) => {
    if (event.type === "turn_ended" || event.type === "resync") {
      void client.invalidateQueries({ queryKey: ticKeys.status });
    }
  });
  return useQuery<TicStatus, ApiError>({
    queryKey: ticKeys.status,
    queryFn: () => backend.tic_status({}),
    refetchInterval: (q) => (q.state.data?.ticks.some((t) => t.state === "running") ? WHILE_RUNNING_MS : false),
  });
}

/** One tick with its events; `null` fetches nothing. */
export function useTicTick(id: number | null): UseQueryResult<TicTickDetail, ApiError> {
  const backend = useBackend();
  return useQuery<TicTickDetail, ApiError>({
    queryKey: ticKeys.tick(id ?? -1),
    queryFn: () => backend.tic_tick({ tick_id: id as number }),
    enabled: id !== null,
  });
}

export function useRunTic(): () => Promise<TicTickInfo> {
  const backend = useBackend();
  const client = useQueryClient();
  return useMemo(
    () => async () => {
      try {
        return await backend.run_tic({});
      } finally {
        void client.invalidateQueries({ queryKey: ticKeys.status });
      }
    },
    [backend, client],
  );
}
