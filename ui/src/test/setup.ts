// Per-test reset: unmount React trees and return the address bar and storage to a blank state.
import { cleanup, configure } from "@testing-library/react";
import { afterEach } from "vitest";
import { FakeIntersectionObserver, FakeResizeObserver, installLayout, setViewportHeight } from "./viewport";

// Virtual lists measure their viewport with a ResizeObserver, which jsdom lacks.
window.ResizeObserver = FakeResizeObserver as unknown as typeof ResizeObserver;
// ...and watch whether a row is on screen with an IntersectionObserver, which it lacks too.
window.IntersectionObserver = FakeIntersectionObserver as unknown as typeof IntersectionObserver;
installLayout();
// ...and scrolls them with `scrollTo`, which jsdom's elements lack: move `scrollTop`.
Element.prototype.scrollTo = function scrollTo(this: Element, a?: ScrollToOptions | number, b?: number) {
  const top = typeof a === "number" ? b : a?.top;
  // A browser clamps at the start (a row centred near the top asks for a negative offset).
  if (top !== undefined) this.scrollTop = Math.max(0, top);
  // A browser reports the move with a scroll event, which is how the list learns its offset.
  queueMicrotask(() => this.dispatchEvent(new Event("scroll")));
} as Element["scrollTo"];
Element.prototype.scrollBy = function scrollBy(this: Element, a?: ScrollToOptions | number, b?: number) {
  const by = typeof a === "number" ? b : a?.top;
  if (by !== undefined) this.scrollTop = Math.max(0, this.scrollTop + by);
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
