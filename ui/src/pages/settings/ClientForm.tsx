// The add/edit form of one LLM client; the API key goes to the keychain and is never shown back.
import { useEffect, useId, useRef, useState, type FormEvent } from "react";
import type { LlmClientInput } from "../../backend";
import { toApiError } from "../../backend";
import { FormFooter } from "../../components/FormFooter";

export const EMPTY_CLIENT: LlmClientInput = {
  previous_name: null,
  name: "",
  base_url: "",
  model: "",
  provider: null,
  api_key_env: null,
  context_window: null,
  stream: null,
};

/** The env client's reserved name; the engine drops a file client of that name on save. */
const RESERVED = "env";

export interface ClientFormProps {
  /** Prefilled values (a preset or the client being edited). */
  initial: LlmClientInput;
  /** The name the client had before this edit; null when adding. */
  originalName: string | null;
  hasKey: boolean;
  /** Names already taken by other clients. */
  takenNames: string[];
  onSubmit(input: LlmClientInput, key: string | null): Promise<void>;
  onRemoveKey(name: string): Promise<void>;
  onCancel(): void;
}

function blankToNull(value: string): string | null {
  const v = value.trim();
  return v === "" ? null : v;
}

function validate(input: LlmClientInput, taken: string[]): string | null {
  if (!input.name) return "Give the client a name.";
  if (input.name === RESERVED) return "The name `env` is reserved for the SKALD_LLM_* client.";
  if (taken.includes(input.name)) return `A client named “${input.name}” already exists.`;
  if (!/^https?:\/\/\S+$/.test(input.base_url)) return "The base URL must start with http:// or https://.";
  if (!input.model) return "Name the model to use.";
  if (input.context_window !== null && (!Number.isSafeInteger(input.context_window) || input.context_window <= 0)) {
    return "The context window must be a positive whole number of tokens.";
  }
  return null;
}

