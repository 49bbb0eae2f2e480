// The app frame: sidebar plus the page the current hash names.
import { useEffect, useRef } from "react";
import { ChatPage } from "../pages/ChatPage";
import { InboxPage } from "../pages/InboxPage";
import { NotFoundPage } from "../pages/NotFoundPage";
import { SessionDetailPage } from "../pages/SessionDetailPage";
import { SessionsPage } from "../pages/SessionsPage";
import { SettingsPage } from "../pages/SettingsPage";
import { TicPage } from "../pages/TicPage";
import { useRoute, type Route } from "./route";
import { Sidebar } from "./Sidebar";

function Page({ route }: { route: Route }) {
  switch (route.name) {
    case "chat":
      return <ChatPage source={route.source} />;
    case "inbox":
      return <InboxPage />;
    case "sessions":
      return <SessionsPage params={route.params} />;
    case "session":
      return <SessionDetailPage id={route.id} />;
    case "tic":
      return <TicPage page={route.page} />;
    case "settings":
      return <SettingsPage />;
    case "not_found":
      return <NotFoundPage hash={route.hash} />;
  }
}

export function App() {
  const route = useRoute();
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
        <Page route={route} />
      </main>
    </div>
  );
}
