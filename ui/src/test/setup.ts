// Per-test reset: unmount React trees and return the address bar and storage to a blank state.
import { cleanup, configure } from "@testing-library/react";
import { afterEach } from "vitest";
import { FakeResizeObserver, installLayout, setViewportHeight } from "./viewport";

// Virtual lists measure their viewport with a ResizeObserver, which jsdom lacks.
window.ResizeObserver = FakeResizeObserver as unknown as typeof ResizeObserver;
installLayout();
// ...and scrolls them with `scrollTo`, which jsdom's elements lack: move `scrollTop`.
Element.prototype.scrollTo = function scrollTo(this: Element, a?: ScrollToOptions | number, b?: number) {
  const top = typeof a === "number" ? b : a?.top;
  if (top !== undefined) this.scrollTop = top;
  // A browser reports the move with a scroll event, which is how the list learns its offset.
  queueMicrotask(() => this.dispatchEvent(new Event("scroll")));
} as Element["scrollTo"];
Element.prototype.scrollBy = function scrollBy(this: Element, a?: ScrollToOptions | number, b?: number) {
  const by = typeof a === "number" ? b : a?.top;
  if (by !== undefined) this.scrollTop += by;
  queueMicrotask(() => this.dispatchEvent(new Event("scroll")));
} as Element["scrollBy"];

// Grammars load through dynamic imports, which a busy machine can take over a second to serve.
configure({ asyncUtilTimeout: 5000 });

afterEach(() => {
  cleanup();
  setViewportHeight(100_000);
  window.history.replaceState(null, "", "/");
  window.sessionStorage.clear();
});
