// The short guide shown while no LLM client exists: what to point Skald at, with ready presets.
import type { LlmClientInput } from "../../backend";

type Preset = { label: string; input: LlmClientInput; note: string };

const PRESETS: Preset[] = [
  {
    label: "Ollama",
    note: "Local; no key. Pull a model first (ollama pull llama3.2).",
    input: { previous_name: null, name: "ollama", base_url: "http://localhost:11434/v1", model: "llama3.2", provider: "ollama", api_key_env: null, context_window: null, stream: null },
  },
  {
    label: "LM Studio",
    note: "Local; start the server in the Developer tab, no key.",
    input: { previous_name: null, name: "lmstudio", base_url: "http://localhost:1234/v1", model: "qwen2.5-7b-instruct", provider: "lmstudio", api_key_env: null, context_window: null, stream: null },
  },
  {
    label: "OpenRouter",
    note: "Hosted; needs an API key from openrouter.ai/keys.",
    input: { previous_name: null, name: "openrouter", base_url: "https://openrouter.ai/api/v1", model: "openai/gpt-4o-mini", provider: "openrouter", api_key_env: null, context_window: null, stream: null },
  },
];

export function FirstRunGuide({ onPreset }: { onPreset(input: LlmClientInput): void }) {
  return (
    <section className="first-run" aria-labelledby="first-run-title">
      <h2 id="first-run-title">Connect a language model to get started</h2>
      <p>
        Skald talks to any <strong>OpenAI-compatible endpoint</strong>: a server that answers{" "}
        <code>POST /v1/chat/completions</code> the way OpenAI&apos;s API does. Local runners and most hosted
        providers offer one. You need its base URL (ending in <code>/v1</code>), a model name and, for hosted
        services, an API key.
      </p>
      <div className="table-wrap">
        <table className="table">
          <thead>
            <tr>
              <th scope="col">Service</th>
              <th scope="col">Base URL</th>
              <th scope="col">Example model</th>
              <th scope="col">
                <span className="visually-hidden">Use</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {PRESETS.map((p) => (
              <tr key={p.label}>
                <td>
                  <strong>{p.label}</strong>
                  <div className="muted small">{p.note}</div>
                </td>
                <td>
                  <code>{p.input.base_url}</code>
                </td>
                <td>
                  <code>{p.input.model}</code>
                </td>
                <td>
                  <button type="button" className="button button-small" onClick={() => onPreset(p.input)} aria-label={`Fill in ${p.label}`}>
                    Fill in
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <p>
        <strong>Quick start without this page:</strong> set the environment before starting Skald, for example
      </p>
      <pre className="code-pre">
        {"SKALD_LLM_BASE_URL=http://localhost:11434/v1 \\\nSKALD_LLM_MODEL=llama3.2 \\\nskald serve"}
      </pre>
      <p className="muted">
        Add <code>SKALD_LLM_API_KEY=…</code> for a hosted service. A client defined this way is tried first and
        shows up below as read-only.
      </p>
    </section>
  );
}
