// LLM clients in fallback order: list, move up/down, add/edit/remove, keychain state, connection test.
import { useState } from "react";
import {
  toApiError,
  useSettingsActions,
  type ConnectionTest,
  type LlmClientInput,
  type LlmClientView,
  type SettingsView,
} from "../../backend";
import { ClientForm, EMPTY_CLIENT } from "./ClientForm";

export type Editing = { mode: "add"; preset: LlmClientInput } | { mode: "edit"; name: string } | null;

type TestState = { pending: true } | { pending: false; result: ConnectionTest } | { pending: false; error: string };

function toInput(c: LlmClientView): LlmClientInput {
  return {
    previous_name: c.name,
    name: c.name,
    base_url: c.base_url,
    model: c.model,
    provider: c.provider,
    api_key_env: c.api_key_env,
    context_window: c.context_window,
    stream: c.stream,
  };
}

function KeyState({ c }: { c: LlmClientView }) {
  if (c.api_key_env) {
    return (
      <span className={`badge ${c.has_api_key ? "badge-ok" : "badge-warn"}`}>
        {c.has_api_key ? `key from $${c.api_key_env}` : `$${c.api_key_env} not set`}
      </span>
    );
  }
  return <span className={`badge ${c.has_api_key ? "badge-ok" : ""}`}>{c.has_api_key ? "key stored" : "no key"}</span>;
}

function TestResult({ state, model }: { state: TestState | undefined; model: string }) {
  if (!state) return null;
  if (state.pending) {
    return (
      <p className="test-result" role="status">
        Testing…
      </p>
    );
  }
  if ("error" in state) {
    return (
      <p className="test-result test-bad" role="alert">
        {state.error}
      </p>
    );
  }
  const r = state.result;
  if (!r.ok) {
    return (
      <p className="test-result test-bad" role="alert">
        Connection failed after {r.latency_ms} ms: {r.error ?? "unknown error"}
      </p>
    );
  }
  const shown = r.models.slice(0, 12);
  return (
    <div className="test-result test-ok" role="status">
      <p>
        Connected in {r.latency_ms} ms · {r.models.length} model{r.models.length === 1 ? "" : "s"}
        {r.model_listed ? ` · ${model} is available` : ""}
      </p>
      {!r.model_listed ? (
        <p className="test-warn">
          The configured model <code>{model}</code> is not in the list the server returned.
        </p>
      ) : null}
      {shown.length > 0 ? (
        <ul className="model-list" aria-label="Models">
          {shown.map((m) => (
            <li key={m}>
              <code>{m}</code>
            </li>
          ))}
          {r.models.length > shown.length ? <li className="muted">and {r.models.length - shown.length} more</li> : null}
        </ul>
      ) : null}
    </div>
  );
}

