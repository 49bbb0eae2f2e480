// Approval rules in evaluation order (per group, priority ascending) with add/edit/delete in place.
import { useId, useState, type FormEvent } from "react";
import {
  toApiError,
  useApprovalRules,
  useSettingsActions,
  type ApprovalRuleInput,
  type ApprovalRuleView,
  type RuleAction,
} from "../../backend";
import { FormFooter } from "../../components/FormFooter";
import { ErrorView, Loading } from "../../components/StatusViews";

const ACTIONS: Array<{ value: RuleAction; label: string }> = [
  { value: "allow", label: "Allow — run without asking" },
  { value: "require", label: "Require — ask a human first" },
  { value: "deny", label: "Deny — never run" },
];

const NEW_RULE: ApprovalRuleInput = {
  group_id: "default",
  tool_pattern: "",
  path_pattern: null,
  agent_id: null,
  source: null,
  action: "require",
  priority: 100,
  note: null,
};

function toInput(r: ApprovalRuleView): ApprovalRuleInput {
  return {
    group_id: r.group_id,
    tool_pattern: r.tool_pattern,
    path_pattern: r.path_pattern,
    agent_id: r.agent_id,
    source: r.source,
    action: r.action,
    priority: r.priority,
    note: r.note,
  };
}

/** Where a relative path pattern applies: an allow rule never widens through the project folder. */
export function pathHint(action: RuleAction): string {
  const shape = "dir/* is the folder and everything in it; links and .. are resolved first.";
  return action === "allow"
    ? `A relative path means a place in Skald's data dir only (memory/* is Skald's memory, not a memory/ folder of a project); write an absolute path to allow a place in a project. ${shape}`
    : `A relative path matches in Skald's data dir and in the session's working directory (secrets/* covers both). ${shape}`;
}

const orNull = (v: string) => (v.trim() === "" ? null : v.trim());