export function ClientForm({ initial, originalName, hasKey, takenNames, onSubmit, onRemoveKey, onCancel }: ClientFormProps) {
  const id = useId();
  const [name, setName] = useState(initial.name);
  const [baseUrl, setBaseUrl] = useState(initial.base_url);
  const [model, setModel] = useState(initial.model);
  const [provider, setProvider] = useState(initial.provider ?? "");
  const [keyEnv, setKeyEnv] = useState(initial.api_key_env ?? "");
  const [contextWindow, setContextWindow] = useState(initial.context_window?.toString() ?? "");
  const [stream, setStream] = useState(initial.stream !== false);
  const [key, setKey] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const usesEnvKey = keyEnv.trim() !== "";
  const formRef = useRef<HTMLFormElement>(null);

  // The form opens below the list; bring it into view and put the cursor in it.
  useEffect(() => {
    const form = formRef.current;
    form?.scrollIntoView?.({ block: "nearest" });
    form?.querySelector("input")?.focus({ preventScroll: true });
  }, []);

  async function submit(event: FormEvent) {
    event.preventDefault();
    const cw = contextWindow.trim();
    const input: LlmClientInput = {
      // Carries a rename: the engine finds the client in config.yml by its old name and keeps the
      // keys this form does not show (strength, scope, extra_params).
      previous_name: initial.previous_name,
      name: name.trim(),
      base_url: baseUrl.trim(),
      model: model.trim(),
      provider: blankToNull(provider),
      api_key_env: blankToNull(keyEnv),
      context_window: cw === "" ? null : Number(cw),
      stream,
    };
    const problem = validate(input, takenNames);
    if (problem) {
      setError(problem);
      return;
    }
    setError(null);
    setBusy(true);
    try {
      await onSubmit(input, usesEnvKey ? null : blankToNull(key));
      setKey("");
    } catch (e) {
      setError(toApiError(e).message);
    } finally {
      setBusy(false);
    }
  }

  async function removeKey() {
    if (!originalName) return;
    setBusy(true);
    try {
      await onRemoveKey(originalName);
      setError(null);
    } catch (e) {
      setError(toApiError(e).message);
    } finally {
      setBusy(false);
    }
  }

  const title = originalName ? `Edit client “${originalName}”` : "Add an LLM client";
  return (
    <form ref={formRef} className="settings-form" aria-label={title} onSubmit={(e) => void submit(e)} noValidate>
      <h3>{title}</h3>
      <div className="form-grid">
        <div className="field">
          <label htmlFor={`${id}-name`}>Name</label>
          <input id={`${id}-name`} value={name} onChange={(e) => setName(e.target.value)} placeholder="local" autoComplete="off" />
        </div>
        <div className="field field-wide">
          <label htmlFor={`${id}-url`}>Base URL</label>
          <input
            id={`${id}-url`}
            value={baseUrl}
            onChange={(e) => setBaseUrl(e.target.value)}
            placeholder="http://localhost:11434/v1"
            autoComplete="off"
            spellCheck={false}
          />
        </div>
        <div className="field">
          <label htmlFor={`${id}-model`}>Model</label>
          <input id={`${id}-model`} value={model} onChange={(e) => setModel(e.target.value)} placeholder="llama3.2" autoComplete="off" spellCheck={false} />
        </div>
        <div className="field">
          <label htmlFor={`${id}-provider`}>Provider (optional)</label>
          <input
            id={`${id}-provider`}
            value={provider}
            onChange={(e) => setProvider(e.target.value)}
            list={`${id}-providers`}
            aria-describedby={`${id}-provider-hint`}
            autoComplete="off"
          />
          <datalist id={`${id}-providers`}>
            <option value="openai" />
            <option value="openrouter" />
            <option value="ollama" />
            <option value="lmstudio" />
          </datalist>
          <span id={`${id}-provider-hint`} className="field-hint">
            <code>openrouter</code> adds prompt-cache hints for Anthropic models.
          </span>
        </div>
        <div className="field">
          <label htmlFor={`${id}-cw`}>Context window (tokens, optional)</label>
          <input id={`${id}-cw`} value={contextWindow} onChange={(e) => setContextWindow(e.target.value)} inputMode="numeric" placeholder="32768" />
        </div>
        <div className="field field-check">
          <label htmlFor={`${id}-stream`}>
            <input id={`${id}-stream`} type="checkbox" checked={stream} onChange={(e) => setStream(e.target.checked)} aria-describedby={`${id}-stream-hint`} />{" "}
            Stream replies
          </label>
          <span id={`${id}-stream-hint`} className="field-hint">
            Turn off for a server that breaks streamed replies; Skald then waits for each whole reply.
          </span>
        </div>
        <div className="field">
          <label htmlFor={`${id}-keyenv`}>API key variable (optional)</label>
          <input
            id={`${id}-keyenv`}
            value={keyEnv}
            onChange={(e) => setKeyEnv(e.target.value)}
            placeholder="OPENROUTER_API_KEY"
            autoComplete="off"
            spellCheck={false}
          />
        </div>
        <div className="field field-wide">
          <label htmlFor={`${id}-key`}>API key</label>
          <input
            id={`${id}-key`}
            type="password"
            value={key}
            onChange={(e) => setKey(e.target.value)}
            disabled={usesEnvKey}
            autoComplete="new-password"
            placeholder={hasKey ? "Type a new key to replace the stored one" : "Leave empty for local servers"}
            aria-describedby={`${id}-key-hint`}
          />
          <span id={`${id}-key-hint`} className="field-hint">
            {usesEnvKey
              ? `The key is read from $${keyEnv.trim()} when Skald starts; nothing is stored.`
              : `${hasKey ? "Key stored" : "No key"} — a key you type is saved to the OS keychain, never to config.yml, and is not shown again.`}
          </span>
        </div>
      </div>
      <FormFooter error={error} busy={busy} label={originalName ? "Save client" : "Add client"} onCancel={onCancel}>
        {originalName && hasKey && !usesEnvKey ? (
          <button type="button" className="button button-danger" onClick={() => void removeKey()} disabled={busy}>
            Remove stored key
          </button>
        ) : null}
      </FormFooter>
    </form>
  );
}
