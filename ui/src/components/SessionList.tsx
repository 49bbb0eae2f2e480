// A paginated session table backed by the engine, with loading / empty / error states.
import type { MouseEvent } from "react";
import { useSessions, type SessionListQuery, type SessionSummary } from "../backend";
import { formatCount, formatTimestamp } from "./format";
import { Pagination } from "./Pagination";
import { SearchHitLine, hitHref } from "./SearchHit";
import { Empty, ErrorView, Loading } from "./StatusViews";
import { Visible } from "./visible";

export type SessionListVariant = "all" | "tic";

function SessionTitle({ s }: { s: SessionSummary }) {
  return (
    <span className="session-title">
      <span className={s.title ? "" : "muted"}>{s.title ? <Visible text={s.title} mode="line" /> : "Untitled session"}</span>
      <span className="badges">
        <span className="badge badge-source">{s.source}</span>
        {s.is_ephemeral ? <span className="badge">ephemeral</span> : null}
      </span>
    </span>
  );
}

export function SessionList({
  query,
  variant,
  filtered,
  onPage,
  onOpen,
}: {
  query: SessionListQuery;
  variant: SessionListVariant;
  /** Whether a filter narrows the list, which changes what "empty" means. */
  filtered: boolean;
  onPage: (page: number) => void;
  /** Opens a row: `href` is the session, or the session at its best search hit. */
  onOpen: (href: string) => void;
}) {
  const result = useSessions(query);
  const { data, error, isPending, isError, isFetching, isPlaceholderData, refetch } = result;

  let body;
  if (isPending) {
    body = <Loading label="Loading sessions…" />;
  } else if (isError) {
    body = <ErrorView title="Could not load sessions" error={error} onRetry={() => void refetch()} />;
  } else if (data.items.length === 0 && data.total === 0) {
    body = filtered ? (
      <Empty title="No sessions match">Try another source or search term.</Empty>
    ) : (
      <Empty title="No sessions yet">
        {variant === "tic"
          ? "TIC ticks create a session each time they run."
          : "Sessions appear here once you chat with an agent or a background job runs."}
      </Empty>
    );
  } else if (data.items.length === 0) {
    body = (
      <Empty title={`Nothing on page ${query.page}`}>
        <button type="button" className="button" onClick={() => onPage(1)}>
          Go to the first page
        </button>
      </Empty>
    );
  } else {
    const open = (href: string) => (event: MouseEvent) => {
      // Let the link itself, and modified clicks, behave natively.
      if ((event.target as HTMLElement).closest("a") || event.metaKey || event.ctrlKey) return;
      onOpen(href);
    };
    body = (
      <>
        <div className="table-wrap" aria-busy={isFetching}>
          <table className={`table${isPlaceholderData ? " is-stale" : ""}`}>
            <thead>
              {variant === "tic" ? (
                <tr>
                  <th scope="col" className="col-id">ID</th>
                  <th scope="col">Agent</th>
                  <th scope="col">Created</th>
                  <th scope="col" className="col-num">Messages</th>
                  <th scope="col">Last message</th>
                </tr>
              ) : (
                <tr>
                  <th scope="col" className="col-id">ID</th>
                  <th scope="col">Title / source</th>
                  <th scope="col">Agent</th>
                  <th scope="col" className="col-num">Messages</th>
                  <th scope="col">Last activity</th>
                </tr>
              )}
            </thead>
            <tbody>
              {data.items.map((s) => (
                <tr
                  key={s.id}
                  className="row-link"
                  onClick={open(s.best_hit ? hitHref(s.best_hit) : `#session/${s.id}`)}
                  data-session-id={s.id}
                >
                  <td className="col-id">
                    <a href={`#session/${s.id}`} aria-label={`Open session ${s.id}`}>
                      #{s.id}
                    </a>
                  </td>
                  {variant === "tic" ? (
                    <>
                      <td>{s.agent_id}</td>
                      <td>{formatTimestamp(s.created_at)}</td>
                    </>
                  ) : (
                    <>
                      <td>
                        <SessionTitle s={s} />
                        {s.best_hit ? <SearchHitLine hit={s.best_hit} count={s.hit_count} /> : null}
                      </td>
                      <td>{s.agent_id}</td>
                    </>
                  )}
                  <td className="col-num">{formatCount(s.message_count)}</td>
                  <td>{formatTimestamp(s.last_message_at ?? (variant === "tic" ? null : s.created_at))}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <Pagination page={query.page} perPage={data.per_page} total={data.total} onPage={onPage} busy={isFetching} />
      </>
    );
  }

  return (
    <div className="session-list" data-testid="session-list">
      {body}
    </div>
  );
}
