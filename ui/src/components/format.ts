// Human-readable renderings of wire values (timestamps, counts) shared by the pages.
const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });

export function formatTimestamp(iso: string | null): string {
  if (!iso) return "—";
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : dateTime.format(d);
}

export function formatCount(n: number): string {
  return n.toLocaleString();
}

export function pageCount(total: number, perPage: number): number {
  return Math.max(1, Math.ceil(total / Math.max(1, perPage)));
}

/** A span of seconds as people say it: "45 s", "12 min", "1 h 5 min", "2 d". */
export function formatSpan(secs: number): string {
  if (secs < 60) return `${Math.max(0, Math.floor(secs))} s`;
  if (secs < 3600) return `${Math.floor(secs / 60)} min`;
  if (secs < 86_400) {
    const m = Math.floor((secs % 3600) / 60);
    return `${Math.floor(secs / 3600)} h${m ? ` ${m} min` : ""}`;
  }
  return `${Math.floor(secs / 86_400)} d`;
}
