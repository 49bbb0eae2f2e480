// MCP servers: what config.yml's mcp.servers declares, where each stands and its tools; adding,
// disabling and removing servers (written into config.yml in place).
import { useId, useState, type FormEvent } from "react";
import {
  toApiError,
  useMcpActions,
  useMcpServers,
  useStartMcpServers,
  type McpActions,
  type McpServerInfo,
  type McpServerInput,
  type McpServerState,
} from "../../backend";
import { FormFooter } from "../../components/FormFooter";
import { ErrorView, Loading } from "../../components/StatusViews";

const STATE_LABEL: Record<McpServerState, string> = {
  disabled: "Disabled",
  not_started: "Starts when an agent activates it",
  ready: "Running",
  failed: "Failed to start",
  needs_authorization: "Needs authorization",
  authorizing: "Waiting for the browser…",
};

const EXAMPLE = `mcp:
  servers:
    - name: files
      command: npx
      args: [-y, "@modelcontextprotocol/server-filesystem", /home/me/notes]
      description: read and search my notes
    - name: remote
      url: https://example.com/mcp
      api_key_env: REMOTE_MCP_KEY`;

const NAME_PATTERN = /^[A-Za-z0-9_-]+$/;

/** Splits a command line on spaces, keeping "quoted words" together. */
export function splitCommand(line: string): string[] {
  const words: string[] = [];
  for (const m of line.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)) words.push(m[1] ?? m[2] ?? m[3] ?? "");
  return words;
}

/** `KEY=VALUE` lines into an environment; the first bad line is the error. */
function parseEnv(text: string): Record<string, string> | string {
  const env: Record<string, string> = {};
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "") continue;
    const at = line.indexOf("=");
    if (at <= 0) return `"${line}" is not KEY=VALUE.`;
    env[line.slice(0, at).trim()] = line.slice(at + 1);
  }
  return env;
}