function RuleForm({
  initial,
  ruleId,
  onSave,
  onCancel,
}: {
  initial: ApprovalRuleInput;
  ruleId: number | null;
  onSave(input: ApprovalRuleInput): Promise<void>;
  onCancel(): void;
}) {
  const id = useId();
  const [group, setGroup] = useState(initial.group_id ?? "default");
  const [tool, setTool] = useState(initial.tool_pattern);
  const [path, setPath] = useState(initial.path_pattern ?? "");
  const [agent, setAgent] = useState(initial.agent_id ?? "");
  const [source, setSource] = useState(initial.source ?? "");
  const [action, setAction] = useState<RuleAction>(initial.action);
  const [priority, setPriority] = useState(String(initial.priority));
  const [note, setNote] = useState(initial.note ?? "");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    const p = Number(priority.trim());
    if (tool.trim() === "") return setError("The tool pattern is required (use * for every tool).");
    if (priority.trim() === "" || !Number.isSafeInteger(p)) return setError("The priority must be a whole number.");
    setBusy(true);
    setError(null);
    try {
      await onSave({
        group_id: orNull(group) ?? "default",
        tool_pattern: tool.trim(),
        path_pattern: orNull(path),
        agent_id: orNull(agent),
        source: orNull(source),
        action,
        priority: p,
        note: orNull(note),
      });
    } catch (e) {
      const err = toApiError(e);
      setError(err.code === "conflict" ? `Conflict: ${err.message}` : err.message);
    } finally {
      setBusy(false);
    }
  }

  const title = ruleId === null ? "Add a rule" : `Edit rule #${ruleId}`;
  return (
    <form className="settings-form" aria-label={title} onSubmit={(e) => void submit(e)} noValidate>
      <h3>{title}</h3>
      <div className="form-grid">
        <div className="field">
          <label htmlFor={`${id}-tool`}>Tool pattern</label>
          <input id={`${id}-tool`} value={tool} onChange={(e) => setTool(e.target.value)} placeholder="write_file, mcp__github__*, *" spellCheck={false} />
        </div>
        <div className="field">
          <label htmlFor={`${id}-action`}>Action</label>
          <select id={`${id}-action`} value={action} onChange={(e) => setAction(e.target.value as RuleAction)}>
            {ACTIONS.map((a) => (
              <option key={a.value} value={a.value}>
                {a.label}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor={`${id}-priority`}>Priority (lower wins)</label>
          <input id={`${id}-priority`} value={priority} onChange={(e) => setPriority(e.target.value)} inputMode="numeric" />
        </div>
        <div className="field">
          <label htmlFor={`${id}-path`}>Path pattern (optional)</label>
          <input
            id={`${id}-path`}
            value={path}
            onChange={(e) => setPath(e.target.value)}
            placeholder={action === "allow" ? "memory/*" : "secrets/*"}
            spellCheck={false}
            aria-describedby={`${id}-path-hint`}
          />
          <span id={`${id}-path-hint`} className="field-hint">
            {pathHint(action)}
          </span>
        </div>
        <div className="field">
          <label htmlFor={`${id}-group`}>Group</label>
          <input id={`${id}-group`} value={group} onChange={(e) => setGroup(e.target.value)} spellCheck={false} />
        </div>
        <div className="field">
          <label htmlFor={`${id}-agent`}>Agent (optional)</label>
          <input id={`${id}-agent`} value={agent} onChange={(e) => setAgent(e.target.value)} spellCheck={false} />
        </div>
        <div className="field">
          <label htmlFor={`${id}-source`}>Source (optional)</label>
          <input id={`${id}-source`} value={source} onChange={(e) => setSource(e.target.value)} placeholder="web, tic, cron" spellCheck={false} />
        </div>
        <div className="field field-wide">
          <label htmlFor={`${id}-note`}>Note (optional)</label>
          <input id={`${id}-note`} value={note} onChange={(e) => setNote(e.target.value)} />
        </div>
      </div>
      <FormFooter error={error} busy={busy} label={ruleId === null ? "Add rule" : "Save rule"} onCancel={onCancel} />
    </form>
  );
}

type RuleEditing = { id: number | null; initial: ApprovalRuleInput } | null;

export function RulesSection() {
  const { data, error, isPending, isError, refetch } = useApprovalRules();
  const actions = useSettingsActions();
  const [editing, setEditing] = useState<RuleEditing>(null);
  const [rowErrors, setRowErrors] = useState<Record<number, string>>({});
  const [confirmDelete, setConfirmDelete] = useState<number | null>(null);

  async function save(input: ApprovalRuleInput) {
    await actions.saveRule(editing?.id ?? null, input);
    setEditing(null);
  }

  async function remove(id: number) {
    setConfirmDelete(null);
    try {
      await actions.deleteRule(id);
      setRowErrors(({ [id]: _gone, ...rest }) => rest);
      if (editing?.id === id) setEditing(null);
    } catch (e) {
      setRowErrors((r) => ({ ...r, [id]: toApiError(e).message }));
    }
  }

  let body;
  if (isPending) body = <Loading label="Loading rules…" />;
  else if (isError) body = <ErrorView title="Could not load the approval rules" error={error} onRetry={() => void refetch()} />;
  else if (data.length === 0) body = <p className="muted">No rules: every tool call runs without asking.</p>;
  else
    body = (
      <div className="table-wrap">
        <table className="table rules-table" aria-label="Approval rules">
          <thead>
            <tr>
              <th scope="col" className="col-num">Priority</th>
              <th scope="col">Tool</th>
              <th scope="col">Path</th>
              <th scope="col">Scope</th>
              <th scope="col">Action</th>
              <th scope="col">Note</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {data.map((r) => (
              <tr key={r.id} data-rule-id={r.id} className={editing?.id === r.id ? "is-editing" : undefined}>
                <td className="col-num">{r.priority}</td>
                <td>
                  <code>{r.tool_pattern}</code>
                  {r.seed_key ? (
                    <span className="badge badge-seed" title={`Seeded default (${r.seed_key})`}>
                      default
                    </span>
                  ) : null}
                </td>
                <td>{r.path_pattern ? <code>{r.path_pattern}</code> : <span className="muted">any</span>}</td>
                <td className="rule-scope">
                  {r.group_id !== "default" ? <span className="badge">group {r.group_id}</span> : null}
                  {r.agent_id ? <span className="badge">agent {r.agent_id}</span> : null}
                  {r.source ? <span className="badge">source {r.source}</span> : null}
                  {r.group_id === "default" && !r.agent_id && !r.source ? <span className="muted">everywhere</span> : null}
                </td>
                <td>
                  <span className={`action action-${r.action}`}>{r.action}</span>
                </td>
                <td className="rule-note">
                  {r.note ?? ""}
                  {rowErrors[r.id] ? (
                    <span className="form-error" role="alert">
                      {rowErrors[r.id]}
                    </span>
                  ) : null}
                </td>
                <td className="rule-actions">
                  <button
                    type="button"
                    className="button button-small"
                    aria-label={`Edit rule ${r.id}`}
                    onClick={() => setEditing({ id: r.id, initial: toInput(r) })}
                  >
                    Edit
                  </button>
                  {confirmDelete === r.id ? (
                    <button type="button" className="button button-small button-danger" onClick={() => void remove(r.id)}>
                      Confirm delete
                    </button>
                  ) : (
                    <button type="button" className="button button-small" aria-label={`Delete rule ${r.id}`} onClick={() => setConfirmDelete(r.id)}>
                      Delete
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
    <section className="settings-section" aria-labelledby="rules-title">
      <div className="section-head">
        <h2 id="rules-title">Approval rules</h2>
        <button type="button" className="button" onClick={() => setEditing({ id: null, initial: NEW_RULE })} disabled={editing?.id === null}>
          Add rule
        </button>
      </div>
      <p className="muted section-lead">
        Checked top to bottom before a tool runs; the first matching rule decides. Rules marked <em>default</em> were
        seeded by Skald and can be edited like any other.
      </p>
      {body}
      {editing ? (
        <RuleForm
          key={editing.id ?? "new"}
          initial={editing.initial}
          ruleId={editing.id}
          onSave={save}
          onCancel={() => setEditing(null)}
        />
      ) : null}
    </section>
  );
}
