// Agents: the data dir's agents/<id>/ folders over the built-ins, with create, edit and delete.
import { useId, useState, type FormEvent } from "react";
import {
  toApiError,
  useAgentActions,
  useAgentDetail,
  useAgents,
  type AgentDefinition,
  type AgentStrength,
  type AgentSummary,
  type AgentType,
} from "../../backend";
import { FormFooter } from "../../components/FormFooter";
import { ErrorView, Loading } from "../../components/StatusViews";

export const TYPES: Array<{ value: AgentType; label: string }> = [
  { value: "chat", label: "Chat — talks with you in a session" },
  { value: "task", label: "Task — other agents can delegate to it" },
  { value: "system", label: "System — wired by id, never listed" },
];

const STRENGTHS: AgentStrength[] = ["very_low", "low", "average", "high", "very_high"];

const ID_PATTERN = /^[a-z0-9-]+$/;

const NEW_AGENT: AgentDefinition = {
  name: "",
  description: "",
  friendly_description: null,
  instructions: null,
  type: "task",
  inject_memory: [],
  client: null,
  scope: null,
  strength: null,
};

const orNull = (v: string) => (v.trim() === "" ? null : v.trim());

/** Which model the agent runs on: its pinned client, or automatic with a minimum strength. */
export function modelOf(a: Pick<AgentSummary, "client" | "strength">): string {
  if (a.client) return a.client;
  return a.strength ? `auto, at least ${a.strength.replace("_", " ")}` : "auto";
}

