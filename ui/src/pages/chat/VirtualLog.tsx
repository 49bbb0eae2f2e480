// A windowed conversation list (virtua): only the rows on screen are in the DOM; the position
// holds when earlier rows are put on top, follows the end only while the reader is at the end,
// and asks for more rows at either edge. Its "jump to latest" and "jump to the pending
// approval" buttons float over it; the latter only while that row is off screen, as an
// IntersectionObserver on the row reports.
import {
  createContext,
  useCallback,
  useContext,
  useEffect,
  useLayoutEffect,
  useMemo,
  useRef,
  useState,
  type ReactNode,
  type Ref,
} from "react";
import { Virtualizer, type CustomContainerComponentProps, type CustomItemComponentProps, type VirtualizerHandle } from "virtua";
import type { ItemRef } from "../../backend";
import { refKey } from "../../backend/window";
import { useLatest } from "../../lib/useLatest";

/** How close to an edge (px) counts as being at it. */
const EDGE = 48;
/** Earlier rows are asked for this far (px) before the reader reaches the top. */
const PREFETCH = 800;

export interface VirtualLogProps<T> {
  rows: T[];
  rowKey(row: T): string;
  /** What the row's `<li>` says of it (`data-kind`, for tests and styles; `data-key` is its key). */
  rowKind(row: T): string;
  renderRow(row: T): ReactNode;
  /** Rows exist before / after the loaded ones. */
  hasMoreBefore: boolean;
  hasMoreAfter: boolean;
  onReachTop(): void;
  onReachBottom(): void;
  /** Key of the row to bring to the middle of the screen and mark (a jump); `null` for none. */
  focus: string | null;
  /** Changes when the rows are reloaded from scratch: starts again at the end (or the focus). */
  generation: number;
  /** A page is being read at an edge. */
  paging: boolean;
  /** The oldest call waiting for a decision, loaded or not (the jump button's target). */
  pendingApproval: ItemRef | null;
  /** Makes `target` (`null`: the newest row) the focus, loading it if needed. */
  onJump(target: ItemRef | null): Promise<void>;
  /** Accessible name of the list. */
  label: string;
  /** Class of the `<ol>`. */
  className: string;
}

export function VirtualLog<T>(props: VirtualLogProps<T>) {
  const { rows, rowKey, focus, generation, hasMoreBefore, hasMoreAfter } = props;
  // Bumped by the jump buttons, so the list scrolls even when the target did not change.
  const [jumps, setJumps] = useState(0);
  const scroller = useRef<HTMLDivElement>(null);
  const list = useRef<VirtualizerHandle>(null);
  // Follow the end only while the reader is there (new rows, streamed text growing).
  const atEnd = useRef(true);
  const [atEndShown, setAtEndShown] = useState(true);
  // The pending approval's row is on screen: its jump button would go nowhere, so it hides.
  const [pendingOnScreen, setPendingOnScreen] = useState(false);
  // Watches the pending row while it is in the DOM (a row scrolled far away is not, so it is off
  // screen): any part of it inside the scroller's viewport counts, whatever moved it there.
  const watchPending = useCallback((row: HTMLElement) => {
    const observer = new IntersectionObserver(
      (entries) => {
        const last = entries.at(-1);
        if (last) setPendingOnScreen(last.isIntersecting);
      },
      { root: scroller.current },
    );
    observer.observe(row);
    return () => {
      observer.disconnect();
      setPendingOnScreen(false);
    };
  }, []);
  const latestRef = useLatest(props);

  // Earlier rows put on top keep what the reader sees in place: `shift` is worked out once per
  // new `rows` (the old first row is still there, under new ones) and kept with them; it only
  // matters to virtua on the render where the count changed.
  const firstKey = rows.length > 0 ? rowKey(rows[0] as T) : null;
  const [shown, setShown] = useState({ rows, firstKey, prepended: false });
  let prepended = shown.prepended;
  if (shown.rows !== rows) {
    const before = shown.firstKey;
    prepended = before !== null && firstKey !== before && rows.some((r) => rowKey(r) === before);
    setShown({ rows, firstKey, prepended });
  }

  const setAtEnd = useCallback((value: boolean) => {
    atEnd.current = value;
    setAtEndShown(value);
  }, []);

  /** Scrolls to the newest row and follows the end from now on (the button state is the caller's). */
  const scrollToEnd = useCallback(() => {
    const n = latestRef.current.rows.length;
    if (n > 0) list.current?.scrollToIndex(n - 1, { align: "end" });
    atEnd.current = true;
  }, [latestRef]);

  const toEnd = useCallback(() => {
    scrollToEnd();
    setAtEndShown(true);
  }, [scrollToEnd]);

  const jump = async (target: ItemRef | null) => {
    await props.onJump(target);
    setJumps((n) => n + 1);
    if (target === null) setAtEndShown(true);
  };
  // "Jump to latest" with the newest rows loaded: scroll there once they are rendered.
  const endSeq = focus === null ? jumps : -1;
  useLayoutEffect(() => {
    if (endSeq > 0) scrollToEnd();
  }, [endSeq, scrollToEnd]);

  // A fresh window is placed once the list knows its viewport: at its focus, or at its end.
  const positioned = useRef(false);
  // Set while a programmatic scroll has not been reported yet: the old offset means nothing.
  const settling = useRef(false);
  const place = useCallback(() => {
    const v = list.current;
    if (!v || v.viewportSize === 0) return;
    positioned.current = true;
    settling.current = v.scrollSize > v.viewportSize;
    const p = latestRef.current;
    const index = p.focus === null ? -1 : p.rows.findIndex((r) => p.rowKey(r) === p.focus);
    // No focus (or it is not loaded): the end, followed from now on; else the focus, centred.
    const end = index < 0;
    if (end) scrollToEnd();
    else v.scrollToIndex(index, { align: "center" });
    setAtEnd(end);
  }, [latestRef, setAtEnd, scrollToEnd]);

  const check = useCallback(() => {
    const v = list.current;
    const el = scroller.current;
    if (!v || !el || !positioned.current) return;
    const p = latestRef.current;
    if (v.scrollSize <= v.viewportSize + EDGE) {
      // Every loaded row is on screen: nothing to scroll, so ask for more at once.
      if (!atEnd.current) setAtEnd(true);
      if (p.hasMoreBefore) p.onReachTop();
      return;
    }
    if (settling.current) return;
    const offset = el.scrollTop;
    const end = offset + v.viewportSize >= v.scrollSize - EDGE;
    if (end !== atEnd.current) setAtEnd(end);
    if (offset < PREFETCH && p.hasMoreBefore) p.onReachTop();
    if (end && p.hasMoreAfter) p.onReachBottom();
  }, [latestRef, setAtEnd]);

  useLayoutEffect(() => {
    positioned.current = false;
    place();
  }, [generation, place]);

  // A jump to a loaded row brings it to the middle of the screen.
  useLayoutEffect(() => {
    if (focus !== null && positioned.current) place();
  }, [focus, jumps, place]);

  // New rows or a growing last row: stay at the end if the reader was there.
  const lastKey = rows.length > 0 ? rowKey(rows[rows.length - 1] as T) : null;
  useLayoutEffect(() => {
    if (positioned.current && atEnd.current && !hasMoreAfter) toEnd();
  }, [rows.length, lastKey, hasMoreAfter, toEnd]);

  // A short page may not fill the screen: keep asking while the top is in view.
  useEffect(() => {
    if (hasMoreBefore) check();
  }, [rows.length, hasMoreBefore, check]);

  const pendingKey = props.pendingApproval ? refKey(props.pendingApproval) : null;
  const context = useMemo<ListInfo>(
    () => ({
      label: props.label,
      className: props.className,
      kinds: rows.map(props.rowKind),
      keys: rows.map(rowKey),
      focus,
      pendingKey,
      watchPending,
    }),
    [props.label, props.className, props.rowKind, rows, rowKey, focus, pendingKey, watchPending],
  );

  const { pendingApproval } = props;
  return (
    <>
      <div
        ref={scroller}
        className="virtual-scroll"
        data-at-end={atEndShown}
        data-more-before={hasMoreBefore}
        tabIndex={0}
      >
        <ListContext.Provider value={context}>
          <Virtualizer
            ref={list}
            scrollRef={scroller}
            as={LogList}
            item={LogItem}
            shift={prepended}
            onScroll={() => {
              settling.current = false;
              check();
            }}
            onResize={() => {
              if (!positioned.current) place();
              else if (atEnd.current && !latestRef.current.hasMoreAfter) toEnd();
            }}
          >
            {rows.map((row) => (
              <RowBody key={rowKey(row)} row={row} render={props.renderRow} />
            ))}
          </Virtualizer>
        </ListContext.Provider>
      </div>
      <div className="log-jumps">
        {props.paging ? (
          <span className="status status-running" role="status">
            Loading more…
          </span>
        ) : null}
        {pendingApproval && !pendingOnScreen ? (
          <button type="button" className="button button-small" onClick={() => void jump(pendingApproval)}>
            Jump to the pending approval
          </button>
        ) : null}
        {!atEndShown || hasMoreAfter ? (
          <button type="button" className="button button-small" onClick={() => void jump(null)}>
            Jump to latest
          </button>
        ) : null}
      </div>
    </>
  );
}