export function ClientsSection({
  view,
  editing,
  onEdit,
}: {
  view: SettingsView;
  editing: Editing;
  onEdit(next: Editing): void;
}) {
  const actions = useSettingsActions();
  const [tests, setTests] = useState<Record<string, TestState>>({});
  const [listError, setListError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [confirmRemove, setConfirmRemove] = useState<string | null>(null);

  const fileClients = view.clients.filter((c) => !c.from_env);
  const envClient = view.clients.find((c) => c.from_env) ?? null;

  async function writeList(list: LlmClientInput[]) {
    await actions.saveClients(
      list,
      list.map((c) => c.name),
      view.revision,
    );
  }

  async function listAction(run: () => Promise<void>) {
    setBusy(true);
    setListError(null);
    try {
      await run();
    } catch (e) {
      setListError(toApiError(e).message);
    } finally {
      setBusy(false);
    }
  }

  const move = (index: number, by: -1 | 1) =>
    listAction(async () => {
      const list = fileClients.map(toInput);
      const [item] = list.splice(index, 1);
      if (!item) return;
      list.splice(index + by, 0, item);
      await writeList(list);
    });

  const remove = (c: LlmClientView) =>
    listAction(async () => {
      setConfirmRemove(null);
      await writeList(fileClients.filter((o) => o.name !== c.name).map(toInput));
      if (c.has_api_key && !c.api_key_env) {
        // Best effort: the client is gone either way, and a keychain without a service is common on servers.
        await actions.setApiKey(c.name, null).catch(() => undefined);
      }
      if (editing?.mode === "edit" && editing.name === c.name) onEdit(null);
    });

  async function test(name: string) {
    setTests((t) => ({ ...t, [name]: { pending: true } }));
    let next: TestState;
    try {
      next = { pending: false, result: await actions.testConnection(name) };
    } catch (e) {
      next = { pending: false, error: toApiError(e).message };
    }
    setTests((t) => ({ ...t, [name]: next }));
  }

  async function save(input: LlmClientInput, key: string | null, originalName: string | null) {
    const list = fileClients.map(toInput);
    const at = originalName === null ? -1 : list.findIndex((c) => c.name === originalName);
    if (at >= 0) list[at] = input;
    else list.push(input);
    await writeList(list);
    if (key !== null) {
      try {
        await actions.setApiKey(input.name, key);
      } catch (e) {
        // The client itself is saved; reopen it as an edit so the key can be retried.
        setListError(`“${input.name}” was saved, but its key could not be stored: ${toApiError(e).message}`);
        onEdit({ mode: "edit", name: input.name });
        return;
      }
    }
    setListError(null);
    onEdit(null);
  }

  const editedClient = editing?.mode === "edit" ? fileClients.find((c) => c.name === editing.name) : undefined;
  const formInitial = editing?.mode === "add" ? editing.preset : editedClient ? toInput(editedClient) : null;
  const originalName = editedClient?.name ?? null;

  return (
    <section className="settings-section" aria-labelledby="clients-title">
      <div className="section-head">
        <h2 id="clients-title">LLM clients</h2>
        <button
          type="button"
          className="button"
          onClick={() => onEdit({ mode: "add", preset: EMPTY_CLIENT })}
          disabled={editing?.mode === "add"}
        >
          Add client
        </button>
      </div>
      <p className="muted section-lead">
        Any OpenAI-compatible endpoint. Skald tries them top to bottom: when one fails, the next takes over.
      </p>
      {view.clients.length === 0 ? (
        <p className="muted">No client is configured yet.</p>
      ) : (
        <ol className="client-list" aria-label="LLM clients in fallback order">
          {view.clients.map((c) => {
            const fileIndex = fileClients.indexOf(c);
            return (
              <li key={c.name} className="client-row" data-client={c.name}>
                <div className="client-main">
                  <div className="client-title">
                    <strong>{c.name}</strong>
                    {c.from_env ? <span className="badge badge-env">from environment</span> : null}
                    <KeyState c={c} />
                  </div>
                  <div className="client-facts">
                    <code>{c.model}</code>
                    <span className="muted"> at </span>
                    <code>{c.base_url}</code>
                    {c.provider ? <span className="muted"> · provider {c.provider}</span> : null}
                    {c.context_window ? <span className="muted"> · {c.context_window.toLocaleString()} tokens</span> : null}
                    {c.stream ? null : <span className="muted"> · replies not streamed</span>}
                  </div>
                  {c.from_env ? (
                    <p className="muted client-note">
                      Set by <code>SKALD_LLM_BASE_URL</code>, <code>SKALD_LLM_MODEL</code> and <code>SKALD_LLM_API_KEY</code>{" "}
                      when Skald started; it is always tried first and is read-only here. Change or unset those
                      variables and restart to change it.
                    </p>
                  ) : null}
                  <TestResult state={tests[c.name]} model={c.model} />
                </div>
                <div className="client-actions">
                  <button type="button" className="button button-small" onClick={() => void test(c.name)} disabled={tests[c.name]?.pending === true}>
                    Test connection
                  </button>
                  {c.from_env ? null : (
                    <>
                      <button
                        type="button"
                        className="button button-small"
                        aria-label={`Move ${c.name} up`}
                        title="Move up"
                        disabled={busy || fileIndex === 0}
                        onClick={() => void move(fileIndex, -1)}
                      >
                        ↑
                      </button>
                      <button
                        type="button"
                        className="button button-small"
                        aria-label={`Move ${c.name} down`}
                        title="Move down"
                        disabled={busy || fileIndex === fileClients.length - 1}
                        onClick={() => void move(fileIndex, 1)}
                      >
                        ↓
                      </button>
                      <button type="button" className="button button-small" aria-label={`Edit ${c.name}`} onClick={() => onEdit({ mode: "edit", name: c.name })}>
                        Edit
                      </button>
                      {confirmRemove === c.name ? (
                        <button type="button" className="button button-small button-danger" disabled={busy} onClick={() => void remove(c)}>
                          Confirm remove
                        </button>
                      ) : (
                        <button type="button" className="button button-small" aria-label={`Remove ${c.name}`} onClick={() => setConfirmRemove(c.name)}>
                          Remove
                        </button>
                      )}
                    </>
                  )}
                </div>
              </li>
            );
          })}
        </ol>
      )}
      {envClient && fileClients.length > 0 ? (
        <p className="muted section-foot">The environment client stays first; the order below it is saved to config.yml.</p>
      ) : null}
      {listError ? (
        <p className="form-error" role="alert">
          {listError}
        </p>
      ) : null}
      {formInitial ? (
        <ClientForm
          // A new key per target resets the fields when switching between clients or presets.
          key={editing?.mode === "edit" ? `edit-${editing.name}` : `add-${formInitial.base_url}-${formInitial.model}`}
          initial={formInitial}
          originalName={originalName}
          hasKey={editedClient?.has_api_key ?? false}
          takenNames={view.clients.map((c) => c.name).filter((n) => n !== originalName)}
          onSubmit={(input, key) => save(input, key, originalName)}
          onRemoveKey={(name) => actions.setApiKey(name, null)}
          onCancel={() => onEdit(null)}
        />
      ) : null}
    </section>
  );
}