function AgentForm({
  agentId,
  initial,
  initialPrompt,
  builtIn,
  onSave,
  onCancel,
}: {
  /** Null for a new agent. */
  agentId: string | null;
  initial: AgentDefinition;
  initialPrompt: string;
  builtIn: boolean;
  onSave(id: string, meta: AgentDefinition, prompt: string): Promise<void>;
  onCancel(): void;
}) {
  const fid = useId();
  const [id, setId] = useState(agentId ?? "");
  const [name, setName] = useState(initial.name);
  const [type, setType] = useState<AgentType>(initial.type);
  const [description, setDescription] = useState(initial.description);
  const [client, setClient] = useState(initial.client ?? "");
  const [scope, setScope] = useState(initial.scope ?? "");
  const [strength, setStrength] = useState<AgentStrength | "">(initial.strength ?? "");
  const [memory, setMemory] = useState(initial.inject_memory.join("\n"));
  const [prompt, setPrompt] = useState(initialPrompt);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    const agent = id.trim();
    if (!ID_PATTERN.test(agent)) return setError("The id may only hold lowercase letters, digits and '-'.");
    if (name.trim() === "") return setError("The name is required.");
    if (description.trim() === "") return setError("The description is required: it says what the agent is for.");
    setBusy(true);
    setError(null);
    try {
      await onSave(
        agent,
        {
          ...initial,
          name: name.trim(),
          type,
          description: description.trim(),
          client: orNull(client),
          scope: orNull(scope),
          strength: strength === "" ? null : strength,
          inject_memory: memory.split("\n").map((l) => l.trim()).filter((l) => l !== ""),
        },
        prompt,
      );
    } catch (e) {
      setError(toApiError(e).message);
    } finally {
      setBusy(false);
    }
  }

  const title = agentId === null ? "Add an agent" : `Edit agent ${agentId}`;
  return (
    <form className="settings-form" aria-label={title} onSubmit={(e) => void submit(e)} noValidate>
      <h3>{title}</h3>
      {builtIn ? (
        <p className="muted">
          This agent is built in. Saving writes your own copy to <code>agents/{agentId}/</code>, which replaces it until you
          delete the copy.
        </p>
      ) : null}
      <div className="form-grid">
        <div className="field">
          <label htmlFor={`${fid}-id`}>Id</label>
          <input
            id={`${fid}-id`}
            value={id}
            onChange={(e) => setId(e.target.value)}
            readOnly={agentId !== null}
            placeholder="code-reviewer"
            spellCheck={false}
          />
        </div>
        <div className="field">
          <label htmlFor={`${fid}-name`}>Name</label>
          <input id={`${fid}-name`} value={name} onChange={(e) => setName(e.target.value)} />
        </div>
        <div className="field">
          <label htmlFor={`${fid}-type`}>Type</label>
          <select id={`${fid}-type`} value={type} onChange={(e) => setType(e.target.value as AgentType)}>
            {TYPES.map((t) => (
              <option key={t.value} value={t.value}>
                {t.label}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor={`${fid}-client`}>Client (optional)</label>
          <input id={`${fid}-client`} value={client} onChange={(e) => setClient(e.target.value)} placeholder="a client name from LLM clients" spellCheck={false} />
        </div>
        <div className="field">
          <label htmlFor={`${fid}-strength`}>Minimum strength</label>
          <select id={`${fid}-strength`} value={strength} onChange={(e) => setStrength(e.target.value as AgentStrength | "")}>
            <option value="">any</option>
            {STRENGTHS.map((s) => (
              <option key={s} value={s}>
                {s.replace("_", " ")}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor={`${fid}-scope`}>Scope (optional)</label>
          <input id={`${fid}-scope`} value={scope} onChange={(e) => setScope(e.target.value)} spellCheck={false} />
        </div>
        <div className="field field-wide">
          <label htmlFor={`${fid}-description`}>Description</label>
          <textarea id={`${fid}-description`} value={description} onChange={(e) => setDescription(e.target.value)} rows={2} />
        </div>
        <div className="field field-wide">
          <label htmlFor={`${fid}-memory`}>Memory files (one per line, optional)</label>
          <textarea id={`${fid}-memory`} value={memory} onChange={(e) => setMemory(e.target.value)} rows={2} spellCheck={false} />
        </div>
        <div className="field field-wide">
          <label htmlFor={`${fid}-prompt`}>Prompt (AGENT.md)</label>
          <textarea
            id={`${fid}-prompt`}
            className="agent-prompt"
            value={prompt}
            onChange={(e) => setPrompt(e.target.value)}
            rows={12}
            spellCheck={false}
            aria-describedby={`${fid}-prompt-hint`}
          />
          <span id={`${fid}-prompt-hint`} className="field-hint">
            Directives: &lt;!-- INCLUDE: common/file.md --&gt; inserts a file of the agents folder, &lt;!-- AGENTS_LIST --&gt;
            lists the task agents, &lt;!-- KEY --&gt; is filled in per request.
          </span>
        </div>
      </div>
      <FormFooter error={error} busy={busy} label={agentId === null ? "Add agent" : "Save agent"} onCancel={onCancel} />
    </form>
  );
}

/** The edit form of an existing agent, once its files are read. */
function EditAgent({ agent, onDone }: { agent: AgentSummary; onDone(): void }) {
  const detail = useAgentDetail(agent.id);
  const actions = useAgentActions();
  if (detail.isPending) return <Loading label={`Loading agent ${agent.id}…`} />;
  if (detail.isError) return <ErrorView title={`Could not read agent ${agent.id}`} error={detail.error} onRetry={() => void detail.refetch()} />;
  return (
    <AgentForm
      agentId={agent.id}
      initial={detail.data.meta ?? { ...NEW_AGENT, name: agent.id }}
      initialPrompt={detail.data.prompt}
      builtIn={agent.built_in}
      onSave={async (id, meta, prompt) => {
        await actions.save(id, meta, prompt);
        onDone();
      }}
      onCancel={onDone}
    />
  );
}

type AgentEditing = { mode: "add" } | { mode: "edit"; agent: AgentSummary } | null;

function deleteLabel(a: AgentSummary): string {
  return a.overrides_built_in ? "Restore built-in" : "Delete";
}

export function AgentsSection() {
  const { data, error, isPending, isError, refetch } = useAgents();
  const actions = useAgentActions();
  const [editing, setEditing] = useState<AgentEditing>(null);
  const [confirmDelete, setConfirmDelete] = useState<string | null>(null);
  const [rowErrors, setRowErrors] = useState<Record<string, string>>({});

  async function remove(id: string) {
    setConfirmDelete(null);
    try {
      await actions.remove(id);
      setRowErrors(({ [id]: _gone, ...rest }) => rest);
      if (editing?.mode === "edit" && editing.agent.id === id) setEditing(null);
    } catch (e) {
      setRowErrors((r) => ({ ...r, [id]: toApiError(e).message }));
    }
  }

  let body;
  if (isPending) body = <Loading label="Loading agents…" />;
  else if (isError) body = <ErrorView title="Could not load the agents" error={error} onRetry={() => void refetch()} />;
  else
    body = (
      <div className="table-wrap">
        <table className="table agents-table" aria-label="Agents">
          <thead>
            <tr>
              <th scope="col">Agent</th>
              <th scope="col">Type</th>
              <th scope="col">Model</th>
              <th scope="col">Description</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {data.map((a) => (
              <tr key={a.id} data-agent-id={a.id} className={a.error ? "is-broken" : undefined}>
                <td>
                  {a.name} <code>{a.id}</code>
                  {a.built_in ? <span className="badge badge-seed">built-in</span> : null}
                  {a.overrides_built_in ? <span className="badge">replaces built-in</span> : null}
                </td>
                <td>{a.type ?? <span className="muted">unknown</span>}</td>
                <td>{modelOf(a)}</td>
                <td>
                  {a.description}
                  {a.error ? (
                    <span className="form-error agent-error">Broken: {a.error}</span>
                  ) : null}
                  {a.warnings.map((w) => (
                    <span key={w} className="agent-warning muted">
                      Warning: {w}
                    </span>
                  ))}
                  {rowErrors[a.id] ? (
                    <span className="form-error" role="alert">
                      {rowErrors[a.id]}
                    </span>
                  ) : null}
                </td>
                <td className="rule-actions">
                  <button
                    type="button"
                    className="button button-small"
                    aria-label={`Edit agent ${a.id}`}
                    onClick={() => setEditing({ mode: "edit", agent: a })}
                  >
                    Edit
                  </button>
                  {a.built_in ? null : confirmDelete === a.id ? (
                    <button type="button" className="button button-small button-danger" onClick={() => void remove(a.id)}>
                      Confirm {deleteLabel(a).toLowerCase()}
                    </button>
                  ) : (
                    <button
                      type="button"
                      className="button button-small"
                      aria-label={`${deleteLabel(a)} agent ${a.id}`}
                      onClick={() => setConfirmDelete(a.id)}
                    >
                      {deleteLabel(a)}
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    );

  return (
    <section className="settings-section" aria-labelledby="agents-title">
      <div className="section-head">
        <h2 id="agents-title">Agents</h2>
        <button type="button" className="button" onClick={() => setEditing({ mode: "add" })} disabled={editing?.mode === "add"}>
          Add agent
        </button>
      </div>
      <p className="muted section-lead">
        Each agent is a folder <code>agents/&lt;id&gt;/</code> in the data directory with <code>meta.json</code> and{" "}
        <code>AGENT.md</code>; edits by hand apply from the next turn. Chat agents run a conversation; task agents are the
        ones other agents can delegate to.
      </p>
      {body}
      {editing?.mode === "add" ? (
        <AgentForm
          key="new"
          agentId={null}
          initial={NEW_AGENT}
          initialPrompt=""
          builtIn={false}
          onSave={async (id, meta, prompt) => {
            await actions.save(id, meta, prompt);
            setEditing(null);
          }}
          onCancel={() => setEditing(null)}
        />
      ) : null}
      {editing?.mode === "edit" ? <EditAgent key={editing.agent.id} agent={editing.agent} onDone={() => setEditing(null)} /> : null}
    </section>
  );
}
