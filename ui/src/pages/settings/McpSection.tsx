// MCP servers: what config.yml's mcp.servers declares, where each stands, and its tools.
import { useMcpServers, useStartMcpServers, type McpServerInfo, type McpServerState } from "../../backend";
import { ErrorView, Loading } from "../../components/StatusViews";

const STATE_LABEL: Record<McpServerState, string> = {
  disabled: "Disabled",
  not_started: "Starts when an agent activates it",
  ready: "Running",
  failed: "Failed to start",
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

function Server({ server }: { server: McpServerInfo }) {
  return (
    <li className="mcp-server" data-mcp-server={server.name}>
      <div className="mcp-server-head">
        <strong>{server.name}</strong>
        <span className={`mcp-state mcp-state-${server.state}`}>{STATE_LABEL[server.state]}</span>
      </div>
      {server.description ? <p className="mcp-description">{server.description}</p> : null}
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
    </li>
  );
}

export function McpSection() {
  const { data, error, isPending, isError, refetch } = useMcpServers();
  const start = useStartMcpServers();
  let body;
  if (isPending) body = <Loading label="Loading MCP servers…" />;
  else if (isError) body = <ErrorView title="Could not list the MCP servers" error={error} onRetry={() => void refetch()} />;
  else if (data.length === 0)
    body = (
      <>
        <p>No MCP servers yet. Declare them in config.yml; agents activate a server when they need its tools.</p>
        <pre className="mcp-example">{EXAMPLE}</pre>
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
            <Server key={s.name} server={s} />
          ))}
        </ul>
        <button type="button" className="button" onClick={() => start.mutate()} disabled={start.isPending}>
          {start.isPending ? "Starting…" : "Start servers and list their tools"}
        </button>
        {start.isError ? <ErrorView title="Could not start the servers" error={start.error} /> : null}
      </>
    );
  return (
    <section className="settings-section" aria-labelledby="mcp-title">
      <h2 id="mcp-title">MCP servers</h2>
      {body}
    </section>
  );
}
