// Agent memory for the mock backend: files in a map, each write recorded with a line diff, and
// the engine's rules the Memory page shows (a path ending in .md without `..`, the size limit,
// undo refused once the file changed).
import type { ApiError, DiffLine, FileDiff, MemoryEdit, MemoryFileContent, MemoryFileInfo } from "../backend";
import type { MemoryHistoryParams, ReadMemoryFileParams, SaveMemoryFileParams, UndoMemoryEditParams } from "../backend/api";

const invalid = (message: string): ApiError => ({ code: "invalid_input", message });
const notFound = (message: string): ApiError => ({ code: "not_found", message });

const lines = (text: string | null) => (text ? text.replace(/\n$/, "").split("\n") : []);

/** A whole-file diff: every old line deleted, every new one inserted (enough for the page). */
export function wholeDiff(path: string, before: string | null, after: string): FileDiff {
  const old = lines(before);
  const now = lines(after);
  const body: DiffLine[] = [
    ...old.map((text, i): DiffLine => ({ tag: "delete", old_line: i + 1, new_line: null, text, spans: [] })),
    ...now.map((text, i): DiffLine => ({ tag: "insert", old_line: null, new_line: i + 1, text, spans: [] })),
  ];
  const unified = [`--- a/${path}`, `+++ b/${path}`, ...old.map((l) => `-${l}`), ...now.map((l) => `+${l}`)].join("\n");
  return {
    path,
    kind: before === null ? "create" : "modify",
    hunks: [{ old_start: 1, old_lines: old.length, new_start: 1, new_lines: now.length, lines: body }],
    added: now.length,
    removed: old.length,
    unified,
    summary: `+${now.length} -${old.length}`,
    crlf: false,
    old_missing_newline: false,
    new_missing_newline: false,
  };
}

type Stored = { edit: MemoryEdit; before: string | null; after: string };

export class MockMemory {
  files = new Map<string, string>();
  edits: Stored[] = [];
  maxBytes = 65536;
  private nextId = 1;

  private check(path: string): string {
    if (!path.endsWith(".md") || path.startsWith("/") || path.split("/").includes("..")) {
      throw invalid(`\`${path}\` is not a memory file path: use a relative path inside the memory directory ending in .md`);
    }
    return path.replace(/^memory\//, "");
  }

  /** Records a write as the engine does; `agent` names the agent and its session. */
  write(path: string, content: string, agent: { agentId: string; sessionId: number; callId: number } | null): MemoryEdit {
    const before = this.files.get(path) ?? null;
    this.files.set(path, content);
    const edit: MemoryEdit = {
      id: this.nextId++,
      path,
      author: agent ? "agent" : "user",
      session_id: agent?.sessionId ?? null,
      tool_call_id: agent?.callId ?? null,
      agent_id: agent?.agentId ?? null,
      created_file: before === null,
      diff: wholeDiff(path, before, content),
      created_at: "2026-12-05T12:00:00.000Z",
      undone_at: null,
    };
    this.edits.unshift({ edit, before, after: content });
    return edit;
  }

  list_memory_files = async (): Promise<MemoryFileInfo[]> =>
    [...this.files.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([path, content]) => ({ path, size: new TextEncoder().encode(content).length, modified_at: null }));

  read_memory_file = async ({ path }: ReadMemoryFileParams): Promise<MemoryFileContent> => {
    const p = this.check(path);
    const content = this.files.get(p);
    if (content === undefined) throw notFound(`memory file ${p} does not exist`);
    return { path: p, content, max_bytes: this.maxBytes };
  };

  memory_history = async ({ path }: MemoryHistoryParams): Promise<MemoryEdit[]> =>
    this.edits.filter((s) => !path || s.edit.path === path).map((s) => s.edit);

  save_memory_file = async ({ path, content }: SaveMemoryFileParams): Promise<MemoryFileContent> => {
    const p = this.check(path);
    const len = new TextEncoder().encode(content).length;
    if (len > this.maxBytes) throw invalid(`${p} would be ${len} bytes, more than the ${this.maxBytes} bytes a memory file may hold`);
    if (this.files.get(p) !== content) this.write(p, content, null);
    return { path: p, content, max_bytes: this.maxBytes };
  };

  undo_memory_edit = async ({ edit_id }: UndoMemoryEditParams): Promise<MemoryEdit> => {
    const stored = this.edits.find((s) => s.edit.id === edit_id);
    if (!stored) throw notFound(`no memory edit ${edit_id}`);
    const { edit } = stored;
    if (edit.undone_at) throw { code: "conflict", message: `edit ${edit_id} of ${edit.path} was already undone` } satisfies ApiError;
    if (this.files.get(edit.path) !== stored.after) {
      throw {
        code: "conflict",
        message: `${edit.path} changed since this edit, so undoing it would lose what changed. Edit the file by hand instead.`,
      } satisfies ApiError;
    }
    if (stored.before === null) this.files.delete(edit.path);
    else this.files.set(edit.path, stored.before);
    stored.edit = { ...edit, undone_at: "2026-12-05T12:05:00.000Z" };
    return stored.edit;
  };
}
