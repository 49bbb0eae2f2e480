// Entry point: picks the engine transport and mounts the app.
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./app/App";
import { BackendProvider, detectBackend } from "./backend";
import "./styles.css";

const root = document.getElementById("root");
if (root) {
  createRoot(root).render(
    <StrictMode>
      <BackendProvider backend={detectBackend()}>
        <App />
      </BackendProvider>
    </StrictMode>,
  );
}
