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

export class FakeResizeObserver {
  constructor(private readonly callback: ResizeObserverCallback) {}
  /** Reports in a microtask, as a browser reports before the next paint: an `await act(async
   * ...)` shows the rows it added. */
  observe(target: Element): void {
    queueMicrotask(() => {
      const height = target.classList.contains("virtual-scroll") ? viewportHeight : rowHeight;
      const entry = { target, contentRect: { width: 800, height } } as unknown as ResizeObserverEntry;
      this.callback([entry], this as unknown as ResizeObserver);
    });
  }
  unobserve(): void {}
  disconnect(): void {}
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
