// #settings: LLM clients and fallback order, approval rules, agents, MCP servers, where Skald keeps
// its files.
import { useState } from "react";
import { useBackend, useSettings } from "../backend";
import { ErrorView, Loading } from "../components/StatusViews";
import { AgentsSection } from "./settings/AgentsSection";
import { ClientsSection, type Editing } from "./settings/ClientsSection";
import { FirstRunGuide } from "./settings/FirstRunGuide";
import { McpSection } from "./settings/McpSection";
import { RulesSection } from "./settings/RulesSection";

export function SettingsPage() {
  const backend = useBackend();
  const { data, error, isPending, isError, refetch } = useSettings();
  const [editing, setEditing] = useState<Editing>(null);

  let clients;
  if (isPending) clients = <Loading label="Loading settings…" />;
  else if (isError) clients = <ErrorView title="Could not load the settings" error={error} onRetry={() => void refetch()} />;
  else
    clients = (
      <>
        {data.clients.length === 0 ? <FirstRunGuide onPreset={(preset) => setEditing({ mode: "add", preset })} /> : null}
        <ClientsSection view={data} editing={editing} onEdit={setEditing} />
      </>
    );

  return (
    <section className="page page-settings" aria-labelledby="page-title">
      <header className="page-header">
        <h1 id="page-title">Settings</h1>
      </header>
      {clients}
      <RulesSection />
      <AgentsSection />
      <McpSection />
      <section className="settings-section" aria-labelledby="files-title">
        <h2 id="files-title">Files</h2>
        <dl className="facts">
          <dt>Data directory</dt>
          <dd>{data ? <code>{data.data_dir}</code> : "…"}</dd>
          <dt>Config file</dt>
          <dd>{data ? <code>{data.config_path}</code> : "…"}</dd>
          <dt>Connection</dt>
          <dd>{backend.kind === "tauri" ? "Desktop app (local engine)" : "Browser, via skald serve"}</dd>
        </dl>
      </section>
    </section>
  );
}
