// Per-test reset: unmount React trees and return the address bar and storage to a blank state.
import { cleanup, configure } from "@testing-library/react";
import { afterEach } from "vitest";

// Grammars load through dynamic imports, which a busy machine can take over a second to serve.
configure({ asyncUtilTimeout: 5000 });

afterEach(() => {
  cleanup();
  window.history.replaceState(null, "", "/");
  window.sessionStorage.clear();
});
