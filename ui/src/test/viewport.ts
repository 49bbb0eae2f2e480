// jsdom has no layout and no ResizeObserver: this one reports a size the test chooses for each
// observed element, so a virtual list knows its viewport, measures its rows and shows those that
// fit (the scroller is `.virtual-scroll`; every other element is a row).
let viewportHeight = 100_000;
let rowHeight = 40;

/** The scroller's height (the default fits every row of a small test) and each row's. */
export function setViewportHeight(height: number, row = 40): void {
  viewportHeight = height;
  rowHeight = row;
}

/** The observers alive now, so a resize of the window can be reported to them. */
const resizeObservers = new Set<FakeResizeObserver>();
const intersectionObservers = new Set<FakeIntersectionObserver>();

export class FakeResizeObserver {
  private readonly targets = new Set<Element>();
  constructor(private readonly callback: ResizeObserverCallback) {
    resizeObservers.add(this);
  }
  /** Reports in a microtask, as a browser reports before the next paint: an `await act(async
   * ...)` shows the rows it added. */
  observe(target: Element): void {
    this.targets.add(target);
    queueMicrotask(() => this.report(target));
  }
  /** Tells the callback the size `target` has now. */
  report(target: Element): void {
    if (!this.targets.has(target)) return;
    const height = target.classList.contains("virtual-scroll") ? viewportHeight : rowHeight;
    const entry = { target, contentRect: { width: 800, height } } as unknown as ResizeObserverEntry;
    this.callback([entry], this as unknown as ResizeObserver);
  }
  unobserve(target: Element): void {
    this.targets.delete(target);
  }
  disconnect(): void {
    this.targets.clear();
    resizeObservers.delete(this);
  }
}

/** The window got taller or shorter: the scroller takes `height`, and the observers hear of it as
 * a browser's would (its new size; what is on screen now). */
export function resizeViewport(height: number): void {
  viewportHeight = height;
  for (const observer of resizeObservers) {
    for (const scroller of document.querySelectorAll(".virtual-scroll")) observer.report(scroller);
  }
  for (const observer of intersectionObservers) observer.report();
}

/** Rows count as laid out only when they have an offset parent; jsdom gives none. */
export function installLayout(): void {
  Object.defineProperty(HTMLElement.prototype, "offsetParent", {
    configurable: true,
    get(this: HTMLElement) {
      return this.parentElement;
    },
  });
}

/** Resolves after the next animation frame (when batched token deltas reach the page). */
export function nextFrame(): Promise<void> {
  return new Promise((resolve) => requestAnimationFrame(() => resolve()));
}

/** A row's box in its list: virtua places each row at `style.top`; its height is the chosen one. */
function rowBox(target: Element): { top: number; bottom: number } {
  const top = Number.parseFloat((target as HTMLElement).style.top) || 0;
  return { top, bottom: top + rowHeight };
}

/** jsdom has no IntersectionObserver: this one says a row intersects its root (the scroller)
 * when the row's box overlaps the scrolled viewport, on `observe` and after each scroll. */
export class FakeIntersectionObserver {
  private readonly targets = new Set<Element>();
  private readonly root: Element | null;

  constructor(
    private readonly callback: IntersectionObserverCallback,
    options?: IntersectionObserverInit,
  ) {
    this.root = options?.root instanceof Element ? options.root : null;
    this.root?.addEventListener("scroll", this.report);
    intersectionObservers.add(this);
  }

  /** Tells the callback whether each watched row overlaps the viewport now. */
  readonly report = () => {
    if (this.targets.size === 0) return;
    const viewTop = this.root?.scrollTop ?? 0;
    const entries = [...this.targets].map((target) => {
      const { top, bottom } = rowBox(target);
      const isIntersecting = bottom > viewTop && top < viewTop + viewportHeight;
      return { target, isIntersecting, intersectionRatio: isIntersecting ? 1 : 0 } as unknown as IntersectionObserverEntry;
    });
    this.callback(entries, this as unknown as IntersectionObserver);
  };

  observe(target: Element): void {
    this.targets.add(target);
    queueMicrotask(this.report);
  }
  unobserve(target: Element): void {
    this.targets.delete(target);
  }
  disconnect(): void {
    this.targets.clear();
    this.root?.removeEventListener("scroll", this.report);
    intersectionObservers.delete(this);
  }
  takeRecords(): IntersectionObserverEntry[] {
    return [];
  }
}
