// Agent memory: the Markdown files of the data dir's `memory/`, a file's content, the recorded
// writes with their diffs, and the page's actions (save an edit, undo a write). An agent's write
// comes as `file_changed` on its session: the open page reads the files and history again then.
import { useQuery, useQueryClient, type UseQueryResult } from "@tanstack/react-query";
import { useMemo } from "react";
import { useBackend, useEngineEvents } from "./index";
import type { ApiError, MemoryEdit, MemoryFileContent, MemoryFileInfo } from "./bindings";

export const memoryKeys = {
  all: ["memory"] as const,
  files: ["memory", "files"] as const,
  file: (path: string) => ["memory", "file", path] as const,
  history: (path: string | null) => ["memory", "history", path] as const,
};

/** Reads memory again when any file changes (an agent's write arrives as `file_changed`). */
export function useMemoryLive(): void {
  const client = useQueryClient();
  useEngineEvents(({ event }) => {
    if (event.type === "file_changed" || event.type === "resync") {
      void client.invalidateQueries({ queryKey: memoryKeys.all });
    }
  });
}

export function useMemoryFiles(): UseQueryResult<MemoryFileInfo[], ApiError> {
  const backend = useBackend();
  return useQuery<MemoryFileInfo[], ApiError>({
    queryKey: memoryKeys.files,
    queryFn: () => backend.list_memory_files({}),
  });
}

/** A file's content; `null` fetches nothing. */
export function useMemoryFile(path: string | null): UseQueryResult<MemoryFileContent, ApiError> {
  const backend = useBackend();
  return useQuery<MemoryFileContent, ApiError>({
    queryKey: memoryKeys.file(path ?? ""),
    queryFn: () => backend.read_memory_file({ path: path as string }),
    enabled: path !== null,
  });
}

/** The recorded writes, newest first: of `path`, or of every file when `null`. */
export function useMemoryHistory(path: string | null): UseQueryResult<MemoryEdit[], ApiError> {
  const backend = useBackend();
  return useQuery<MemoryEdit[], ApiError>({
    queryKey: memoryKeys.history(path),
    queryFn: () => backend.memory_history(path === null ? {} : { path }),
  });
}

export interface MemoryActions {
  save(path: string, content: string): Promise<MemoryFileContent>;
  undo(editId: number): Promise<MemoryEdit>;
}

/** Every memory write; each reads the files and history again, whether it worked or not. */
export function useMemoryActions(): MemoryActions {
  const backend = useBackend();
  const client = useQueryClient();
  return useMemo<MemoryActions>(() => {
    async function refreshing<T>(op: Promise<T>): Promise<T> {
      try {
        return await op;
      } finally {
        void client.invalidateQueries({ queryKey: memoryKeys.all });
      }
    }
    return {
      save: (path, content) => refreshing(backend.save_memory_file({ path, content })),
      undo: (editId) => refreshing(backend.undo_memory_edit({ edit_id: editId })),
    };
  }, [backend, client]);
}
