// Prev / Next controls with "page N of M"; the caller owns the page number (it lives in the URL).
import { pageCount } from "./format";

export function Pagination({
  page,
  perPage,
  total,
  onPage,
  busy = false,
}: {
  page: number;
  perPage: number;
  total: number;
  onPage: (page: number) => void;
  busy?: boolean;
}) {
  const pages = pageCount(total, perPage);
  return (
    <nav className="pagination" aria-label="Pagination">
      <button type="button" className="button" disabled={page <= 1} onClick={() => onPage(page - 1)}>
        Prev
      </button>
      <span className="pagination-label" aria-live="polite" aria-busy={busy}>
        page {page} of {pages}
      </span>
      <button type="button" className="button" disabled={page >= pages} onClick={() => onPage(page + 1)}>
        Next
      </button>
      <span className="muted pagination-total">
        {total.toLocaleString()} {total === 1 ? "session" : "sessions"}
      </span>
    </nav>
  );
}
