// #sessions: every session, filterable by source and full-text search (each match shown with its
// best snippet, linked to where it is); filters and page live in the URL.
import { useEffect, useEffectEvent, useId, useState } from "react";
import { formatRoute, useNavigate, type ListParams } from "../app/route";
import { SessionList } from "../components/SessionList";

export const SESSIONS_PER_PAGE = 25;
const SEARCH_DEBOUNCE_MS = 300;
const KNOWN_SOURCES = ["web", "tic", "cron", "task", "cli"];

export function SessionsPage({ params }: { params: ListParams }) {
  const navigate = useNavigate();
  const sourceId = useId();
  const searchId = useId();
  const [search, setSearch] = useState(params.search ?? "");

  // Follow the URL when it changes from outside (back/forward, a typed link): the box takes the
  // URL's text in the same render.
  const [urlSearch, setUrlSearch] = useState(params.search);
  if (urlSearch !== params.search) {
    setUrlSearch(params.search);
    setSearch(params.search ?? "");
  }

  const go = (next: Partial<ListParams>, replace = false) =>
    navigate(formatRoute({ name: "sessions", params: { ...params, ...next } }), { replace });

  // With the other filters of the render the timer fires in; only the typed text and the URL's
  // value re-arm it.
  const searchFor = useEffectEvent((wanted: string | null) => go({ search: wanted, page: 1 }, true));
  useEffect(() => {
    const wanted = search.trim() || null;
    if (wanted === params.search) return;
    const timer = setTimeout(() => searchFor(wanted), SEARCH_DEBOUNCE_MS);
    return () => clearTimeout(timer);
  }, [search, params.search]);

  const filtered = params.source !== null || params.search !== null;

  return (
    <section className="page" aria-labelledby="page-title">
      <header className="page-header">
        <h1 id="page-title">Sessions</h1>
        <p className="muted">Every conversation and background run the engine has stored.</p>
      </header>
      <form className="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <div className="field">
          <label htmlFor={sourceId}>Source</label>
          <select
            id={sourceId}
            value={params.source ?? ""}
            onChange={(e) => go({ source: e.target.value || null, page: 1 })}
          >
            <option value="">All sources</option>
            {[...new Set([...KNOWN_SOURCES, ...(params.source ? [params.source] : [])])].map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </div>
        <div className="field field-grow">
          <label htmlFor={searchId}>Search</label>
          <input
            id={searchId}
            type="search"
            placeholder="Title, message text, tool, path or command"
            value={search}
            onChange={(e) => setSearch(e.target.value)}
          />
        </div>
      </form>
      <SessionList
        query={{ source: params.source, search: params.search, page: params.page, per_page: SESSIONS_PER_PAGE }}
        variant="all"
        filtered={filtered}
        onPage={(page) => go({ page })}
        onOpen={(href) => navigate(href)}
      />
    </section>
  );
}
