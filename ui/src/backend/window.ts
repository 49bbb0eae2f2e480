// Windows of a session tree: the rows loaded so far, grown by earlier and later pages, and the
// streamed-token batching that keeps a long conversation at one render per animation frame.
import type { DebugMessage, ItemRef, SessionWindow, WindowQuery } from "./bindings";

/** Rows asked for per page: a few screens of a conversation. */
export const PAGE_ROWS = 100;

export const latestQuery: WindowQuery = { anchor: { type: "latest" }, limit: PAGE_ROWS };
export const beforeQuery = (item: ItemRef): WindowQuery => ({ anchor: { type: "before", item }, limit: PAGE_ROWS });
export const afterQuery = (item: ItemRef): WindowQuery => ({ anchor: { type: "after", item }, limit: PAGE_ROWS });
export const aroundQuery = (item: ItemRef): WindowQuery => ({ anchor: { type: "around", item }, limit: PAGE_ROWS });

/** The reference the engine pages from (the TS side of `ItemRef::of`). */
export function itemRef(m: DebugMessage): ItemRef {
  switch (m.kind) {
    case "user":
    case "thinking":
    case "assistant":
      return { type: "message", id: m.message_id };
    case "tool":
      return { type: "tool", id: m.tool_call_id };
    case "agent":
      return { type: "agent", stack_id: m.stack_id };
    case "agent_end":
      return { type: "agent_end", stack_id: m.stack_id };
  }
}

export function refKey(ref: ItemRef): string {
  switch (ref.type) {
    case "message":
    case "tool":
      return `${ref.type}-${ref.id}`;
    case "agent":
    case "agent_end":
      return `${ref.type}-${ref.stack_id}`;
  }
}

export const rowKey = (m: DebugMessage): string => refKey(itemRef(m));

/** Loaded rows of a tree and whether the session has more on either side. */
export type TreeWindow = {
  rows: DebugMessage[];
  hasMoreBefore: boolean;
  hasMoreAfter: boolean;
  /** The row a jump landed on, highlighted until the next jump. */
  focus: string | null;
};

export function windowFrom(page: SessionWindow): TreeWindow {
  const anchor = page.anchor_index === null ? undefined : page.items[page.anchor_index];
  return {
    rows: page.items,
    hasMoreBefore: page.has_more_before,
    hasMoreAfter: page.has_more_after,
    focus: anchor ? rowKey(anchor) : null,
  };
}

/** Joins `a` then `b`, leaving out rows of `b` that `a` already holds (a page read twice). */
function join(a: DebugMessage[], b: DebugMessage[]): DebugMessage[] {
  const seen = new Set(a.map(rowKey));
  return [...a, ...b.filter((m) => !seen.has(rowKey(m)))];
}

/** An earlier page (read `before` the first row) goes on top. */
export function prependPage(w: TreeWindow, page: SessionWindow): TreeWindow {
  return { ...w, rows: join(page.items, w.rows), hasMoreBefore: page.has_more_before };
}

/** A later page (read `after` the last row) goes below; the newest rows replace stale copies. */
export function appendPage(w: TreeWindow, page: SessionWindow): TreeWindow {
  const fresh = new Map(page.items.map((m) => [rowKey(m), m]));
  const kept = w.rows.map((m) => fresh.get(rowKey(m)) ?? m);
  return { ...w, rows: join(kept, page.items), hasMoreAfter: page.has_more_after };
}

/** The rows after row `index` as a read after it answers them (the session's rows, newest in
 * the tree's order: a running frame's new rows go before its closing row). */
export function replaceAfter(w: TreeWindow, index: number, page: SessionWindow): TreeWindow {
  const kept = w.rows.slice(0, index + 1);
  const seen = new Set(kept.map(rowKey));
  return { ...w, rows: [...kept, ...page.items.filter((m) => !seen.has(rowKey(m)))], hasMoreAfter: page.has_more_after };
}

/** Replaces one row (a whole row fetched on expand, or a call whose status changed). */
export function replaceRow(w: TreeWindow, row: DebugMessage): TreeWindow {
  const key = rowKey(row);
  return { ...w, rows: w.rows.map((m) => (rowKey(m) === key ? row : m)) };
}

/**
 * Hands events to `flush` in order, at most once per animation frame while tokens stream: a
 * token delta waits for the frame, and anything behind a waiting delta waits with it. Other
 * events go out at once when nothing waits.
 */
export function frameBatcher<T>(
  flush: (batch: T[]) => void,
  waitsForFrame: (item: T) => boolean,
  schedule: (run: () => void) => number = (run) => requestAnimationFrame(run),
  unschedule: (handle: number) => void = (handle) => cancelAnimationFrame(handle),
): { push(item: T): void; cancel(): void } {
  let queue: T[] = [];
  let handle: number | null = null;
  const run = () => {
    handle = null;
    const batch = queue;
    queue = [];
    if (batch.length > 0) flush(batch);
  };
  return {
    push(item) {
      if (queue.length === 0 && !waitsForFrame(item)) {
        flush([item]);
        return;
      }
      queue.push(item);
      if (handle === null) handle = schedule(run);
    },
    cancel() {
      if (handle !== null) unschedule(handle);
      handle = null;
      queue = [];
    },
  };
}
