// #memory: the agents' long-term memory (Markdown files in the data dir's `memory/`). The files on
// the left; the open file (`#memory?file=notes.md`) editable; below, every recorded write of that
// file (or of all files) as a diff, with who wrote it and an Undo. Live through `file_changed`.
import { useState } from "react";
import { formatRoute, useNavigate } from "../app/route";
import {
  toApiError,
  useMemoryActions,
  useMemoryFile,
  useMemoryFiles,
  useMemoryHistory,
  useMemoryLive,
  type MemoryEdit,
  type MemoryFileContent,
} from "../backend";
import { DiffViewer } from "../components/DiffViewer";
import { formatTimestamp } from "../components/format";
import { Empty, ErrorView, Loading } from "../components/StatusViews";

type Note = { text: string; error: boolean };

function NoteLine({ note }: { note: Note | null }) {
  if (!note) return null;
  return (
    <p className={note.error ? "form-error" : "muted"} role={note.error ? "alert" : "status"}>
      {note.text}
    </p>
  );
}

/** The open file's text, editable. The draft follows the file while it is not being edited. */
function Editor({ file }: { file: MemoryFileContent }) {
  const actions = useMemoryActions();
  const [base, setBase] = useState(file.content);
  const [draft, setDraft] = useState(file.content);
  const [note, setNote] = useState<Note | null>(null);
  const [saving, setSaving] = useState(false);
  // The file changed underneath (an agent's write, an undo): an untouched draft takes it on.
  if (file.content !== base && draft === base) {
    setBase(file.content);
    setDraft(file.content);
  }
  const dirty = draft !== file.content;
  const bytes = new TextEncoder().encode(draft).length;
  const over = bytes > file.max_bytes;
  const stale = file.content !== base;

  async function save() {
    setSaving(true);
    setNote(null);
    try {
      const saved = await actions.save(file.path, draft);
      setBase(saved.content);
      setDraft(saved.content);
      setNote({ text: "Saved.", error: false });
    } catch (e) {
      setNote({ text: toApiError(e).message, error: true });
    } finally {
      setSaving(false);
    }
  }

  const id = "memory-content";
  return (
    <form
      className="memory-editor"
      onSubmit={(e) => {
        e.preventDefault();
        void save();
      }}
    >
      <div className="field">
        <label htmlFor={id}>Content of {file.path}</label>
        <textarea id={id} className="memory-text" value={draft} spellCheck={false} onChange={(e) => setDraft(e.target.value)} rows={14} />
      </div>
      <div className="memory-editor-footer">
        <span className={over ? "form-error small" : "muted small"}>
          {bytes.toLocaleString()} of {file.max_bytes.toLocaleString()} bytes
        </span>
        <button type="submit" className="button button-primary" disabled={!dirty || over || saving}>
          Save
        </button>
        {dirty ? (
          <button
            type="button"
            className="button"
            onClick={() => {
              setBase(file.content);
              setDraft(file.content);
            }}
          >
            Discard changes
          </button>
        ) : null}
      </div>
      {stale ? <p className="form-error">The file changed while you were editing it; saving replaces that change.</p> : null}
      <NoteLine note={note} />
    </form>
  );
}

function EditItem({ edit }: { edit: MemoryEdit }) {
  const actions = useMemoryActions();
  const [note, setNote] = useState<Note | null>(null);
  const [busy, setBusy] = useState(false);
  const who =
    edit.author === "agent" ? (
      <>
        agent <strong>{edit.agent_id ?? "unknown"}</strong>
        {edit.session_id !== null ? (
          <>
            {" in "}
            <a href={formatRoute({ name: "session", id: edit.session_id, focus: edit.tool_call_id ? { type: "tool", id: edit.tool_call_id } : null })}>
              session {edit.session_id}
            </a>
          </>
        ) : null}
      </>
    ) : (
      <>you</>
    );

  async function undo() {
    setBusy(true);
    setNote(null);
    try {
      await actions.undo(edit.id);
      setNote({ text: "Undone.", error: false });
    } catch (e) {
      setNote({ text: toApiError(e).message, error: true });
    } finally {
      setBusy(false);
    }
  }

  return (
    <li className="memory-edit" data-edit-id={edit.id}>
      <div className="memory-edit-head">
        <span>
          <code>{edit.path}</code> {edit.created_file ? "created" : "edited"} by {who}
          {", "}
          <time dateTime={edit.created_at}>{formatTimestamp(edit.created_at)}</time>
        </span>
        <span className="badges">
          {edit.undone_at ? <span className="badge">undone</span> : null}
        </span>
        <button
          type="button"
          className="button button-small"
          aria-label={`Undo edit ${edit.id} of ${edit.path}`}
          disabled={edit.undone_at !== null || busy}
          onClick={() => void undo()}
        >
          Undo
        </button>
      </div>
      <DiffViewer diff={edit.diff} />
      <NoteLine note={note} />
    </li>
  );
}