function AddServerForm({ actions, onDone }: { actions: McpActions; onDone(): void }) {
  const fid = useId();
  const [kind, setKind] = useState<"local" | "remote">("local");
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [command, setCommand] = useState("");
  const [env, setEnv] = useState("");
  const [url, setUrl] = useState("");
  const [keyEnv, setKeyEnv] = useState("");
  const [trusted, setTrusted] = useState(false);
  const [keepConnected, setKeepConnected] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    const id = name.trim();
    if (!NAME_PATTERN.test(id)) return setError("The name may only hold letters, digits, '_' and '-'.");
    const orNull = (v: string) => (v.trim() === "" ? null : v.trim());
    let server: McpServerInput;
    if (kind === "local") {
      const words = splitCommand(command.trim());
      if (words.length === 0) return setError("The command is required: the program that runs the server, and its arguments.");
      const parsed = parseEnv(env);
      if (typeof parsed === "string") return setError(parsed);
      server = { name: id, description: orNull(description), command: words[0] ?? null, args: words.slice(1), env: parsed, cwd: null, url: null, api_key_env: null, trusted, keep_connected: keepConnected };
    } else {
      if (!/^https?:\/\//.test(url.trim())) return setError("The URL must start with http:// or https://.");
      server = { name: id, description: orNull(description), command: null, args: [], env: {}, cwd: null, url: url.trim(), api_key_env: orNull(keyEnv), trusted, keep_connected: keepConnected };
    }
    setBusy(true);
    setError(null);
    try {
      await actions.add(server);
      onDone();
    } catch (e) {
      setError(toApiError(e).message);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form className="settings-form" aria-label="Add an MCP server" onSubmit={(e) => void submit(e)} noValidate>
      <div className="form-grid">
        <div className="field">
          <label htmlFor={`${fid}-name`}>Name</label>
          <input id={`${fid}-name`} value={name} onChange={(e) => setName(e.target.value)} placeholder="notes" />
        </div>
        <div className="field">
          <label htmlFor={`${fid}-kind`}>Runs</label>
          <select id={`${fid}-kind`} value={kind} onChange={(e) => setKind(e.target.value as "local" | "remote")}>
            <option value="local">On this computer (a command)</option>
            <option value="remote">Remote (streamable HTTP)</option>
          </select>
        </div>
        <div className="field field-wide">
          <label htmlFor={`${fid}-description`}>What it is for (agents read it)</label>
          <input id={`${fid}-description`} value={description} onChange={(e) => setDescription(e.target.value)} />
        </div>
        {kind === "local" ? (
          <>
            <div className="field field-wide">
              <label htmlFor={`${fid}-command`}>Command</label>
              <input
                id={`${fid}-command`}
                value={command}
                onChange={(e) => setCommand(e.target.value)}
                placeholder="npx -y @modelcontextprotocol/server-filesystem /home/me/notes"
              />
            </div>
            <div className="field field-wide">
              <label htmlFor={`${fid}-env`}>Environment (KEY=VALUE per line; ${"${VAR}"} reads Skald's own)</label>
              <textarea id={`${fid}-env`} rows={2} value={env} onChange={(e) => setEnv(e.target.value)} />
            </div>
          </>
        ) : (
          <>
            <div className="field field-wide">
              <label htmlFor={`${fid}-url`}>URL</label>
              <input id={`${fid}-url`} value={url} onChange={(e) => setUrl(e.target.value)} placeholder="https://mcp.example.com/mcp" />
            </div>
            <div className="field">
              <label htmlFor={`${fid}-key`}>Key variable (optional)</label>
              <input id={`${fid}-key`} value={keyEnv} onChange={(e) => setKeyEnv(e.target.value)} placeholder="TRACKER_KEY" />
            </div>
          </>
        )}
        <div className="field field-wide field-check">
          <label htmlFor={`${fid}-trusted`}>
            <input id={`${fid}-trusted`} type="checkbox" checked={trusted} onChange={(e) => setTrusted(e.target.checked)} aria-describedby={`${fid}-trusted-hint`} />{" "}
            Trust its read-only hints
          </label>
          <span id={`${fid}-trusted-hint`} className="field-hint">
            Tools this server marks read-only then run without asking (never those that reach the internet). Leave off for a server you did not write or review.
          </span>
        </div>
        <div className="field field-wide field-check">
          <label htmlFor={`${fid}-keep`}>
            <input id={`${fid}-keep`} type="checkbox" checked={keepConnected} onChange={(e) => setKeepConnected(e.target.checked)} aria-describedby={`${fid}-keep-hint`} />{" "}
            Keep it connected
          </label>
          <span id={`${fid}-keep-hint`} className="field-hint">
            Skald starts it with the app and again if it stops, and what it pushes (new mail, a changed file…) is read by TIC ticks.
          </span>
        </div>
      </div>
      <FormFooter error={error} busy={busy} label="Add server" onCancel={onDone} />
    </form>
  );
}

/** Starts the server's OAuth authorization and opens its page in the browser (the desktop sends
 * `window.open` to the system's browser); `onStarted` gets the page, shown in case none opened. */
function AuthorizeButton({ server, actions, onStarted, onError }: { server: McpServerInfo; actions: McpActions; onStarted(url: string): void; onError(message: string): void }) {
  const [busy, setBusy] = useState(false);
  async function authorize() {
    setBusy(true);
    try {
      const started = await actions.authorize(server.name);
      onStarted(started.url);
      window.open(started.url, "_blank", "noopener,noreferrer");
    } catch (e) {
      onError(toApiError(e).message);
    } finally {
      setBusy(false);
    }
  }
  return (
    <button type="button" className="button button-small" aria-label={`Authorize MCP server ${server.name}`} disabled={busy} onClick={() => void authorize()}>
      {server.state === "authorizing" ? "Authorize again" : "Authorize"}
    </button>
  );
}

function Server({ server, actions, onError }: { server: McpServerInfo; actions: McpActions; onError(message: string): void }) {
  const [confirmRemove, setConfirmRemove] = useState(false);
  const run = (p: Promise<unknown>) => void p.catch((e: unknown) => onError(toApiError(e).message));
  const disabled = server.state === "disabled";
  const wantsAuthorization = server.state === "needs_authorization" || server.state === "authorizing";
  const [authPage, setAuthPage] = useState<string | null>(null);
  return (
    <li className="mcp-server" data-mcp-server={server.name}>
      <div className="mcp-server-head">
        <strong>{server.name}</strong>
        <span className={`mcp-state mcp-state-${server.state}`}>{STATE_LABEL[server.state]}</span>
        {server.keep_connected ? <span className="badge">kept connected</span> : null}
        <span className="mcp-server-actions">
          {wantsAuthorization ? <AuthorizeButton server={server} actions={actions} onStarted={setAuthPage} onError={onError} /> : null}
          <button
            type="button"
            className="button button-small"
            aria-label={`${disabled ? "Enable" : "Disable"} MCP server ${server.name}`}
            onClick={() => run(actions.setEnabled(server.name, disabled))}
          >
            {disabled ? "Enable" : "Disable"}
          </button>
          {confirmRemove ? (
            <button type="button" className="button button-small button-danger" onClick={() => run(actions.remove(server.name))}>
              Confirm remove
            </button>
          ) : (
            <button type="button" className="button button-small" aria-label={`Remove MCP server ${server.name}`} onClick={() => setConfirmRemove(true)}>
              Remove
            </button>
          )}
        </span>
      </div>
      {server.description ? <p className="mcp-description">{server.description}</p> : null}
      {authPage && server.state === "authorizing" ? (
        <p className="mcp-authorize-hint">
          Consent in the browser page that opened; if none did, open{" "}
          <a href={authPage} target="_blank" rel="noopener noreferrer">
            the authorization page
          </a>
          .
        </p>
      ) : null}
      <code className="mcp-endpoint">{server.endpoint}</code>
      {server.error ? (
        <p className="mcp-error" role="alert">
          {server.error}
          {server.log_path ? (
            <>
              {" "}
              — log: <code>{server.log_path}</code>
            </>
          ) : null}
        </p>
      ) : null}
      {server.tools.length > 0 ? (
        <table className="mcp-tools" aria-label={`Tools of ${server.name}`}>
          <thead>
            <tr>
              <th scope="col">Tool</th>
              <th scope="col">Approval</th>
              <th scope="col">Description</th>
            </tr>
          </thead>
          <tbody>
            {server.tools.map((t) => (
              <tr key={t.name}>
                <td>
                  <code>{t.name}</code>
                </td>
                <td>{t.read_only ? "Read-only, runs freely" : "Asks first"}</td>
                <td>{t.description.split("\n")[0]}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {server.log_lines.length > 0 ? (
        <details className="mcp-log">
          <summary>Last log lines</summary>
          <pre aria-label={`Last log lines of ${server.name}`}>{server.log_lines.join("\n")}</pre>
        </details>
      ) : null}
    </li>
  );
}

export function McpSection() {
  const { data, error, isPending, isError, refetch } = useMcpServers();
  const start = useStartMcpServers();
  const actions = useMcpActions();
  const [adding, setAdding] = useState(false);
  const [editError, setEditError] = useState<string | null>(null);
  const addPart = adding ? (
    <AddServerForm actions={actions} onDone={() => setAdding(false)} />
  ) : (
    <button type="button" className="button" onClick={() => setAdding(true)}>
      Add a server
    </button>
  );
  let body;
  if (isPending) body = <Loading label="Loading MCP servers…" />;
  else if (isError) body = <ErrorView title="Could not list the MCP servers" error={error} onRetry={() => void refetch()} />;
  else if (data.length === 0)
    body = (
      <>
        <p>No MCP servers yet. Add one here or declare them in config.yml; agents activate a server when they need its tools.</p>
        <pre className="mcp-example">{EXAMPLE}</pre>
        {addPart}
      </>
    );
  else
    body = (
      <>
        <p>
          Agents see a server's tools after activating it (for the session, or for a sub-agent until its task ends).
          Tools the server does not call read-only ask for approval first.
        </p>
        <ul className="mcp-servers">
          {data.map((s) => (
            <Server key={s.name} server={s} actions={actions} onError={setEditError} />
          ))}
        </ul>
        {editError ? (
          <p className="form-error" role="alert">
            {editError}
          </p>
        ) : null}
        <button type="button" className="button" onClick={() => start.mutate()} disabled={start.isPending}>
          {start.isPending ? "Starting…" : "Start servers and list their tools"}
        </button>
        {start.isError ? <ErrorView title="Could not start the servers" error={start.error} /> : null}
        <div className="mcp-add">{addPart}</div>
      </>
    );
  return (
    <section className="settings-section" aria-labelledby="mcp-title">
      <h2 id="mcp-title">MCP servers</h2>
      {body}
    </section>
  );
}
