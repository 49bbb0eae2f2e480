// The always-visible navigation: one link per top-level page, the current one marked for AT.
import { useInbox, useOpenInterruptedCalls } from "../backend";
import type { Route } from "./route";
import { DEFAULT_CHAT_SOURCE } from "./route";

type Item = { label: string; href: string; matches: (r: Route) => boolean; icon: string };

const ITEMS: Item[] = [
  { label: "Chat", href: `#chat/${DEFAULT_CHAT_SOURCE}`, matches: (r) => r.name === "chat", icon: "M4 5h16v10H8l-4 4z" },
  { label: "Inbox", href: "#inbox", matches: (r) => r.name === "inbox", icon: "M4 13l2-8h12l2 8v6H4zM4 13h5l1 2h4l1-2h5" },
  { label: "Sessions", href: "#sessions", matches: (r) => r.name === "sessions", icon: "M5 6h14M5 12h14M5 18h14" },
  { label: "TIC", href: "#tic", matches: (r) => r.name === "tic", icon: "M12 4a8 8 0 1 0 0 16a8 8 0 1 0 0-16M12 8v4l3 2" },
  { label: "Jobs", href: "#jobs", matches: (r) => r.name === "jobs", icon: "M4 6h16v14H4zM4 10h16M8 3v5M16 3v5M8 14h3v3H8z" },
  { label: "Memory", href: "#memory", matches: (r) => r.name === "memory", icon: "M6 4h9l3 3v13H6zM9 9h6M9 13h6M9 17h4" },
  { label: "Settings", href: "#settings", matches: (r) => r.name === "settings", icon: "M12 9a3 3 0 1 0 0 6a3 3 0 1 0 0-6M12 3v3M12 18v3M3 12h3M18 12h3M5.6 5.6l2.1 2.1M16.3 16.3l2.1 2.1M5.6 18.4l2.1-2.1M16.3 7.7l2.1-2.1" },
];

export function Sidebar({ route }: { route: Route }) {
  const { count } = useInbox();
  // Calls a restart cut off wait for the user's word like approvals do (the tray counts them too).
  const interrupted = useOpenInterruptedCalls().length;
  return (
    <nav className="sidebar" aria-label="Main">
      <div className="brand" aria-hidden="true">
        Skald
      </div>
      <ul>
        {ITEMS.map((item) => {
          const current = item.matches(route);
          const waiting = item.href === "#inbox" ? (count ?? 0) + interrupted : 0;
          return (
            <li key={item.label}>
              <a
                href={item.href}
                aria-current={current ? "page" : undefined}
                className="nav-link"
              >
                <svg viewBox="0 0 24 24" width="16" height="16" aria-hidden="true" focusable="false">
                  <path d={item.icon} fill="none" stroke="currentColor" strokeWidth="1.6" strokeLinejoin="round" strokeLinecap="round" />
                </svg>
                <span>{item.label}</span>
                {/* Named by what it shows ("Inbox 3 waiting"), so the visible text is in the name. */}
                {waiting ? (
                  <>
                    {" "}
                    <span className="nav-badge">
                      {waiting > 99 ? "99+" : waiting} <span className="visually-hidden">waiting</span>
                    </span>
                  </>
                ) : null}
              </a>
            </li>
          );
        })}
      </ul>
    </nav>
  );
}
