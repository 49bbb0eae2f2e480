// #settings: shows what is known today (the connection) and names what is still to come.
import { useBackend } from "../backend";
import { EmptyPage } from "../components/StatusViews";

export function SettingsPage() {
  const backend = useBackend();
  return (
    <EmptyPage title="Settings" lead="Editing settings from the app is not available yet in this build.">
      <dl className="facts">
        <dt>Connection</dt>
        <dd>{backend.kind === "tauri" ? "Desktop app (local engine)" : "Browser, via skald serve"}</dd>
      </dl>
      <p>This page will hold:</p>
      <ul className="placeholder-list">
        <li>General properties: home source, TIC interval, date rounding.</li>
        <li>Models and providers, with the fallback order.</li>
        <li>MCP servers and agents.</li>
        <li>The debug toggle and the request log.</li>
      </ul>
      <p className="muted">
        Meanwhile the configuration lives in <code>config.yml</code> in the Skald data folder.
      </p>
    </EmptyPage>
  );
}
