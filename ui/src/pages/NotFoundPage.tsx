// Shown for any hash no route claims, so a bad link says so instead of showing a blank page.
export function NotFoundPage({ hash }: { hash: string }) {
  return (
    <section className="page" aria-labelledby="page-title">
      <header className="page-header">
        <h1 id="page-title">Page not found</h1>
      </header>
      <div className="placeholder">
        <p className="placeholder-lead">
          There is no page at <code>{hash}</code>.
        </p>
        <p>
          <a href="#chat/web">Go to Chat</a> or <a href="#sessions">browse sessions</a>.
        </p>
      </div>
    </section>
  );
}
