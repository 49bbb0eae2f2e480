// Mounts the real app frame on a given hash, against a mock backend and a no-retry query client.
import { QueryClient } from "@tanstack/react-query";
import { render } from "@testing-library/react";
import { App } from "../app/App";
import { BackendProvider } from "../backend";
import type { Backend } from "../backend/types";

export function renderApp(backend: Backend, hash = "") {
  window.history.replaceState(null, "", `/${hash}`);
  const client = new QueryClient({
    defaultOptions: { queries: { retry: false, staleTime: 0 } },
  });
  return render(
    <BackendProvider backend={backend} queryClient={client}>
      <App />
    </BackendProvider>,
  );
}

/** Navigates the way a typed URL or history move does: the hash changes, then hashchange fires. */
export function goTo(hash: string) {
  window.location.hash = hash;
}