function History({ path }: { path: string | null }) {
  const { data, error, isPending, isError, refetch } = useMemoryHistory(path);
  const title = path ? `Edits of ${path}` : "Edits of every file";
  let body;
  if (isPending) body = <Loading label="Loading the edits…" />;
  else if (isError) body = <ErrorView title="Could not load the edits" error={error} onRetry={() => void refetch()} />;
  else if (data.length === 0) body = <Empty title="No recorded edits">What an agent writes to memory shows here, with a way to undo it.</Empty>;
  else
    body = (
      <ul className="memory-edits">
        {data.map((edit) => (
          <EditItem key={edit.id} edit={edit} />
        ))}
      </ul>
    );
  return (
    <section className="memory-history" aria-labelledby="memory-history-title">
      <h2 id="memory-history-title">{title}</h2>
      {body}
    </section>
  );
}

function OpenFile({ path }: { path: string }) {
  const { data, error, isPending, isError, refetch } = useMemoryFile(path);
  if (isPending) return <Loading label={`Loading ${path}…`} />;
  if (isError) {
    return error.code === "not_found" ? (
      <Empty title={`${path} does not exist`}>It may have been deleted, or an undo removed the edit that created it.</Empty>
    ) : (
      <ErrorView title={`Could not read ${path}`} error={error} onRetry={() => void refetch()} />
    );
  }
  return <Editor key={data.path} file={data} />;
}

function NewFile({ onCreated }: { onCreated: (path: string) => void }) {
  const actions = useMemoryActions();
  const [path, setPath] = useState("");
  const [note, setNote] = useState<Note | null>(null);
  return (
    <form
      className="memory-new"
      onSubmit={(e) => {
        e.preventDefault();
        setNote(null);
        actions.save(path.trim(), "").then(
          (saved) => {
            setPath("");
            onCreated(saved.path);
          },
          (err: unknown) => setNote({ text: toApiError(err).message, error: true }),
        );
      }}
    >
      <div className="field">
        <label htmlFor="memory-new-path">New file</label>
        <div className="memory-new-row">
          <input id="memory-new-path" placeholder="notes.md" value={path} onChange={(e) => setPath(e.target.value)} />
          <button type="submit" className="button button-small" disabled={path.trim() === ""}>
            Create
          </button>
        </div>
      </div>
      <NoteLine note={note} />
    </form>
  );
}

export function MemoryPage({ file }: { file: string | null }) {
  useMemoryLive();
  const { data, error, isPending, isError, refetch } = useMemoryFiles();
  const navigate = useNavigate();
  const open = (path: string | null) => navigate(formatRoute({ name: "memory", file: path }), { replace: true });

  let files;
  if (isPending) files = <Loading label="Loading memory…" />;
  else if (isError) files = <ErrorView title="Could not load the memory files" error={error} onRetry={() => void refetch()} />;
  else if (data.length === 0) files = <Empty title="No memory files yet">Agents keep notes here with memory_write; you can add one too.</Empty>;
  else
    files = (
      <ul className="memory-files">
        {data.map((f) => (
          <li key={f.path}>
            <a
              href={formatRoute({ name: "memory", file: f.path })}
              aria-current={f.path === file ? "page" : undefined}
              className="memory-file-link"
            >
              <span>{f.path}</span>
              <span className="muted small">{f.size.toLocaleString()} B</span>
            </a>
          </li>
        ))}
      </ul>
    );

  return (
    <section className="page" aria-labelledby="page-title">
      <header className="page-header">
        <h1 id="page-title">Memory</h1>
        <p className="muted">
          Notes agents keep across sessions, injected into the agents that name them in Settings. Every write is recorded
          with its diff; undo one that should not have been remembered.
        </p>
      </header>
      <div className="memory-layout">
        <nav className="memory-list" aria-label="Memory files">
          {files}
          {file ? (
            <button type="button" className="button button-small" onClick={() => open(null)}>
              Show every file's edits
            </button>
          ) : null}
          <NewFile onCreated={(path) => open(path)} />
        </nav>
        <div className="memory-main">
          {file ? <OpenFile path={file} /> : <p className="muted">Choose a file to read or edit it.</p>}
          <History path={file} />
        </div>
      </div>
    </section>
  );
}
