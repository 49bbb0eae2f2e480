// Notices for the home conversation: each scheduled job's run that ended, with the first lines of
// its answer or why it did not finish, and its session. Written by whichever process ended the
// run (`home_notice`); dismissed from any window (`home_notice_dismissed`); both read again here.
import { useQuery, useQueryClient, type UseQueryResult } from "@tanstack/react-query";
import { useCallback } from "react";
import { useBackend, useEngineEvents } from "./index";
import type { ApiError, HomeNotice } from "./bindings";

/** The chat that is home: background work reports there (the reference's default home source). */
export const HOME_SOURCE = "web";

export const noticeKeys = { all: ["home_notices"] as const };

/** The notices not dismissed, newest first, kept current by the engine's events. */
export function useHomeNotices(enabled = true): UseQueryResult<HomeNotice[], ApiError> {
  const backend = useBackend();
  const client = useQueryClient();
  useEngineEvents(({ event }) => {
    if (!enabled) return;
    if (event.type === "home_notice" || event.type === "home_notice_dismissed" || event.type === "resync") {
      void client.invalidateQueries({ queryKey: noticeKeys.all });
    }
  });
  return useQuery<HomeNotice[], ApiError>({
    queryKey: noticeKeys.all,
    queryFn: () => backend.home_notices({}),
    enabled,
  });
}

/** Dismisses a notice; the list is read again whether it worked or not. */
export function useDismissNotice(): (noticeId: number) => Promise<void> {
  const backend = useBackend();
  const client = useQueryClient();
  return useCallback(
    async (noticeId: number) => {
      try {
        await backend.dismiss_home_notice({ notice_id: noticeId });
      } finally {
        void client.invalidateQueries({ queryKey: noticeKeys.all });
      }
    },
    [backend, client],
  );
}
