// #tic: the sessions created by periodic TIC ticks, newest first, paginated.
import { formatRoute, useNavigate } from "../app/route";
import { SessionList } from "../components/SessionList";

export const TIC_PER_PAGE = 20;

export function TicPage({ page }: { page: number }) {
  const navigate = useNavigate();
  return (
    <section className="page" aria-labelledby="page-title">
      <header className="page-header">
        <h1 id="page-title">TIC sessions</h1>
        <p className="muted">Each periodic tick runs in its own session; open one to see what the agent did.</p>
      </header>
      <SessionList
        query={{ source: "tic", search: null, page, per_page: TIC_PER_PAGE }}
        variant="tic"
        filtered={false}
        onPage={(p) => navigate(formatRoute({ name: "tic", page: p }))}
        onOpen={(href) => navigate(href)}
      />
    </section>
  );
}
