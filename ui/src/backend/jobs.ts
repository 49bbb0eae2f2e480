// Scheduled jobs: the list, a job's runs, the schedule preview and the actions of the Jobs page.
// Every process announces a run recorded or changing state (`job_run_update`) and a job added,
// edited, switched on or off or deleted (`job_changed`, also from `skald jobs` in a terminal);
// the open page reads the jobs and that job's runs again when it hears one. Nothing polls.
import { keepPreviousData, useQuery, useQueryClient, type UseQueryResult } from "@tanstack/react-query";
import { useMemo } from "react";
import { useBackend, useEngineEvents } from "./index";
import type { ApiError, JobDeleted, JobInfo, JobInput, JobRunInfo, JobSchedule, SchedulePreview } from "./bindings";

export const jobKeys = {
  all: ["jobs"] as const,
  list: ["jobs", "list"] as const,
  runs: (jobId: number) => ["jobs", "runs", jobId] as const,
  preview: (schedule: JobSchedule, timezone: string) => ["job_preview", schedule, timezone] as const,
};

/** Reads the jobs again when one changes, and a run's history when a run is recorded or moves on. */
export function useJobsLive(): void {
  const client = useQueryClient();
  useEngineEvents(({ event }) => {
    if (event.type === "job_run_update") {
      void client.invalidateQueries({ queryKey: jobKeys.list });
      void client.invalidateQueries({ queryKey: jobKeys.runs(event.run.job_id) });
    } else if (event.type === "job_changed") {
      void client.invalidateQueries({ queryKey: jobKeys.list });
    } else if (event.type === "resync") {
      // Events were missed: any run may have moved on.
      void client.invalidateQueries({ queryKey: jobKeys.all });
    }
  });
}

export function useJobs(): UseQueryResult<JobInfo[], ApiError> {
  const backend = useBackend();
  return useQuery<JobInfo[], ApiError>({
    queryKey: jobKeys.list,
    queryFn: () => backend.list_jobs({}),
  });
}

/** A job's runs, newest first; `null` fetches nothing. */
export function useJobRuns(jobId: number | null): UseQueryResult<JobRunInfo[], ApiError> {
  const backend = useBackend();
  return useQuery<JobRunInfo[], ApiError>({
    queryKey: jobKeys.runs(jobId ?? -1),
    queryFn: () => backend.list_job_runs({ job_id: jobId as number }),
    enabled: jobId !== null,
  });
}

/** The schedule in words and its next fire times; `null` (nothing to check yet) fetches nothing. */
export function useSchedulePreview(schedule: JobSchedule | null, timezone: string): UseQueryResult<SchedulePreview, ApiError> {
  const backend = useBackend();
  return useQuery<SchedulePreview, ApiError>({
    queryKey: schedule ? jobKeys.preview(schedule, timezone) : ["job_preview", null],
    queryFn: () => backend.preview_schedule({ schedule: schedule as JobSchedule, timezone: timezone.trim() || undefined }),
    enabled: schedule !== null,
    // The last preview stays while the next one loads, so it does not flash at each keystroke.
    placeholderData: keepPreviousData,
    // A wrong schedule stays wrong: say so at once instead of asking again.
    retry: false,
    staleTime: 30_000,
  });
}

export interface JobActions {
  add(job: JobInput): Promise<JobInfo>;
  edit(jobId: number, job: JobInput): Promise<JobInfo>;
  remove(jobId: number, removeHistory: boolean): Promise<JobDeleted>;
  setEnabled(jobId: number, enabled: boolean): Promise<JobInfo>;
  runNow(jobId: number): Promise<JobRunInfo>;
  kill(runId: number): Promise<JobRunInfo>;
}

/** Every job write; each reads the jobs and their runs again, whether it worked or not. */
export function useJobActions(): JobActions {
  const backend = useBackend();
  const client = useQueryClient();
  return useMemo<JobActions>(() => {
    async function refreshing<T>(op: Promise<T>): Promise<T> {
      try {
        return await op;
      } finally {
        void client.invalidateQueries({ queryKey: jobKeys.all });
      }
    }
    return {
      add: (job) => refreshing(backend.add_job({ job })),
      edit: (jobId, job) => refreshing(backend.edit_job({ job_id: jobId, job })),
      remove: (jobId, removeHistory) => refreshing(backend.delete_job({ job_id: jobId, remove_history: removeHistory })),
      setEnabled: (jobId, enabled) => refreshing(backend.set_job_enabled({ job_id: jobId, enabled })),
      runNow: (jobId) => refreshing(backend.run_job_now({ job_id: jobId })),
      kill: (runId) => refreshing(backend.kill_job_run({ run_id: runId })),
    };
  }, [backend, client]);
}