type ListInfo = {
  label: string;
  className: string;
  kinds: string[];
  keys: string[];
  focus: string | null;
  /** The pending approval's row, and how to watch whether it is on screen (returns the stop). */
  pendingKey: string | null;
  watchPending(row: HTMLElement): () => void;
};
const ListContext = createContext<ListInfo | null>(null);

/** The `<ol>` virtua lays the rows out in. */
function LogList({ style, children, ref }: CustomContainerComponentProps) {
  const info = useContext(ListContext);
  return (
    <ol ref={ref} style={style} className={info?.className} aria-label={info?.label}>
      {children}
    </ol>
  );
}

/** Hands `el` to a ref virtua gave (a callback or an object); returns how to take it back. */
function attachRef(ref: Ref<HTMLLIElement> | string | undefined, el: HTMLLIElement): () => void {
  if (typeof ref === "function") {
    const cleanup = ref(el);
    return typeof cleanup === "function" ? cleanup : () => ref(null);
  }
  if (ref && typeof ref === "object") {
    ref.current = el;
    return () => {
      ref.current = null;
    };
  }
  return () => {};
}

/** The `<li>` of one row: its kind, a mark when a jump landed on it, and, for the pending
 * approval's row, the watch of whether it is on screen. */
function LogItem({ style, index, children, ref }: CustomItemComponentProps) {
  const info = useContext(ListContext);
  const key = info?.keys[index];
  const focused = info !== null && info.focus !== null && key === info.focus;
  const watch = info !== null && info.pendingKey !== null && key === info.pendingKey ? info.watchPending : null;
  const attach = useCallback(
    (el: HTMLLIElement) => {
      const detach = attachRef(ref, el);
      const unwatch = watch?.(el);
      return () => {
        unwatch?.();
        detach();
      };
    },
    [ref, watch],
  );
  return (
    <li
      ref={attach}
      style={style}
      data-kind={info?.kinds[index]}
      data-key={info?.keys[index]}
      className={focused ? "log-row is-focus" : "log-row"}
    >
      {children}
    </li>
  );
}

function RowBody<T>({ row, render }: { row: T; render(row: T): ReactNode }) {
  return <>{render(row)}</>;
}
