// The app frame: sidebar plus the page the current hash names.
import { useEffect, useRef, useState } from "react";
import { useSettings } from "../backend";
import { Loading } from "../components/StatusViews";
import { ChatPage } from "../pages/ChatPage";
import { InboxPage } from "../pages/InboxPage";
import { JobsPage } from "../pages/JobsPage";
import { MemoryPage } from "../pages/MemoryPage";
import { NotFoundPage } from "../pages/NotFoundPage";
import { SessionDetailPage } from "../pages/SessionDetailPage";
import { SessionsPage } from "../pages/SessionsPage";
import { SettingsPage } from "../pages/SettingsPage";
import { TicPage } from "../pages/TicPage";
import { PageBoundary } from "./PageBoundary";
import { useNavigate, useRoute, type Route } from "./route";
import { Sidebar } from "./Sidebar";

/** How the error of a page that failed to render names it. */
const PAGE_TITLE: Record<Route["name"], string> = {
  chat: "The chat",
  inbox: "The inbox",
  sessions: "The session list",
  session: "The session",
  tic: "The TIC list",
  jobs: "The jobs page",
  memory: "The memory page",
  settings: "Settings",
  not_found: "This page",
};

function Page({ route }: { route: Route }) {
  switch (route.name) {
    case "chat":
      return <ChatPage source={route.source} focus={route.focus} />;
    case "inbox":
      return <InboxPage />;
    case "sessions":
      return <SessionsPage params={route.params} />;
    case "session":
      return <SessionDetailPage id={route.id} focus={route.focus} />;
    case "tic":
      return <TicPage page={route.page} />;
    case "jobs":
      return <JobsPage openJob={route.job} />;
    case "memory":
      return <MemoryPage file={route.file} />;
    case "settings":
      return <SettingsPage />;
    case "not_found":
      return <NotFoundPage hash={route.hash} />;
  }
}

/**
 * First run: with no LLM client configured the chat cannot answer, so the first visit to a chat
 * goes to #settings and its guide instead. Only once per app load, so Chat stays reachable.
 */
function useFirstRunRedirect(route: Route): boolean {
  const { data, isError } = useSettings();
  const navigate = useNavigate();
  // Decided once, when the settings first arrive: "redirect" until the address has moved away
  // from the chat, then "done". A user who already chose another page is not pulled away later.
  const [decision, setDecision] = useState<"waiting" | "redirect" | "done">("waiting");
  if (decision === "waiting" && data) {
    setDecision(route.name === "chat" && data.clients.length === 0 ? "redirect" : "done");
  } else if (decision === "redirect" && route.name !== "chat") {
    setDecision("done");
  }
  useEffect(() => {
    if (decision === "redirect") navigate("#settings", { replace: true });
  }, [decision, navigate]);
  // Hold the chat back until we know: mounting it would already create a session for the source.
  return route.name === "chat" && (decision === "redirect" || (decision === "waiting" && !isError));
}

export function App() {
  const route = useRoute();
  const holdChat = useFirstRunRedirect(route);
  const mainRef = useRef<HTMLElement>(null);
  const pageName = route.name;
  const first = useRef(true);

  // Move focus to the new page (not on first load) so keyboard and screen-reader users land on it.
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    mainRef.current?.focus({ preventScroll: true });
  }, [pageName]);

  return (
    <div className="app-frame" data-testid="app-frame">
      <Sidebar route={route} />
      <main className="main" ref={mainRef} tabIndex={-1}>
        {holdChat ? (
          <Loading label="Loading…" />
        ) : (
          <PageBoundary page={PAGE_TITLE[route.name]} resetKey={JSON.stringify(route)}>
            <Page route={route} />
          </PageBoundary>
        )}
      </main>
    </div>
  );
}
